// A list that grows and shrinks in a random walk of 200,000 steps without a
// system call, empty again and again, and empty at the end after its last
// pop (LAST-POP): "list_len() == 0" has the same value at the start and at
// the end, and its last change is that pop.
#include <stdlib.h>

struct node {
    struct node* next;
};
static struct node* head;

int list_len(void)
{
    int n = 0;
    for (struct node* p = head; p; p = p->next)
        n++;
    return n;
}

static void push(void)
{
    struct node* n = malloc(sizeof *n);
    n->next = head;
    head = n;
}

static void pop(void)
{
    struct node* n = head;
    head = n->next;
    free(n);
}

int main(void)
{
    unsigned seed = 1;
    int len = 0;
    for (int step = 0; step < 200000; step++) {
        seed = seed * 1103515245u + 12345u;
        if (len > 0 && ((seed >> 16) & 1)) {
            pop();
            len--;
        } else {
            push();
            len++;
        }
    }
    while (len > 1) {
        pop();
        len--;
    }
    pop(); /* LAST-POP */
    return 0;
}
