/* rdtsc and rdtscp, straight from the CPU. */
#include <stdio.h>
#include <x86intrin.h>

int main(void)
{
    unsigned aux = 0;
    unsigned long long a = __rdtsc();
    unsigned long long b = __rdtscp(&aux);
    unsigned long long c = __rdtsc();
    printf("rdtsc %llu\nrdtscp %llu aux %u\nrdtsc %llu\n", a, b, aux, c);
    printf("monotonic %s\n", a <= b && b <= c ? "yes" : "no");
    return 0;
}
