// watch: list_corrupt(head)
//
// A linked list of 100,000 nodes per N, each holding a 20-bit value. Passes
// over the list flip low bits of every value, which keeps it in range; on
// one late pass one node's mask carries bit 20 as well, and no later flip
// clears it. Checking the list is costly: list_corrupt walks every node, at
// every probe.
//
//   watch_costly_expr N    N scales the list (0: tiny)
#include <stdio.h>
#include <stdlib.h>

#define VALUE_BITS 20
#define PASSES 300

struct node {
    struct node *next;
    unsigned value;
};

struct node *head;

int list_corrupt(const struct node *n)
{
    for (; n; n = n->next)
        if (n->value >> VALUE_BITS)
            return 1;
    return 0;
}

int main(int argc, char **argv)
{
    long scale = argc > 1 ? atol(argv[1]) : 1;
    long length = scale ? 100000 * scale : 10000;
    unsigned long long x = 99;
    for (long i = 0; i < length; i++) {
        struct node *n = malloc(sizeof *n);
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        n->value = (unsigned)(x >> 44);
        n->next = head;
        head = n; // the node is complete before it is linked
    }
    int bad_pass = PASSES * 85 / 100;
    long bad_node = length / 3;
    unsigned long sum = 0;
    for (int pass = 0; pass < PASSES; pass++) {
        long i = 0;
        for (struct node *n = head; n; n = n->next, i++) {
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            unsigned mask = (unsigned)(x >> 44);
            if (pass == bad_pass && i == bad_node)
                mask |= 1u << VALUE_BITS; // one bit too wide, once
            n->value ^= mask; /* CULPRIT */
            sum += n->value;
        }
    }
    printf("%ld nodes, %d passes: %lx, corrupt %d\n", length, PASSES, sum, list_corrupt(head));
    return 0;
}
