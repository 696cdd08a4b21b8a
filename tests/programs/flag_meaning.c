// A global flag flipped 100,001 times in a loop without a system call, then
// set to 0 by main's last statement (LAST): the same value at the start and
// at the end, and many changes between. The program ends inside finish(),
// whose parameter is also named flag: where the recording ends, gdb would
// read `flag` as that parameter, not as the global the user means.
int flag;

static void __attribute__((noinline)) finish(int flag)
{
    // exit_group(flag), from this frame: the recording ends here.
    __asm__ volatile("syscall" : : "a"(231), "D"(flag) : "rcx", "r11", "memory");
    __builtin_unreachable();
}

int main(void)
{
    for (int i = 0; i < 100001; i++)
        flag ^= 4096; /* FLIP */
    flag = 0;         /* LAST */
    finish(3);
}
