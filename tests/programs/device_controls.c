/* Controls of devices and descriptors that only some programs use: a
 * pseudo-terminal's packet mode, exclusive mode, line discipline and peer
 * (a new descriptor), a file's write-lifetime hint, the process's
 * speculation control. Replay serves each from the log. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#ifndef TIOCGPTPEER
#define TIOCGPTPEER 0x5441
#endif
#ifndef F_GET_RW_HINT
#define F_GET_RW_HINT 1035
#define F_SET_RW_HINT 1036
#endif

int main(void)
{
    int master = posix_openpt(O_RDWR | O_NOCTTY);
    if (master < 0 || grantpt(master) != 0 || unlockpt(master) != 0) {
        printf("no pseudo-terminal here\n");
        return 77;
    }
    int on = 1, packet = -1, disc = -1;
    int set_packet = ioctl(master, TIOCPKT, &on);
    ioctl(master, TIOCGPKT, &packet);
    int peer = ioctl(master, TIOCGPTPEER, O_RDWR | O_NOCTTY);
    int excl = peer >= 0 ? ioctl(peer, TIOCEXCL) : -1;
    int nxcl = peer >= 0 ? ioctl(peer, TIOCNXCL) : -1;
    int getd = peer >= 0 ? ioctl(peer, TIOCGETD, &disc) : -1;
    printf("packet mode %d (%d), peer %s, exclusive %d/%d, line discipline %d (%d)\n", packet, set_packet,
           peer >= 0 ? "opened" : "refused", excl, nxcl, disc, getd);

    /* (mkstemp's name would come from getrandom, which glibc calls a
     * varying number of times.) */
    int file = memfd_create("device-controls", 0);
    if (file < 0)
        return 1;
    uint64_t hint = 2 /* RWH_WRITE_LIFE_SHORT */, got = 0;
    int set_hint = fcntl(file, F_SET_RW_HINT, &hint);
    int get_hint = fcntl(file, F_GET_RW_HINT, &got);
    printf("write hint set %d, read back %d: %llu\n", set_hint, get_hint, (unsigned long long)got);

    int spec = prctl(PR_GET_SPECULATION_CTRL, PR_SPEC_STORE_BYPASS, 0, 0, 0);
    printf("speculation control %s\n", spec >= 0 ? "answered" : "refused");
    return 0;
}
