#include "sync_calls.h"

#include <array>

namespace rw {
namespace {

// Must agree with SYNC_RELEASES in bpf/capture.bpf.c: the kernel side takes
// a release's seq at entry and an acquire's at return.
constexpr std::array<SyncCall, RW_SYNC_FN_COUNT - 1> kCalls{{
    {RW_SYNC_MUTEX_LOCK, "pthread_mutex_lock", false, true},
    {RW_SYNC_MUTEX_TRYLOCK, "pthread_mutex_trylock", false, true},
    {RW_SYNC_MUTEX_TIMEDLOCK, "pthread_mutex_timedlock", false, true},
    {RW_SYNC_MUTEX_UNLOCK, "pthread_mutex_unlock", true, false},
    {RW_SYNC_RWLOCK_RDLOCK, "pthread_rwlock_rdlock", false, true},
    {RW_SYNC_RWLOCK_WRLOCK, "pthread_rwlock_wrlock", false, true},
    {RW_SYNC_RWLOCK_TRYRDLOCK, "pthread_rwlock_tryrdlock", false, true},
    {RW_SYNC_RWLOCK_TRYWRLOCK, "pthread_rwlock_trywrlock", false, true},
    {RW_SYNC_RWLOCK_UNLOCK, "pthread_rwlock_unlock", true, false},
    {RW_SYNC_COND_WAIT, "pthread_cond_wait", true, true},
    {RW_SYNC_COND_TIMEDWAIT, "pthread_cond_timedwait", true, true},
    {RW_SYNC_COND_SIGNAL, "pthread_cond_signal", true, false},
    {RW_SYNC_COND_BROADCAST, "pthread_cond_broadcast", true, false},
    {RW_SYNC_SEM_WAIT, "sem_wait", false, true},
    {RW_SYNC_SEM_TRYWAIT, "sem_trywait", false, true},
    {RW_SYNC_SEM_TIMEDWAIT, "sem_timedwait", false, true},
    {RW_SYNC_SEM_POST, "sem_post", true, false},
    {RW_SYNC_BARRIER_WAIT, "pthread_barrier_wait", true, true},
    {RW_SYNC_SPIN_LOCK, "pthread_spin_lock", false, true},
    {RW_SYNC_SPIN_TRYLOCK, "pthread_spin_trylock", false, true},
    {RW_SYNC_SPIN_UNLOCK, "pthread_spin_unlock", true, false},
    {RW_SYNC_ONCE, "pthread_once", true, false},
    {RW_SYNC_CREATE, "pthread_create", true, false},
    {RW_SYNC_JOIN, "pthread_join", false, true},
}};

} // namespace

std::span<const SyncCall> all_sync_calls()
{
    return kCalls;
}

const SyncCall* find_sync_call(uint32_t fn)
{
    for (const auto& c : kCalls)
        if (c.fn == fn)
            return &c;
    return nullptr;
}

std::string_view sync_call_name(uint32_t fn)
{
    const SyncCall* c = find_sync_call(fn);
    return c ? c->symbol : "unknown-sync-call";
}

} // namespace rw
