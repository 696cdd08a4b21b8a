/* FS_IOC_FIEMAP: the kernel writes the struct fiemap and, after it, as
 * many extents as it found (fm_mapped_extents), more than the ioctl's
 * number says. What the program prints of them must come back in replay.
 * (Physical addresses differ from one file to the next: not printed.) */
#include <fcntl.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

int main(void)
{
    char name[] = "extents.dat";
    int fd = open(name, O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (fd < 0)
        return 1;
    static char block[8192];
    memset(block, 'x', sizeof block);
    if (write(fd, block, sizeof block) != (ssize_t)sizeof block || fsync(fd) != 0)
        return 1;
    static char buf[4096];
    struct fiemap* fm = (struct fiemap*)buf;
    fm->fm_start = 0;
    fm->fm_length = FIEMAP_MAX_OFFSET;
    fm->fm_flags = FIEMAP_FLAG_SYNC;
    fm->fm_extent_count = (sizeof buf - sizeof *fm) / sizeof(struct fiemap_extent);
    if (ioctl(fd, FS_IOC_FIEMAP, fm) != 0) {
        printf("no extents here\n");
    } else {
        unsigned long long bytes = 0;
        for (unsigned i = 0; i < fm->fm_mapped_extents; i++)
            bytes += fm->fm_extents[i].fe_length;
        printf("%u extents, %llu bytes, the last one %s\n", fm->fm_mapped_extents, bytes,
               fm->fm_mapped_extents && (fm->fm_extents[fm->fm_mapped_extents - 1].fe_flags & FIEMAP_EXTENT_LAST)
                   ? "marked last"
                   : "not marked");
    }
    close(fd);
    unlink(name);
    return 0;
}
