/* Kernel-kept state a program asks about: a key in the process's keyring
 * (its payload read back into a buffer smaller than it, its description),
 * and a Landlock ruleset (the ABI version, a rule, restriction). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/landlock.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#define KEY_SPEC_PROCESS_KEYRING -2
#define KEYCTL_DESCRIBE 6
#define KEYCTL_READ 11

int main(void)
{
    const char payload[] = "a payload longer than the buffer it is read into";
    long key = syscall(SYS_add_key, "user", "rewind-test-key", payload, sizeof payload, KEY_SPEC_PROCESS_KEYRING);
    if (key < 0) {
        printf("no keys here\n");
    } else {
        char small[16], description[128];
        memset(small, 0, sizeof small);
        memset(description, 0, sizeof description);
        long whole = syscall(SYS_keyctl, KEYCTL_READ, key, small, sizeof small);
        long described = syscall(SYS_keyctl, KEYCTL_DESCRIBE, key, description, sizeof description);
        printf("read %ld bytes, the first: %.16s; description of %ld bytes ends in %s\n", whole, small, described,
               strstr(description, "rewind-test-key") ? "its name" : "something else");
    }

    long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
    if (abi < 1) {
        printf("no Landlock here\n");
        return 0;
    }
    struct landlock_ruleset_attr attr = {.handled_access_fs = LANDLOCK_ACCESS_FS_READ_DIR};
    int ruleset = (int)syscall(SYS_landlock_create_ruleset, &attr, sizeof attr, 0);
    struct landlock_path_beneath_attr beneath = {.allowed_access = LANDLOCK_ACCESS_FS_READ_DIR,
                                                 .parent_fd = open("/tmp", O_PATH)};
    long added = syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &beneath, 0);
    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
    long restricted = syscall(SYS_landlock_restrict_self, ruleset, 0);
    int root = open("/", O_RDONLY | O_DIRECTORY);
    printf("Landlock: a ruleset %s, a rule %ld, restricted %ld; / %s\n", ruleset >= 0 ? "made" : "refused", added,
           restricted, root < 0 ? "cannot be listed" : "can be listed");
    return 0;
}
