/* The CPU's own random numbers (rdrand, rdseed), which no kernel setting
 * traps: replay must print exactly what the recording printed. Each width
 * (16, 32, 64 bits) and a register that needs REX.B, in the program and in
 * a forked child (its copy of the code has the recorder's int3s too). A
 * machine without them prints so. */
#include <cpuid.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

static int has_rdrand(void)
{
    unsigned a, b, c, d;
    return __get_cpuid(1, &a, &b, &c, &d) && (c & bit_RDRND);
}

static int has_rdseed(void)
{
    unsigned a, b, c, d;
    return __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & bit_RDSEED);
}

static void draw(const char *who)
{
    unsigned long long r64 = 0, r16 = 0, r32 = 0, s64 = 0;
    if (!has_rdrand()) {
        printf("%s: no rdrand on this CPU\n", who);
        return;
    }
    __asm__ volatile("1: rdrand %0\n\tjnc 1b" : "=r"(r64) : : "cc");
    /* A 16-bit destination keeps the rest of its register. */
    __asm__ volatile("movabs $0x1234567890abcdef, %%rax\n1: rdrand %%ax\n\tjnc 1b\n\tmov %%rax, %0"
                     : "=r"(r16) : : "rax", "cc");
    /* A 32-bit one clears the upper half. */
    __asm__ volatile("mov $-1, %%r10\n1: rdrand %%r10d\n\tjnc 1b\n\tmov %%r10, %0" : "=r"(r32) : : "r10", "cc");
    printf("%s: rdrand %016llx %016llx %016llx\n", who, r64, r16, r32);
    if (has_rdseed()) {
        __asm__ volatile("1: rdseed %%r9\n\tjnc 1b\n\tmov %%r9, %0" : "=r"(s64) : : "r9", "cc");
        printf("%s: rdseed %016llx\n", who, s64);
    }
}

int main(void)
{
    draw("main");
    fflush(stdout);
    pid_t child = fork();
    if (child == 0) {
        draw("child");
        return 0;
    }
    int status;
    waitpid(child, &status, 0);
    draw("main again");
    return 0;
}
