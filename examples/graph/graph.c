/* The reverse-watchpoint workload of the FReD papers: build a large DAG
 * edge by edge. One insertion, at a point the program picks with
 * getrandom(), closes a cycle; the program keeps going and only notices at
 * the end, when its consistency check fails. Which add_edge() did it?
 *
 *   graph [--scale S] [--log FILE] [--assert-every K]
 *
 * At scale 1: 34,546 nodes and 421,578 edges. --log FILE records the
 * culprit edge (for tests that check a debugger's answer). --assert-every K
 * checks has_cycle() after every K edges and stops at the first failure: the
 * way to find the culprit without a reverse debugger (K = 1 names it).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

struct node {
    int *out;   /* successors */
    int n_out;
    int cap;
};

struct graph {
    int n_nodes;
    long n_edges;
    struct node *nodes;
};

struct graph *g; /* global, so a debugger can name it: has_cycle(g) */

static struct graph *graph_new(int n)
{
    struct graph *gr = calloc(1, sizeof *gr);
    gr->n_nodes = n;
    gr->nodes = calloc((size_t)n, sizeof *gr->nodes);
    return gr;
}

void add_edge(struct graph *gr, int from, int to)
{
    struct node *a = &gr->nodes[from];
    if (a->n_out == a->cap) {
        a->cap = a->cap ? a->cap * 2 : 4;
        a->out = realloc(a->out, (size_t)a->cap * sizeof *a->out);
    }
    a->out[a->n_out++] = to;
    gr->n_edges++;
}

/* 1 if the graph has a directed cycle (iterative DFS with colours). */
int has_cycle(struct graph *gr)
{
    enum { WHITE, GREY, BLACK };
    int n = gr->n_nodes, found = 0;
    unsigned char *colour = calloc((size_t)n, 1);
    int *stack = malloc((size_t)n * sizeof *stack);
    int *next = calloc((size_t)n, sizeof *next);
    for (int root = 0; root < n && !found; root++) {
        if (colour[root] != WHITE)
            continue;
        int top = 0;
        stack[top++] = root;
        colour[root] = GREY;
        while (top > 0 && !found) {
            int v = stack[top - 1];
            if (next[v] < gr->nodes[v].n_out) {
                int w = gr->nodes[v].out[next[v]++];
                if (colour[w] == GREY)
                    found = 1;
                else if (colour[w] == WHITE) {
                    colour[w] = GREY;
                    stack[top++] = w;
                }
            } else {
                colour[v] = BLACK;
                top--;
            }
        }
    }
    free(colour);
    free(stack);
    free(next);
    return found;
}

/* A small deterministic generator, so every run builds the same DAG. */
static unsigned long long rng_state = 0x9e3779b97f4a7c15ull;
static unsigned long long rng(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* Follows successors from `start` for a few steps: the end of a path. */
static int walk_forward(struct graph *gr, int start)
{
    int v = start;
    for (int step = 0; step < 6 && gr->nodes[v].n_out > 0; step++)
        v = gr->nodes[v].out[rng() % (unsigned)gr->nodes[v].n_out];
    return v;
}

int main(int argc, char **argv)
{
    int scale = 1;
    const char *log_path = NULL, *late_log_path = NULL;
    long assert_every = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--scale") && i + 1 < argc)
            scale = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--log") && i + 1 < argc)
            log_path = argv[++i];
        else if (!strcmp(argv[i], "--log-at-exit") && i + 1 < argc)
            late_log_path = argv[++i];
        else if (!strcmp(argv[i], "--assert-every") && i + 1 < argc)
            assert_every = atol(argv[++i]);
        else {
            fprintf(stderr, "usage: %s [--scale S] [--log FILE] [--log-at-exit FILE] [--assert-every K]\n", argv[0]);
            return 2;
        }
    }
    if (scale < 1)
        scale = 1;
    int n = 34546 * scale;
    long total = 421578L * scale;

    unsigned int pick;
    if (getrandom(&pick, sizeof pick, 0) != sizeof pick)
        return 2;
    /* Somewhere in the middle 80%, so there is history before and after. */
    long culprit = total / 10 + (long)(pick % (unsigned)(total * 8 / 10));

    g = graph_new(n);
    int culprit_from = -1, culprit_to = -1;
    for (long i = 0; i < total; i++) {
        if (i == culprit) {
            /* A back edge from the end of a path to its start closes a cycle. */
            int from, to;
            do {
                to = (int)(rng() % (unsigned)n);
                from = walk_forward(g, to);
            } while (from == to);
            add_edge(g, from, to);
            culprit_from = from;
            culprit_to = to;
            if (log_path) {
                FILE *f = fopen(log_path, "w");
                if (f) {
                    fprintf(f, "culprit edge %ld: %d -> %d\n", i, from, to);
                    fclose(f);
                }
            }
            if (assert_every > 0 && (i + 1) % assert_every == 0 && has_cycle(g)) {
                fprintf(stderr, "assertion failed after edge %ld: the graph has a cycle\n", i);
                return 1;
            }
            continue;
        }
        /* Forward edges (lower index to higher) keep the graph acyclic. */
        int a = (int)(rng() % (unsigned)n), b = (int)(rng() % (unsigned)n);
        if (a == b)
            b = (b + 1) % n;
        add_edge(g, a < b ? a : b, a < b ? b : a);
        if (assert_every > 0 && (i + 1) % assert_every == 0 && has_cycle(g)) {
            fprintf(stderr, "assertion failed after edge %ld: the graph has a cycle\n", i);
            return 1;
        }
    }

    if (late_log_path) {
        /* Written only now: no event of the program follows the culprit closely. */
        FILE *f = fopen(late_log_path, "w");
        if (f) {
            fprintf(f, "culprit edge %ld: %d -> %d\n", culprit, culprit_from, culprit_to);
            fclose(f);
        }
    }
    printf("built a graph of %d nodes and %ld edges\n", g->n_nodes, g->n_edges);
    if (has_cycle(g)) {
        fprintf(stderr, "error: the graph has a cycle; it should be a DAG\n");
        return 1;
    }
    printf("the graph is acyclic\n");
    return 0;
}
