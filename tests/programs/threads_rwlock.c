/* Two writers and two readers share a table under a read-write lock: the
 * writers move amounts between cells (the total never changes), the
 * readers sum the table and count the states they saw. */
#include <pthread.h>
#include <stdio.h>

#define CELLS 8
#define ROUNDS 1500

static pthread_rwlock_t lock = PTHREAD_RWLOCK_INITIALIZER;
static long cell[CELLS];
static long seen_sum[2], torn[2], writes[2];

static void *writer(void *arg)
{
    long id = (long)arg;
    for (int i = 0; i < ROUNDS; i++) {
        pthread_rwlock_wrlock(&lock);
        int from = (int)((i * 3 + id) % CELLS), to = (int)((i * 5 + id + 1) % CELLS);
        cell[from] -= i % 7 + 1;
        cell[to] += i % 7 + 1;
        writes[id]++;
        pthread_rwlock_unlock(&lock);
    }
    return NULL;
}

static void *reader(void *arg)
{
    long id = (long)arg;
    for (int i = 0; i < ROUNDS; i++) {
        pthread_rwlock_rdlock(&lock);
        long sum = 0;
        for (int j = 0; j < CELLS; j++)
            sum += cell[j] * (j + 1);
        seen_sum[id] += sum;
        if ((cell[0] + cell[1] + cell[2] + cell[3] + cell[4] + cell[5] + cell[6] + cell[7]) != 1000)
            torn[id]++;
        pthread_rwlock_unlock(&lock);
    }
    return NULL;
}

int main(void)
{
    pthread_t t[4];
    cell[0] = 1000;
    for (long i = 0; i < 2; i++) {
        pthread_create(&t[i], NULL, writer, (void *)i);
        pthread_create(&t[2 + i], NULL, reader, (void *)i);
    }
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    printf("writes %ld %ld, readers saw %ld %ld (torn %ld %ld)\n", writes[0], writes[1], seen_sum[0], seen_sum[1],
           torn[0], torn[1]);
    return 0;
}
