/* A file changed through descriptors while it is mapped: the mappings show
 * each change, as they share the file's pages. Two mappings in one process
 * (one writable, one read-only), a private mapping of a file that grows
 * under it, and a child that writes the file its parent maps. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

static int make_file(const char* name, long size)
{
    int fd = open(name, O_RDWR | O_CREAT | O_TRUNC, 0600);
    unlink(name);
    ftruncate(fd, size);
    return fd;
}

int main(void)
{
    long page = sysconf(_SC_PAGESIZE);
    int fd = make_file("mapped-a", 100);
    char* ro = mmap(NULL, 2 * page, PROT_READ, MAP_SHARED, fd, 0);
    char* rw = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    pwrite(fd, "pwrite", 6, 10);
    write(fd, "write", 5); /* at the file position, 0 */
    rw[50] = 'M';          /* through one mapping, seen in the other */
    printf("shared: %.6s %.5s %c\n", ro + 10, ro, ro[50]);
    ftruncate(fd, 2 * page); /* the second page exists now */
    pwrite(fd, "grown", 5, page + 1);
    printf("grown: %.5s\n", ro + page + 1);
    int changed = ro[page + 1] == 'g'; /* a breakpoint here sees the file grown */

    int fd2 = make_file("mapped-b", 0);
    char* priv = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd2, 0);
    ftruncate(fd2, page); /* a private mapping of a file that grows under it */
    pwrite(fd2, "under", 5, 0);
    printf("private: %.5s\n", priv);
    priv[0] = 'U'; /* its own copy from here on */
    pwrite(fd2, "again", 5, 0);
    printf("private after its own write: %.5s\n", priv);

    if (fork() == 0) {
        munmap(ro, 2 * page);
        pwrite(fd, "child", 5, 20);
        _exit(0);
    }
    wait(NULL);
    printf("from the child: %.5s, changed %d\n", ro + 20, changed);
    return 0;
}
