/* Signals sent to the whole process group, as a program that shares its
 * group with whatever started it may send them (the recorder, under
 * rewind): each handled once, then a fatal one. Run it in a session of its
 * own: natively the group is its caller's too. */
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

static volatile sig_atomic_t usr1, term;

static void on_usr1(int sig)
{
    (void)sig;
    usr1++;
}

static void on_term(int sig)
{
    (void)sig;
    term++;
}

int main(void)
{
    signal(SIGUSR1, on_usr1);
    signal(SIGTERM, on_term);
    kill(0, SIGUSR1);
    kill(0, SIGTERM);
    usleep(100 * 1000); /* a second SIGTERM, if anyone sent one, has come by now */
    printf("usr1 %d term %d\n", (int)usr1, (int)term);
    fflush(stdout);
    kill(0, SIGABRT);
    return 0;
}
