/* List a directory (getdents64), sorted so the output is stable. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

int main(int argc, char **argv)
{
    DIR *d = opendir(argc > 1 ? argv[1] : ".");
    if (!d)
        return 1;
    char *names[4096];
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < 4096)
        names[n++] = strdup(e->d_name);
    closedir(d);
    qsort(names, n, sizeof names[0], cmp);
    for (int i = 0; i < n; i++)
        printf("%s\n", names[i]);
    return 0;
}
