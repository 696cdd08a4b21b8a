/* The vDSO stays where the program finds it (getauxval(AT_SYSINFO_EHDR)),
 * an ELF image whose dynamic symbols include the time functions, while
 * the times libc reads through it are recorded and replayed (the numbers
 * printed here must come back the same in replay). */
#include <elf.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/time.h>
#include <time.h>

static int has_symbol(const unsigned char* vdso, const char* wanted)
{
    const Elf64_Ehdr* eh = (const Elf64_Ehdr*)vdso;
    const Elf64_Shdr* sh = (const Elf64_Shdr*)(vdso + eh->e_shoff);
    for (int i = 0; i < eh->e_shnum; i++) {
        if (sh[i].sh_type != SHT_DYNSYM)
            continue;
        const Elf64_Sym* syms = (const Elf64_Sym*)(vdso + sh[i].sh_offset);
        const char* names = (const char*)(vdso + sh[sh[i].sh_link].sh_offset);
        for (size_t k = 0; k < sh[i].sh_size / sizeof(Elf64_Sym); k++)
            if (strcmp(names + syms[k].st_name, wanted) == 0)
                return 1;
    }
    return 0;
}

int main(void)
{
    const unsigned char* vdso = (const unsigned char*)getauxval(AT_SYSINFO_EHDR);
    printf("vDSO present: %s\n", vdso ? "yes" : "no");
    if (!vdso)
        return 1;
    printf("ELF image: %s\n", memcmp(vdso, ELFMAG, SELFMAG) == 0 ? "yes" : "no");
    printf("__vdso_clock_gettime: %s\n", has_symbol(vdso, "__vdso_clock_gettime") ? "found" : "missing");
    struct timespec a, b;
    struct timeval tv;
    clock_gettime(CLOCK_MONOTONIC, &a);
    clock_gettime(CLOCK_MONOTONIC, &b);
    gettimeofday(&tv, NULL);
    printf("monotonic %lld.%09ld then %lld.%09ld, wall %lld.%06ld, time %lld\n", (long long)a.tv_sec, a.tv_nsec,
           (long long)b.tv_sec, b.tv_nsec, (long long)tv.tv_sec, (long)tv.tv_usec, (long long)time(NULL));
    return 0;
}
