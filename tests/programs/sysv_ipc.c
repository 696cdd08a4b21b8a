/* System V messages and semaphores, shared memory's control calls, and
 * POSIX message queues, between a parent and its child: what the kernel
 * writes back (a message and its type, the values of a semaphore set, whose
 * size the calls do not carry, an object's status, a message's priority, the
 * signal that notifies one) is served from the trace in replay, where none of
 * these objects exist. Every line printed depends on what the kernel
 * returned; nothing printed varies from one run to the next. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <mqueue.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* No wait lasts longer: a process whose peer is gone says so and ends. */
#define LIMIT_SECONDS 20

union semun {
    int val;
    struct semid_ds* buf;
    unsigned short* array;
};

struct message {
    long type;
    char text[48];
};

static void timed_out(int sig)
{
    (void)sig;
    static const char why[] = "sysv_ipc: timed out waiting for the other process\n";
    (void)!write(2, why, sizeof why - 1);
    _exit(1);
}

static void limit_waits(void)
{
    signal(SIGALRM, timed_out);
    alarm(LIMIT_SECONDS);
}

/* Where the kernel has no System V IPC or message queues: exit 77. */
static void unavailable(const char* what)
{
    printf("sysv_ipc: %s: %s\n", what, strerror(errno));
    exit(77);
}

static pid_t start_child(void)
{
    fflush(stdout);
    pid_t child = fork();
    if (child < 0) {
        perror("fork");
        exit(1);
    }
    if (child == 0)
        limit_waits();
    return child;
}

