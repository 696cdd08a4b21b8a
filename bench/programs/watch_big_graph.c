// watch: graph_broken()
//
// A directed graph of 140,000 nodes and about 1.7 million edges per N, in
// adjacency arrays. Each round changes the weight of every edge and points
// one edge in a hundred at another node; on one late round one edge is
// pointed one node past the end, and no later round touches that edge
// again. The expression walks the whole graph at every probe, and every
// round writes all of its memory.
//
//   watch_big_graph N    N scales the graph (0: tiny)
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define ROUNDS 24

struct edge {
    uint32_t to;
    uint32_t weight;
};

struct node {
    struct edge* edges;
    uint32_t degree;
    uint32_t mark;
};

struct node* nodes;
long node_count;

int graph_broken(void)
{
    for (long i = 0; i < node_count; i++)
        for (uint32_t k = 0; k < nodes[i].degree; k++)
            if (nodes[i].edges[k].to >= node_count)
                return 1;
    return 0;
}

static uint64_t x = 12345;

static uint32_t next_random(void)
{
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(x >> 33);
}

int main(int argc, char** argv)
{
    long scale = argc > 1 ? atol(argv[1]) : 1;
    node_count = scale ? 140000 * scale : 5000;
    nodes = calloc(node_count, sizeof *nodes);
    long edge_count = 0;
    for (long i = 0; i < node_count; i++) {
        uint32_t degree = 4 + next_random() % 17;
        nodes[i].edges = malloc(degree * sizeof(struct edge));
        for (uint32_t k = 0; k < degree; k++)
            nodes[i].edges[k] = (struct edge){next_random() % node_count, next_random() % 1000};
        nodes[i].degree = degree; // the node is complete before its edges count
        edge_count += degree;
    }
    int bad_round = ROUNDS * 85 / 100;
    long bad_node = node_count / 3;
    uint64_t sum = 0;
    for (int round = 0; round < ROUNDS; round++) {
        for (long i = 0; i < node_count; i++) {
            struct node* n = &nodes[i];
            for (uint32_t k = 0; k < n->degree; k++) {
                struct edge* e = &n->edges[k];
                e->weight = (e->weight * 7 + round) % 1000;
                if (i == bad_node && k == 0) {
                    if (round == bad_round)
                        e->to = node_count; /* CULPRIT */
                } else if (next_random() % 100 == 0) {
                    e->to = (e->to + next_random()) % node_count;
                }
                sum += e->weight + e->to;
            }
            n->mark = round;
        }
    }
    printf("%ld nodes, %ld edges, %d rounds: %llx, broken %d\n", node_count, edge_count, ROUNDS,
           (unsigned long long)sum, graph_broken());
    return 0;
}
