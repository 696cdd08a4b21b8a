// watch: entry_torn(watched_key)
//
// A hash table of 125,000 entries per N (a million at 8), chained, each
// entry with a kilobyte of payload: about a gigabyte at N = 8. Updates
// pick random keys and write a new value, its check and part of the
// payload; entries are deleted and inserted again. On one late update of
// one key, the value is written and its check is not, and no later update
// touches that key. The expression looks one key up: it reads a few pages
// of a large heap that the program keeps writing everywhere.
//
//   watch_big_hash N    N scales the table (0: tiny)
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PAYLOAD 1000

struct entry {
    struct entry* next;
    uint64_t key;
    uint64_t value;
    uint64_t check;
    char payload[PAYLOAD];
};

struct entry** buckets;
uint64_t bucket_count;
uint64_t watched_key;

static uint64_t check_of(uint64_t key, uint64_t value)
{
    return (key * 0x9e3779b97f4a7c15ull) ^ value;
}

static uint64_t bucket_of(uint64_t key)
{
    return (key * 0xff51afd7ed558ccdull >> 17) % bucket_count;
}

struct entry* lookup(uint64_t key)
{
    for (struct entry* e = buckets[bucket_of(key)]; e; e = e->next)
        if (e->key == key)
            return e;
    return NULL;
}

int entry_torn(uint64_t key)
{
    struct entry* e = lookup(key);
    return e && e->check != check_of(key, e->value);
}

static uint64_t x = 4242;

static uint64_t next_random(void)
{
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    return x >> 17;
}

static void insert(uint64_t key, uint64_t value)
{
    struct entry* e = malloc(sizeof *e);
    e->key = key;
    e->value = value;
    e->check = check_of(key, value);
    memset(e->payload, (int)value, sizeof e->payload);
    uint64_t b = bucket_of(key);
    e->next = buckets[b];
    buckets[b] = e; // the entry is complete before it is linked
}

static void delete (uint64_t key)
{
    for (struct entry** p = &buckets[bucket_of(key)]; *p; p = &(*p)->next)
        if ((*p)->key == key) {
            struct entry* gone = *p;
            *p = gone->next;
            free(gone);
            return;
        }
}

int main(int argc, char** argv)
{
    long scale = argc > 1 ? atol(argv[1]) : 1;
    uint64_t entries = scale ? 125000 * scale : 4000;
    bucket_count = entries / 2;
    buckets = calloc(bucket_count, sizeof *buckets);
    for (uint64_t k = 0; k < entries; k++)
        insert(k, next_random());
    watched_key = entries / 3;
    uint64_t updates = 6 * entries;
    uint64_t bad_update = updates * 85 / 100;
    uint64_t sum = 0;
    for (uint64_t u = 0; u < updates; u++) {
        uint64_t key = next_random() % entries;
        if (key == watched_key && u != bad_update)
            continue; // the watched key changes once, late
        if (u == bad_update)
            key = watched_key;
        if (key != watched_key && next_random() % 8 == 0) {
            delete (key);
            insert(key, next_random());
            continue;
        }
        struct entry* e = lookup(key);
        uint64_t value = next_random();
        e->value = value; /* CULPRIT */
        if (u != bad_update)
            e->check = check_of(key, value);
        memset(e->payload + value % (PAYLOAD - 64), (int)value, 64);
        sum += value;
    }
    printf("%llu entries, %llu updates: %llx, torn %d\n", (unsigned long long)entries, (unsigned long long)updates,
           (unsigned long long)sum, entry_torn(watched_key));
    return 0;
}
