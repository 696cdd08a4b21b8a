/* setsockopt(IPT_SO_SET_REPLACE) writes the counters of the table it
 * replaces into user memory, through a pointer inside the struct it is
 * given: the program puts the "filter" table back as it is and looks at
 * what the kernel wrote. Needs CAP_NET_ADMIN and iptables' tables in the
 * kernel (exit 77). */
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/netfilter_ipv4/ip_tables.h>

int main(void)
{
    int s = socket(AF_INET, SOCK_RAW, IPPROTO_RAW);
    if (s < 0) {
        printf("no raw socket: %s\n", strerror(errno));
        return 77;
    }
    struct ipt_getinfo info;
    memset(&info, 0, sizeof info);
    strcpy(info.name, "filter");
    socklen_t len = sizeof info;
    if (getsockopt(s, SOL_IP, IPT_SO_GET_INFO, &info, &len) != 0) {
        printf("no iptables filter table: %s\n", strerror(errno));
        return 77;
    }
    socklen_t entries_len = sizeof(struct ipt_get_entries) + info.size;
    struct ipt_get_entries* entries = calloc(1, entries_len);
    strcpy(entries->name, "filter");
    entries->size = info.size;
    if (getsockopt(s, SOL_IP, IPT_SO_GET_ENTRIES, entries, &entries_len) != 0)
        return 1;
    size_t replace_len = sizeof(struct ipt_replace) + info.size;
    struct ipt_replace* replace = calloc(1, replace_len);
    strcpy(replace->name, "filter");
    replace->valid_hooks = info.valid_hooks;
    replace->num_entries = info.num_entries;
    replace->size = info.size;
    memcpy(replace->hook_entry, info.hook_entry, sizeof replace->hook_entry);
    memcpy(replace->underflow, info.underflow, sizeof replace->underflow);
    replace->num_counters = info.num_entries;
    struct xt_counters* counters = malloc(sizeof *counters * info.num_entries);
    memset(counters, 0xff, sizeof *counters * info.num_entries);
    replace->counters = counters;
    memcpy(replace->entries, entries->entrytable, info.size);
    if (setsockopt(s, SOL_IP, IPT_SO_SET_REPLACE, replace, (socklen_t)replace_len) != 0) {
        printf("IPT_SO_SET_REPLACE: %s\n", strerror(errno));
        return 77;
    }
    unsigned written = 0;
    for (unsigned i = 0; i < info.num_entries; i++)
        written += counters[i].pcnt != ~0ull || counters[i].bcnt != ~0ull;
    printf("%u entries put back, %u counters written by the kernel\n", info.num_entries, written);
    return 0;
}
