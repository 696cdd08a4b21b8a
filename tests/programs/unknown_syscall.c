/* Syscalls whose effects rewind's table does not describe: an ioprio_get
 * (not in the table) and an undocumented terminal ioctl. */
#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(void)
{
    long prio = syscall(SYS_ioprio_get, 1, 0);
    int unknown_ioctl = ioctl(0, 0x5499, 0);
    printf("ioprio_get %s, ioctl 0x5499 %s\n", prio >= 0 ? "ok" : "failed", unknown_ioctl == 0 ? "ok" : "failed");
    return 0;
}
