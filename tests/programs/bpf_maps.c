/* BPF maps and a verifier's log. What a lookup writes is as long as the
 * map's value, which the call does not carry (a per-CPU map's holds one
 * slot per possible CPU): the recorder finds it from the map's descriptor.
 * Replay serves every result and output from the trace; no map exists. */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/bpf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static long bpf(int cmd, union bpf_attr* attr)
{
    return syscall(SYS_bpf, cmd, attr, sizeof *attr);
}

static int create(uint32_t type, uint32_t key, uint32_t value, uint32_t entries)
{
    union bpf_attr a;
    memset(&a, 0, sizeof a);
    a.map_type = type;
    a.key_size = key;
    a.value_size = value;
    a.max_entries = entries;
    return (int)bpf(BPF_MAP_CREATE, &a);
}

static long elem(int cmd, int fd, const void* key, void* value)
{
    union bpf_attr a;
    memset(&a, 0, sizeof a);
    a.map_fd = (uint32_t)fd;
    a.key = (uintptr_t)key;
    a.value = (uintptr_t)value;
    return bpf(cmd, &a);
}

static int compare(const void* a, const void* b)
{
    return (int)(*(const uint32_t*)a - *(const uint32_t*)b);
}

int main(void)
{
    int hash = create(BPF_MAP_TYPE_HASH, 4, 8, 8);
    if (hash < 0) {
        printf("SKIP: no BPF maps here: %s\n", strerror(errno));
        return 77;
    }
    uint32_t keys[3] = {7, 3, 11};
    for (int i = 0; i < 3; i++) {
        uint64_t value = keys[i] * 100;
        elem(BPF_MAP_UPDATE_ELEM, hash, &keys[i], &value);
    }
    uint64_t value[2] = {0, 0xdeadbeef};
    long r = elem(BPF_MAP_LOOKUP_ELEM, hash, &keys[0], value);
    printf("lookup 7: %ld, %llu (and %#llx after it)\n", r, (unsigned long long)value[0], (unsigned long long)value[1]);
    uint32_t missing = 5;
    r = elem(BPF_MAP_LOOKUP_ELEM, hash, &missing, value);
    printf("lookup 5: %ld (%s)\n", r, r < 0 ? strerror(errno) : "?");
    // Every key, in the map's (hashed) order; printed sorted.
    uint32_t walked[8], n = 0, next;
    for (const uint32_t* at = NULL; n < 8 && elem(BPF_MAP_GET_NEXT_KEY, hash, at, &next) == 0; at = &walked[n++])
        walked[n] = next;
    qsort(walked, n, sizeof walked[0], compare);
    printf("keys:");
    for (uint32_t i = 0; i < n; i++)
        printf(" %u", walked[i]);
    printf("\n");
    elem(BPF_MAP_DELETE_ELEM, hash, &keys[1], NULL);
    r = elem(BPF_MAP_LOOKUP_ELEM, hash, &keys[1], value);
    printf("lookup 3 after delete: %ld\n", r);

    // A per-CPU array of 4-byte values: 8 bytes for each possible CPU.
    int percpu = create(BPF_MAP_TYPE_PERCPU_ARRAY, 4, 4, 2);
    long cpus = sysconf(_SC_NPROCESSORS_CONF);
    uint64_t* slots = calloc((size_t)cpus + 64, 8);
    for (long i = 0; i < cpus + 64; i++)
        slots[i] = 1000 + (uint64_t)i;
    uint32_t zero = 0;
    elem(BPF_MAP_UPDATE_ELEM, percpu, &zero, slots);
    memset(slots, 0xee, ((size_t)cpus + 64) * 8);
    r = elem(BPF_MAP_LOOKUP_ELEM, percpu, &zero, slots);
    uint64_t sum = 0;
    for (long i = 0; i < cpus; i++)
        sum += (uint32_t)slots[i];
    printf("per-CPU lookup: %ld, the slots of %ld CPUs sum to %llu\n", r, cpus,
           (unsigned long long)(sum - (uint64_t)cpus * (cpus - 1) / 2));

    // What the kernel says of the map.
    struct bpf_map_info info;
    memset(&info, 0, sizeof info);
    union bpf_attr a;
    memset(&a, 0, sizeof a);
    a.info.bpf_fd = (uint32_t)hash;
    a.info.info_len = sizeof info;
    a.info.info = (uintptr_t)&info;
    r = bpf(BPF_OBJ_GET_INFO_BY_FD, &a);
    printf("info: %ld, type %u, key %u, value %u, %u entries\n", r, info.type, info.key_size, info.value_size,
           info.max_entries);

    // A socket filter that accepts nothing, with the verifier's log.
    struct bpf_insn insns[2] = {
        {.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0},
        {.code = BPF_JMP | BPF_EXIT},
    };
    static char log[4096];
    memset(&a, 0, sizeof a);
    a.prog_type = BPF_PROG_TYPE_SOCKET_FILTER;
    a.insn_cnt = 2;
    a.insns = (uintptr_t)insns;
    a.license = (uintptr_t) "GPL";
    a.log_level = 1;
    a.log_size = sizeof log;
    a.log_buf = (uintptr_t)log;
    r = bpf(BPF_PROG_LOAD, &a);
    printf("prog load: %s, log of %zu bytes\n", r >= 0 ? "loaded" : strerror(errno), strlen(log));
    return 0;
}