static void join(pid_t child, const char* what)
{
    int status = 0;
    if (waitpid(child, &status, 0) != child) {
        perror("waitpid");
        exit(1);
    }
    printf("%s: child %s %d\n", what, WIFEXITED(status) ? "exited" : "killed by",
           WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
}

static void messages(void)
{
    int q = msgget(IPC_PRIVATE, 0600);
    if (q < 0)
        unavailable("msgget");
    pid_t child = start_child();
    if (child == 0) {
        /* Waits for the parent's request (type 1), answers with type 2. */
        struct message in, out = {2, ""};
        memset(&in, 0, sizeof in);
        ssize_t n = msgrcv(q, &in, sizeof in.text, 1, 0);
        int len = snprintf(out.text, sizeof out.text, "got %zd bytes: %s", n, n > 0 ? in.text : "");
        _exit(msgsnd(q, &out, (size_t)len + 1, 0) == 0 ? 0 : 2);
    }
    struct message request = {1, "ping"}, reply;
    msgsnd(q, &request, strlen(request.text) + 1, 0);
    memset(&reply, 0, sizeof reply);
    ssize_t n = msgrcv(q, &reply, sizeof reply.text, 2, 0);
    printf("msgrcv: %zd bytes of type %ld: %s\n", n, reply.type, n > 0 ? reply.text : strerror(errno));
    join(child, "messages");

    /* Cut to what the buffer holds: the kernel writes no more. */
    struct message long_one = {3, "a message longer than ten bytes"}, cut;
    msgsnd(q, &long_one, strlen(long_one.text) + 1, 0);
    memset(&cut, '.', sizeof cut);
    n = msgrcv(q, &cut, 10, 0, MSG_NOERROR);
    printf("MSG_NOERROR: %zd bytes of type %ld: %.*s|%.4s\n", n, cut.type, n > 0 ? (int)n : 0, cut.text,
           cut.text + (n > 0 ? n : 0));
    n = msgrcv(q, &cut, 10, 0, IPC_NOWAIT);
    printf("msgrcv on an empty queue: %zd (%s)\n", n, n < 0 ? strerror(errno) : "?");

    struct msqid_ds ds;
    memset(&ds, 0x5a, sizeof ds);
    msgctl(q, IPC_STAT, &ds);
    printf("IPC_STAT: %lu queued, mode %o, last sent by this process: %s, last received by it: %s\n",
           (unsigned long)ds.msg_qnum, ds.msg_perm.mode & 0777, ds.msg_lspid == getpid() ? "yes" : "no",
           ds.msg_lrpid == getpid() ? "yes" : "no");
    ds.msg_perm.mode = 0640;
    msgctl(q, IPC_SET, &ds);
    memset(&ds, 0x5a, sizeof ds);
    msgctl(q, IPC_STAT, &ds);
    printf("IPC_SET: mode %o\n", ds.msg_perm.mode & 0777);
    struct msginfo info;
    memset(&info, 0x5a, sizeof info);
    int top = msgctl(q, IPC_INFO, (struct msqid_ds*)&info);
    printf("IPC_INFO: %s, at most %d bytes a message\n", top >= 0 ? "ok" : strerror(errno), info.msgmax);
    memset(&info, 0x5a, sizeof info);
    top = msgctl(q, MSG_INFO, (struct msqid_ds*)&info);
    printf("MSG_INFO: %s\n", top >= 0 && info.msgpool >= 1 ? "ok" : "failed");
    msgctl(q, IPC_RMID, NULL);
}

static void semaphores(void)
{
    int s = semget(IPC_PRIVATE, 3, 0600);
    if (s < 0)
        unavailable("semget");
    unsigned short set[3] = {1, 2, 3};
    semctl(s, 0, SETALL, (union semun){.array = set});
    pid_t child = start_child();
    if (child == 0) {
        /* Waits for the parent to raise semaphore 0 to 2, then adds 5 to
         * semaphore 1. */
        struct sembuf take = {0, -2, 0}, add = {1, 5, 0};
        struct timespec limit = {LIMIT_SECONDS, 0};
        if (semtimedop(s, &take, 1, &limit) != 0)
            _exit(2);
        _exit(semop(s, &add, 1) == 0 ? 0 : 3);
    }
    struct sembuf give = {0, 1, 0};
    semop(s, &give, 1);
    join(child, "semaphores");

    unsigned short got[3 + 1] = {0, 0, 0, 0xabcd};
    semctl(s, 0, GETALL, (union semun){.array = got});
    printf("GETALL: %u %u %u (and %#x after them)\n", got[0], got[1], got[2], got[3]);
    struct sembuf take = {0, -1, 0};
    struct timespec moment = {0, 1000000};
    int r = semtimedop(s, &take, 1, &moment);
    printf("semtimedop on semaphore 0: %d (%s)\n", r, r < 0 ? strerror(errno) : "?");
    printf("GETVAL 1: %d, GETPID 1 is the child: %s, GETNCNT 0: %d, GETZCNT 0: %d\n", semctl(s, 1, GETVAL),
           semctl(s, 1, GETPID) == child ? "yes" : "no", semctl(s, 0, GETNCNT), semctl(s, 0, GETZCNT));
    semctl(s, 2, SETVAL, (union semun){.val = 9});
    unsigned short again[3] = {0, 0, 0};
    semctl(s, 0, GETALL, (union semun){.array = again});
    printf("after SETVAL 2: %u %u %u\n", again[0], again[1], again[2]);

    struct semid_ds ds;
    memset(&ds, 0x5a, sizeof ds);
    semctl(s, 0, IPC_STAT, (union semun){.buf = &ds});
    printf("IPC_STAT: %lu semaphores, mode %o\n", (unsigned long)ds.sem_nsems, ds.sem_perm.mode & 0777);
    ds.sem_perm.mode = 0604;
    semctl(s, 0, IPC_SET, (union semun){.buf = &ds});
    memset(&ds, 0x5a, sizeof ds);
    semctl(s, 0, IPC_STAT, (union semun){.buf = &ds});
    printf("IPC_SET: mode %o\n", ds.sem_perm.mode & 0777);
    struct seminfo info;
    memset(&info, 0x5a, sizeof info);
    int top = semctl(s, 0, IPC_INFO, (union semun){.buf = (struct semid_ds*)&info});
    printf("IPC_INFO: %s, at most %d semaphores a set\n", top >= 0 ? "ok" : strerror(errno), info.semmsl);
    memset(&info, 0x5a, sizeof info);
    top = semctl(s, 0, SEM_INFO, (union semun){.buf = (struct semid_ds*)&info});
    printf("SEM_INFO: %s\n", top >= 0 && info.semusz >= 1 ? "ok" : "failed");
    semctl(s, 0, IPC_RMID);
}

static void shared_memory_control(void)
{
    int m = shmget(IPC_PRIVATE, 10000, 0600);
    if (m < 0)
        unavailable("shmget");
    struct shmid_ds ds;
    memset(&ds, 0x5a, sizeof ds);
    shmctl(m, IPC_STAT, &ds);
    printf("IPC_STAT: %zu bytes, %lu attached\n", (size_t)ds.shm_segsz, (unsigned long)ds.shm_nattch);
    struct shminfo info;
    memset(&info, 0x5a, sizeof info);
    shmctl(m, IPC_INFO, (struct shmid_ds*)&info);
    printf("IPC_INFO: at least %lu bytes a segment\n", (unsigned long)info.shmmin);
    struct shm_info usage;
    memset(&usage, 0x5a, sizeof usage);
    printf("SHM_INFO: %s\n",
           shmctl(m, SHM_INFO, (struct shmid_ds*)&usage) >= 0 && usage.used_ids > 0 ? "ok" : "failed");
    shmctl(m, IPC_RMID, NULL);
}

static void posix_queues(void)
{
    char requests[64], replies[64];
    snprintf(requests, sizeof requests, "/rewind-test-requests-%d", getpid());
    snprintf(replies, sizeof replies, "/rewind-test-replies-%d", getpid());
    struct mq_attr attr = {.mq_maxmsg = 4, .mq_msgsize = 64};
    mqd_t rq = mq_open(requests, O_CREAT | O_EXCL | O_RDWR, 0600, &attr);
    if (rq == (mqd_t)-1)
        unavailable("mq_open");
    mqd_t rp = mq_open(replies, O_CREAT | O_EXCL | O_RDWR, 0600, &attr);
    if (rp == (mqd_t)-1)
        unavailable("mq_open");
    pid_t child = start_child();
    if (child == 0) {
        /* Waits for a request, answers one priority higher. */
        char in[64] = {0}, out[64];
        unsigned prio = 0;
        struct timespec deadline;
        clock_gettime(CLOCK_REALTIME, &deadline);
        deadline.tv_sec += LIMIT_SECONDS;
        ssize_t n = mq_timedreceive(rq, in, sizeof in, &prio, &deadline);
        int len = snprintf(out, sizeof out, "got %zd bytes at priority %u: %s", n, prio, n > 0 ? in : "");
        _exit(mq_send(rp, out, (size_t)len + 1, prio + 1) == 0 ? 0 : 2);
    }
    /* The reply to an empty queue notifies this process with a signal,
     * taken where it waits for it. */
    sigset_t usr1;
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    sigprocmask(SIG_BLOCK, &usr1, NULL);
    struct sigevent notify = {.sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGUSR1, .sigev_value.sival_int = 42};
    if (mq_notify(rp, &notify) != 0)
        printf("mq_notify: %s\n", strerror(errno));
    mq_send(rq, "ping", 5, 3);
    siginfo_t si;
    memset(&si, 0, sizeof si);
    struct timespec limit = {LIMIT_SECONDS, 0};
    int sig = sigtimedwait(&usr1, &si, &limit);
    printf("notified: %s, by a message queue: %s, value %d\n", sig == SIGUSR1 ? "SIGUSR1" : strerror(errno),
           si.si_code == SI_MESGQ ? "yes" : "no", si.si_value.sival_int);

    struct mq_attr now;
    memset(&now, 0x5a, sizeof now);
    mq_getattr(rp, &now);
    printf("mq_getattr: %ld queued of %ld, %ld bytes each\n", now.mq_curmsgs, now.mq_maxmsg, now.mq_msgsize);
    char buf[64] = {0};
    unsigned prio = 0;
    ssize_t n = mq_receive(rp, buf, sizeof buf, &prio);
    printf("mq_receive: %zd bytes, priority %u: %s\n", n, prio, n > 0 ? buf : strerror(errno));
    join(child, "queues");

    struct timespec past = {0, 0};
    n = mq_timedreceive(rp, buf, sizeof buf, &prio, &past);
    printf("mq_timedreceive on an empty queue: %zd (%s)\n", n, n < 0 ? strerror(errno) : "?");
    struct mq_attr nonblocking = {.mq_flags = O_NONBLOCK}, before;
    memset(&before, 0x5a, sizeof before);
    mq_setattr(rp, &nonblocking, &before);
    printf("mq_setattr: was %s\n", before.mq_flags & O_NONBLOCK ? "non-blocking" : "blocking");
    n = mq_receive(rp, buf, sizeof buf, NULL);
    printf("mq_receive, non-blocking: %zd (%s)\n", n, n < 0 ? strerror(errno) : "?");
    mq_send(rp, "", 0, 0);
    memset(buf, '.', sizeof buf);
    n = mq_receive(rp, buf, sizeof buf, NULL);
    printf("an empty message: %zd bytes, then %.4s\n", n, buf);
    mq_close(rq);
    mq_close(rp);
    mq_unlink(requests);
    mq_unlink(replies);
}

int main(void)
{
    limit_waits();
    messages();
    semaphores();
    shared_memory_control();
    posix_queues();
    return 0;
}
