/* Outputs the kernel writes only in part, or only when asked: capget's data
 * for a version-1 header (one 12-byte struct, where the table describes the
 * two a version-3 header gets) ending at an unmapped page, and clone's
 * parent tid, written only with CLONE_PARENT_SETTID, here a pointer into
 * nothing when not asked for and a real one when asked. */
#define _GNU_SOURCE
#include <linux/capability.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static long raw_fork(unsigned long flags, int* ptid)
{
    return syscall(SYS_clone, flags | SIGCHLD, 0, ptid, (int*)0x5, 0);
}

int main(void)
{
    long page = sysconf(_SC_PAGESIZE);
    char* two = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    munmap(two + page, page);
    struct __user_cap_header_struct hdr = {_LINUX_CAPABILITY_VERSION_1, 0};
    struct __user_cap_data_struct* data = (void*)(two + page - sizeof *data);
    int r = syscall(SYS_capget, &hdr, data);
    printf("capget v1: %d, effective %s\n", r, data->effective ? "some" : "none");

    long child = raw_fork(0, (int*)0x3); /* no SETTID: 0x3 is never written */
    if (child == 0)
        _exit(7);
    int status;
    waitpid(child, &status, 0);
    printf("clone without settid: child exited %d\n", WEXITSTATUS(status));

    int ptid = 0;
    child = raw_fork(CLONE_PARENT_SETTID, &ptid);
    if (child == 0)
        _exit(8);
    waitpid(child, &status, 0);
    printf("clone with settid: parent tid %s, child exited %d\n", ptid == child ? "stored" : "WRONG",
           WEXITSTATUS(status));
    return 0;
}
