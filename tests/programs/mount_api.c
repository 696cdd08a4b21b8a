/* The mount API: a tmpfs set up through a file-system descriptor (fsopen,
 * fsconfig, fsmount), attached with move_mount in a mount namespace of its
 * own, a file written and read back there, the mount opened again as a
 * tree (open_tree) and its attributes set (mount_setattr). The old bridge
 * ioctl adds a bridge to a network namespace of its own and lists the
 * bridges there (an array it fills). Each call's descriptor or answer is
 * printed: replay must give the same. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/mount.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define SIOCGIFBR_CALL 0x8940
#define BRCTL_GET_BRIDGES 1
#define BRCTL_ADD_BRIDGE 2

int main(void)
{
    if (unshare(CLONE_NEWNS | CLONE_NEWNET) != 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) {
        perror("a mount and network namespace");
        return 77;
    }
    char dir[] = "/tmp/mount_api-XXXXXX";
    if (!mkdtemp(dir))
        return 1;
    int fs = (int)syscall(SYS_fsopen, "tmpfs", FSOPEN_CLOEXEC);
    long configured = syscall(SYS_fsconfig, fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0);
    int mnt = (int)syscall(SYS_fsmount, fs, FSMOUNT_CLOEXEC, 0);
    long moved = syscall(SYS_move_mount, mnt, "", AT_FDCWD, dir, MOVE_MOUNT_F_EMPTY_PATH);
    printf("fsopen %d fsconfig %ld fsmount %d move_mount %ld\n", fs, configured, mnt, moved);

    char path[64];
    snprintf(path, sizeof path, "%s/note", dir);
    int fd = open(path, O_CREAT | O_RDWR, 0600);
    char text[] = "written on a fresh tmpfs", back[sizeof text] = {0};
    long w = write(fd, text, sizeof text), r = pread(fd, back, sizeof back, 0);
    printf("wrote %ld read %ld: %s\n", w, r, back);
    close(fd);

    int tree = (int)syscall(SYS_open_tree, AT_FDCWD, dir, OPEN_TREE_CLOEXEC);
    struct mount_attr attr = {.attr_set = MOUNT_ATTR_NOEXEC};
    long set = syscall(SYS_mount_setattr, tree, "", AT_EMPTY_PATH, &attr, sizeof attr);
    printf("open_tree %d mount_setattr %ld\n", tree, set);

    int sock = socket(AF_INET, SOCK_STREAM, 0);
    unsigned long add[3] = {BRCTL_ADD_BRIDGE, (unsigned long)"rwbr0", 0};
    int added = ioctl(sock, SIOCGIFBR_CALL, add);
    printf("add bridge %s\n", added == 0 ? "ok" : "failed"); /* (without the bridge module) */
    int bridges[64];
    memset(bridges, 0xff, sizeof bridges);
    unsigned long args[3] = {BRCTL_GET_BRIDGES, (unsigned long)bridges, 64};
    int n = ioctl(sock, SIOCGIFBR_CALL, args);
    printf("bridges %d, first slot %s\n", n, n > 0 ? (bridges[0] > 0 ? "an index" : "?") : "untouched");

    close(tree);
    close(mnt);
    close(fs);
    umount2(dir, MNT_DETACH);
    rmdir(dir);
    return 0;
}
