/* Robust mutexes whose owner dies: a thread that exits holding one, and a
 * process killed holding one in shared memory. The kernel marks each
 * FUTEX_OWNER_DIED at the owner's exit (it finds them by the owner's tid in
 * the futex word), and the next locker gets EOWNERDEAD. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

static pthread_mutex_t* mutex;

static void* lock_and_exit(void* arg)
{
    (void)arg;
    pthread_mutex_lock(mutex);
    return NULL;
}

static void lock_after_death(const char* who)
{
    int r = pthread_mutex_lock(mutex);
    printf("after %s: %s\n", who, r == EOWNERDEAD ? "EOWNERDEAD" : strerror(r));
    if (r == EOWNERDEAD)
        pthread_mutex_consistent(mutex);
    pthread_mutex_unlock(mutex);
}

int main(void)
{
    mutex = mmap(NULL, sizeof *mutex, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    pthread_mutexattr_t attr;
    pthread_mutexattr_init(&attr);
    pthread_mutexattr_setrobust(&attr, PTHREAD_MUTEX_ROBUST);
    pthread_mutexattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
    pthread_mutex_init(mutex, &attr);

    pthread_t thread;
    pthread_create(&thread, NULL, lock_and_exit, NULL);
    pthread_join(thread, NULL);
    lock_after_death("a thread's exit");

    int ready[2];
    if (pipe(ready) != 0)
        return 1;
    pid_t child = fork();
    if (child == 0) {
        pthread_mutex_lock(mutex);
        (void)!write(ready[1], "x", 1);
        pause();
        return 1;
    }
    char c;
    (void)!read(ready[0], &c, 1);
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    lock_after_death("a process killed");
    return 0;
}
