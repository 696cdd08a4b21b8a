// watch: has_cycle(g)
//
// A DAG grows one edge at a time: add_edge is called for nearly every step
// and only ever adds an edge from a node to a higher-numbered one. Every
// 1,000 steps a rarely called add_shortcut gives one node a shortcut edge,
// normally forwards too; once, late in the run, it points back to a node
// that already has an edge into it, closing a cycle. The watch has to find
// that one rare call among millions of add_edge calls; has_cycle walks the
// whole graph at each probe.
//
//   watch_rare_call N    N scales the graph and the number of steps (0: tiny)
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_OUT 16
#define RARE_EVERY 1000

struct node {
    int out[MAX_OUT]; // unused slots hold -1, so a slot counted before it is written is skipped
    int n_out;
    int shortcut; // -1: none
};

struct graph {
    int n_nodes;
    struct node *nodes;
    // has_cycle's working space, allocated up front: gdb calls it at any
    // instruction, possibly inside malloc.
    unsigned char *color;
    int *stack, *next_edge;
};

struct graph *g;

static unsigned long long lcg_state = 12345;

static unsigned lcg(void)
{
    lcg_state = lcg_state * 6364136223846793005ull + 1442695040888963407ull;
    return (unsigned)(lcg_state >> 33);
}

static long add_edge(struct graph *gr, int from, int to)
{
    struct node *a = &gr->nodes[from];
    for (int i = 0; i < a->n_out; i++)
        if (a->out[i] == to)
            return 0;
    if (a->n_out == MAX_OUT)
        return 0;
    a->out[a->n_out++] = to;
    return 1;
}

// The rarely called one; once, its caller passes an edge that goes back.
static int add_shortcut(struct graph *gr, int from, int to)
{
    struct node *a = &gr->nodes[from];
    if (a->shortcut >= 0)
        return 0;
    a->shortcut = to; /* CULPRIT */
    return 1;
}

// Edge i of node v, the shortcut last: -1 for none (an empty slot, no
// shortcut), -2 past the end.
static int edge(const struct node *v, int i)
{
    if (i < v->n_out)
        return v->out[i];
    return i == v->n_out ? v->shortcut : -2;
}

// Iterative depth-first search: 0 white, 1 on the stack, 2 done.
int has_cycle(struct graph *gr)
{
    if (!gr)
        return 0;
    memset(gr->color, 0, gr->n_nodes);
    for (int root = 0; root < gr->n_nodes; root++) {
        if (gr->color[root])
            continue;
        int depth = 0;
        gr->stack[0] = root;
        gr->next_edge[0] = 0;
        gr->color[root] = 1;
        while (depth >= 0) {
            int v = gr->stack[depth];
            int e = edge(&gr->nodes[v], gr->next_edge[depth]++);
            if (e == -2) {
                gr->color[v] = 2;
                depth--;
            } else if (e >= 0) {
                if (gr->color[e] == 1)
                    return 1;
                if (gr->color[e] == 0) {
                    gr->color[e] = 1;
                    depth++;
                    gr->stack[depth] = e;
                    gr->next_edge[depth] = 0;
                }
            }
        }
    }
    return 0;
}

int main(int argc, char **argv)
{
    long scale = argc > 1 ? atol(argv[1]) : 1;
    int n_nodes = scale ? 50000 * (int)scale : 5000;
    long steps = scale ? 3000000 * scale : 300000;
    long bad_step = steps / 100 * 85 / RARE_EVERY * RARE_EVERY;

    static struct graph gr;
    gr.n_nodes = n_nodes;
    gr.nodes = malloc(sizeof *gr.nodes * n_nodes);
    memset(gr.nodes, 0xff, sizeof *gr.nodes * n_nodes);
    for (int v = 0; v < n_nodes; v++)
        gr.nodes[v].n_out = 0;
    gr.color = malloc(n_nodes);
    gr.stack = malloc(sizeof *gr.stack * n_nodes);
    gr.next_edge = malloc(sizeof *gr.next_edge * n_nodes);
    g = &gr;

    long added = 0, shortcuts = 0;
    int rare_node = 0;
    for (long step = 1; step <= steps; step++) {
        // Edges start near a point that sweeps the graph once: the work per
        // step stays the same whatever the graph's size.
        long sweep = step * (n_nodes - 300) / steps;
        int from = (int)sweep + (int)(lcg() % 256);
        int span = 1 + (int)(lcg() % 64);
        int to = from + span < n_nodes ? from + span : n_nodes - 1;
        added += add_edge(&gr, from, to);
        if (step % RARE_EVERY)
            continue;
        rare_node = (rare_node + 7919) % n_nodes;
        if (step == bad_step) {
            // Back along an edge that already exists: u -> w, then w -> u.
            int u = rare_node;
            while (gr.nodes[u].n_out == 0 || gr.nodes[gr.nodes[u].out[0]].shortcut >= 0)
                u = (u + 1) % n_nodes;
            shortcuts += add_shortcut(&gr, gr.nodes[u].out[0], u);
        } else if (rare_node + 100 < n_nodes) {
            shortcuts += add_shortcut(&gr, rare_node, rare_node + 100);
        }
    }
    printf("%d nodes, %ld edges, %ld shortcuts, cycle: %d\n", n_nodes, added, shortcuts, has_cycle(&gr));
    return 0;
}
