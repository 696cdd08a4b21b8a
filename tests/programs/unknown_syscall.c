/* Syscalls whose effects rewind's table does not describe: a number no
 * kernel defines (600) and a terminal ioctl no driver defines. */
#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(void)
{
    long none = syscall(600, 1, 2, 3);
    int unknown_ioctl = ioctl(0, 0x5499, 0);
    printf("syscall 600 %s, ioctl 0x5499 %s\n", none == 0 ? "ok" : "failed", unknown_ioctl == 0 ? "ok" : "failed");
    return 0;
}
