// A linked list whose length crosses a bound several times: up past it,
// down below, up past it again. A reverse watch of `list_len(head) > 300`
// from the end may land on any crossing into "long": each is a real change.
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

struct item {
    struct item *next;
    long value;
};

struct item *head;

long list_len(struct item *p)
{
    long n = 0;
    for (; p; p = p->next)
        n++;
    return n;
}

static void push(long v)
{
    struct item *it = malloc(sizeof *it);
    it->value = v;
    it->next = head;
    head = it; // push-line
}

static void pop(void)
{
    struct item *it = head;
    head = it->next; // pop-line
    free(it);
}

int main(void)
{
    long phases[] = {400, -250, 300, -100, 50}; // lengths: 400, 150, 450, 350, 400
    long v = 0;
    for (size_t p = 0; p < sizeof phases / sizeof phases[0]; p++) {
        long n = phases[p];
        for (long i = 0; i < (n > 0 ? n : -n); i++) {
            if (n > 0)
                push(v++);
            else
                pop();
        }
        printf("phase %zu: length %ld\n", p, list_len(head));
        if (getppid() < 0)
            return 1;
    }
    return 0;
}
