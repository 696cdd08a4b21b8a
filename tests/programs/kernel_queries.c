/* Calls whose answers come from the kernel's state and are written into
 * the program's memory: mincore (which pages are resident), sysfs (the
 * filesystem types the kernel knows), sendmmsg (how much of each message
 * went out, written back into each header). */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(void)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    unsigned char* area = mmap(NULL, 8 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (area == MAP_FAILED)
        return 1;
    area[0] = area[3 * page] = 1; /* two pages touched */
    unsigned char resident[8];
    memset(resident, 0xee, sizeof resident);
    if (mincore(area, 8 * page, resident) != 0)
        return 2;
    printf("resident pages:");
    for (int i = 0; i < 8; i++)
        printf(" %d", resident[i] & 1);
    printf("\n");

    long types = syscall(SYS_sysfs, 3);
    char name[256];
    memset(name, 0, sizeof name);
    long named = syscall(SYS_sysfs, 2, 0, name);
    long index = named == 0 ? syscall(SYS_sysfs, 1, name) : -1;
    printf("%s filesystem types; the first is named %s, index %ld\n", types > 0 ? "some" : "no",
           name[0] ? "something" : "nothing", index);

    int pair[2];
    if (socketpair(AF_UNIX, SOCK_DGRAM, 0, pair) != 0)
        return 3;
    char one[] = "first", two[] = "second message";
    struct iovec iov[2] = {{one, sizeof one}, {two, sizeof two}};
    struct mmsghdr msgs[2];
    memset(msgs, 0, sizeof msgs);
    msgs[0].msg_hdr.msg_iov = &iov[0];
    msgs[0].msg_hdr.msg_iovlen = 1;
    msgs[1].msg_hdr.msg_iov = &iov[1];
    msgs[1].msg_hdr.msg_iovlen = 1;
    int sent = sendmmsg(pair[0], msgs, 2, 0);
    printf("sent %d messages of %u and %u bytes\n", sent, msgs[0].msg_len, msgs[1].msg_len);
    return 0;
}
