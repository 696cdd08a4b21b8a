/* The order violation of pbzip2 (a consumer thread uses the shared queue
 * after the main thread has freed it): main joins only the output thread,
 * then deletes the queue while a consumer is still finishing its last
 * block. The consumer then locks a mutex through a pointer main has set to
 * NULL, and the program dies of SIGSEGV. A reverse watch of
 * "fifo->mut == 0" finds main freeing it. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

struct queue {
    long blocks[64];
    int head, tail, done;
    pthread_mutex_t *mut;
    pthread_cond_t *not_empty;
};

static struct queue *fifo;
static long compressed;
/* The consumer's last block takes as long as main needs to free the queue:
 * an order the test can rely on (on a loaded machine a sleep is not). */
static int freed[2];
/* A consumer that leaves the loop says so: main frees the queue only once
 * the other consumer has left it, so the one that meets the freed queue is
 * always the slow one (without this, the other could still be between its
 * last lock and unlock, a second race of its own). */
static int left[2];

static struct queue *queue_init(void)
{
    struct queue *q = calloc(1, sizeof *q);
    q->mut = malloc(sizeof *q->mut);
    pthread_mutex_init(q->mut, NULL);
    q->not_empty = malloc(sizeof *q->not_empty);
    pthread_cond_init(q->not_empty, NULL);
    return q;
}

static void queue_delete(struct queue *q)
{
    pthread_mutex_destroy(q->mut);
    free(q->mut);
    q->mut = NULL; /* queue-delete-line */
    pthread_cond_destroy(q->not_empty);
    free(q->not_empty);
    q->not_empty = NULL;
}

static void *consumer(void *arg)
{
    long id = (long)arg;
    for (;;) {
        pthread_mutex_lock(fifo->mut); /* consumer-lock-line */
        while (fifo->head == fifo->tail && !fifo->done)
            pthread_cond_wait(fifo->not_empty, fifo->mut);
        if (fifo->head == fifo->tail) {
            pthread_mutex_unlock(fifo->mut);
            if (write(left[1], "x", 1) != 1)
                return NULL;
            break;
        }
        long block = fifo->blocks[fifo->head++ % 64];
        pthread_mutex_unlock(fifo->mut);
        compressed += block * id;
        if (block == 31) {
            char c; /* a slow last block: main gets ahead */
            if (read(freed[0], &c, 1) != 1)
                return NULL;
        }
    }
    return NULL;
}

static void *output(void *arg)
{
    (void)arg;
    usleep(20 * 1000);
    return NULL;
}

int main(void)
{
    if (pipe(freed) != 0 || pipe(left) != 0)
        return 1;
    fifo = queue_init();
    pthread_t consumers[2], writer;
    for (long i = 0; i < 2; i++)
        pthread_create(&consumers[i], NULL, consumer, (void *)(i + 1));
    pthread_create(&writer, NULL, output, NULL);
    for (long b = 0; b < 32; b++) {
        pthread_mutex_lock(fifo->mut);
        fifo->blocks[fifo->tail++ % 64] = b;
        pthread_cond_signal(fifo->not_empty);
        pthread_mutex_unlock(fifo->mut);
        usleep(1000);
    }
    pthread_mutex_lock(fifo->mut);
    fifo->done = 1;
    pthread_cond_broadcast(fifo->not_empty);
    pthread_mutex_unlock(fifo->mut);
    /* Only the output thread is joined, as in pbzip2. */
    pthread_join(writer, NULL);
    char c;
    if (read(left[0], &c, 1) != 1)
        return 1;
    queue_delete(fifo);
    if (write(freed[1], "x", 1) != 1)
        return 1;
    usleep(400 * 1000);
    printf("compressed %ld\n", compressed);
    return 0;
}
