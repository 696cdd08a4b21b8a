/* TUNSETIFF and TUNGETIFF pass a struct ifreq, though their numbers say
 * an int: the kernel writes the interface's name into it (from the
 * "rwtun%d" pattern here). Needs /dev/net/tun and CAP_NET_ADMIN (exit 77). */
#include <errno.h>
#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

int main(void)
{
    int fd = open("/dev/net/tun", O_RDWR);
    if (fd < 0) {
        printf("no /dev/net/tun: %s\n", strerror(errno));
        return 77;
    }
    struct ifreq ifr;
    memset(&ifr, 0, sizeof ifr);
    ifr.ifr_flags = IFF_TUN | IFF_NO_PI;
    strcpy(ifr.ifr_name, "rwtun%d");
    if (ioctl(fd, TUNSETIFF, &ifr) != 0) {
        printf("TUNSETIFF: %s\n", strerror(errno));
        return 77;
    }
    printf("made %.16s\n", ifr.ifr_name);
    struct ifreq got;
    memset(&got, 0, sizeof got);
    if (ioctl(fd, TUNGETIFF, &got) != 0)
        return 1;
    printf("TUNGETIFF: %.16s, flags %#x\n", got.ifr_name, (unsigned)got.ifr_flags & 0xffff);
    close(fd);
    return 0;
}
