// Rewrites a trace's event stream so that it is consistent (every chunk
// re-checksummed) but no longer true. Replay must report a divergence, not
// succeed or hang.
//
//   trace_tamper TRACE_DIR [MIN_BYTES]   one read() made shorter: the return
//                                        value and the bytes shrink together
//   trace_tamper TRACE_DIR --preempt     the first thread preemption moved:
//                                        one register changed
//   trace_tamper TRACE_DIR --syscall-nr N the first syscall after the exec given number N
//                                        (its flags unchanged: a known call)
//   trace_tamper TRACE_DIR --copy-name N the first exec's program file named
//                                        N in files/ (a crafted name)
//   trace_tamper TRACE_DIR --hash-only-input N  the first syscall input kept
//                                        as a hash only, claiming N bytes
//   trace_tamper TRACE_DIR --write-data K  the data of the K-th write()
//                                        changed (one byte, hash and all)
//   trace_tamper TRACE_DIR --write-hash K  the hash of the data of the
//                                        K-th write() changed, its bytes
//                                        kept (an event that contradicts itself)
//   trace_tamper TRACE_DIR --call-arg NR K A  argument A of the K-th call of
//                                        syscall NR changed (its lowest bit)
//   trace_tamper TRACE_DIR --unknown-succeeds  the first syscall of unknown
//                                        effects made to return 0
//   trace_tamper TRACE_DIR --group-exit-last  the exits of the threads an
//                                        exit_group killed put before that
//                                        call's own exit, as the kernel may
//                                        report them (true, not tampered)
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <utility>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <vector>

#include "event_stream.h"

using namespace rw;

namespace {

bool is_group_exit_call(const Event& e)
{
    const auto* x = std::get_if<ExitEvent>(&e);
    return x && x->pending_nr == SYS_exit_group && !WIFSIGNALED(x->exit_code);
}

// Moves the first exit_group caller's exit after the exits of its process's
// other threads that follow it; the seqs stay in stream order.
int group_exit_last(const std::filesystem::path& dir)
{
    std::vector<Event> events;
    {
        EventStreamReader in(dir / "events");
        Event e;
        while (in.next(e))
            events.push_back(e);
        if (in.end().kind != StreamEnd::Kind::Clean) {
            std::fprintf(stderr, "trace_tamper: %s\n", describe(in.end()).c_str());
            return 1;
        }
    }
    auto caller = std::find_if(events.begin(), events.end(), is_group_exit_call);
    if (caller == events.end()) {
        std::fprintf(stderr, "trace_tamper: no thread exits through exit_group\n");
        return 1;
    }
    Tid tgid = std::get<ExitEvent>(*caller).tgid;
    auto last = caller;
    for (auto it = caller + 1; it != events.end(); ++it)
        if (const auto* x = std::get_if<ExitEvent>(&*it); x && x->tgid == tgid)
            last = it;
    if (last == caller) {
        std::printf("the exit_group caller's exit already comes last\n");
        return 0;
    }
    std::vector<uint64_t> seqs;
    for (auto it = caller; it <= last; ++it)
        seqs.push_back(event_seq(*it));
    size_t moved = static_cast<size_t>(last - caller);
    std::rotate(caller, caller + 1, last + 1);
    for (size_t i = 0; i < seqs.size(); i++)
        std::visit([&](auto& x) { x.seq = seqs[i]; }, *(caller + static_cast<long>(i)));
    // The kernel says the process is dead at the last of its threads' exits.
    bool dead = false;
    for (auto it = caller; it <= last; ++it)
        if (auto* x = std::get_if<ExitEvent>(&*it); x && x->tgid == tgid)
            dead = std::exchange(x->group_dead, false) || dead;
    std::get<ExitEvent>(*last).group_dead = dead;
    {
        EventStreamWriter out(dir / "events.tampered");
        for (const auto& e : events)
            out.append(e);
    }
    std::filesystem::rename(dir / "events.tampered", dir / "events");
    std::printf("moved the exit_group caller's exit after %zu events\n", moved);
    return 0;
}

} // namespace

int main(int argc, char** argv)
{
    if (argc < 2) {
        std::fprintf(stderr, "usage: trace_tamper TRACE_DIR [MIN_BYTES]\n");
        return 2;
    }
    std::filesystem::path dir = argv[1];
    if (argc > 2 && std::string(argv[2]) == "--group-exit-last")
        return group_exit_last(dir);
    bool preempt = argc > 2 && std::string(argv[2]) == "--preempt";
    bool rename_copy = argc > 3 && std::string(argv[2]) == "--copy-name";
    bool renumber = argc > 3 && std::string(argv[2]) == "--syscall-nr";
    bool hash_only = argc > 3 && std::string(argv[2]) == "--hash-only-input";
    bool write_data = argc > 3 && std::string(argv[2]) == "--write-data";
    bool write_hash = argc > 3 && std::string(argv[2]) == "--write-hash";
    bool unknown_succeeds = argc > 2 && std::string(argv[2]) == "--unknown-succeeds";
    // --call-arg NR K ARG: argument ARG of the K-th call of syscall NR, its lowest bit flipped.
    bool call_arg = argc > 5 && std::string(argv[2]) == "--call-arg";
    long calls_left = call_arg ? std::atol(argv[4]) : 0;
    long writes_left = write_data || write_hash ? std::atol(argv[3]) : 0;
    int64_t min_bytes = argc > 2 && !preempt && !rename_copy && !renumber && !hash_only && !write_data && !write_hash &&
                                !unknown_succeeds && !call_arg
                            ? std::atoll(argv[2])
                            : 2;
    auto events = dir / "events";
    auto tampered = dir / "events.tampered";
    std::filesystem::remove(tampered);
    bool done = false;
    {
        EventStreamReader in(events);
        EventStreamWriter out(tampered);
        Event e;
        while (in.next(e)) {
            if (auto* x = std::get_if<ExecEvent>(&e); rename_copy && x && !done && !x->mappings.empty()) {
                for (auto& m : x->mappings)
                    if (!m.content_hash.empty() && !done) {
                        std::printf("renamed the copy of %s to %s\n", m.path.c_str(), argv[3]);
                        m.content_hash = argv[3];
                        done = true;
                    }
            }
            if (auto* p = std::get_if<PreemptEvent>(&e); preempt && p && !done) {
                p->regs[Registers::RAX] ^= 1;
                done = true;
                std::printf("moved preemption #%llu\n", static_cast<unsigned long long>(in.next_index() - 1));
            }
            if (auto* c = std::get_if<SyscallEvent>(&e);
                renumber && c && !done && c->nr != SYS_execve && c->nr != SYS_execveat) {
                std::printf("syscall #%llu renumbered %d -> %s\n", static_cast<unsigned long long>(in.next_index() - 1),
                            c->nr, argv[3]);
                c->nr = std::atoi(argv[3]);
                done = true;
            }
            if (auto* c = std::get_if<SyscallEvent>(&e); hash_only && c && !done && c->nr != SYS_execve)
                for (auto& m : c->memory)
                    if (m.dir == Direction::In && !m.bytes.empty() && !done) {
                        std::printf("syscall #%llu: %llu input bytes at %#llx now hash only, claiming %s\n",
                                    static_cast<unsigned long long>(in.next_index() - 1),
                                    static_cast<unsigned long long>(m.length), static_cast<unsigned long long>(m.addr),
                                    argv[3]);
                        m.hashed_only = true;
                        m.bytes.clear();
                        m.length = std::strtoull(argv[3], nullptr, 0);
                        done = true;
                    }
            if (auto* c = std::get_if<SyscallEvent>(&e); write_data && c && !done && c->nr == SYS_write &&
                                                         !c->memory.empty() && !c->memory[0].bytes.empty() &&
                                                         --writes_left == 0) {
                c->memory[0].bytes[0] ^= 1;
                c->memory[0].hash = hash_bytes(c->memory[0].bytes.data(), c->memory[0].bytes.size());
                done = true;
                std::printf("%llu\n", static_cast<unsigned long long>(in.next_index() - 1));
            }
            if (auto* c = std::get_if<SyscallEvent>(&e); write_hash && c && !done && c->nr == SYS_write &&
                                                         !c->memory.empty() && !c->memory[0].bytes.empty() &&
                                                         --writes_left == 0) {
                c->memory[0].hash ^= 1;
                done = true;
                std::printf("%llu\n", static_cast<unsigned long long>(in.next_index() - 1));
            }
            if (auto* c = std::get_if<SyscallEvent>(&e);
                call_arg && c && !done && c->nr == std::atoi(argv[3]) && --calls_left == 0) {
                c->args[std::atoi(argv[5]) % 6] ^= 1;
                done = true;
                std::printf("%llu\n", static_cast<unsigned long long>(in.next_index() - 1));
            }
            if (auto* c = std::get_if<SyscallEvent>(&e);
                unknown_succeeds && c && !done && (c->flags & (kSyscallUnknown | kSyscallUnknownSubcommand))) {
                c->ret = 0;
                done = true;
                std::printf("%llu\n", static_cast<unsigned long long>(in.next_index() - 1));
            }
            auto* sc = preempt || rename_copy || renumber || hash_only || write_data || write_hash ||
                               unknown_succeeds || call_arg
                           ? nullptr
                           : std::get_if<SyscallEvent>(&e);
            // The last byte of the first big enough read of this program's own data.
            if (!done && sc && sc->nr == SYS_read && sc->ret >= min_bytes && !sc->memory.empty() &&
                sc->memory[0].bytes.size() == static_cast<size_t>(sc->ret)) {
                sc->ret -= 1;
                sc->memory[0].bytes.pop_back();
                sc->memory[0].length -= 1;
                done = true;
                std::printf("shortened read #%llu to %lld bytes\n",
                            static_cast<unsigned long long>(in.next_index() - 1), static_cast<long long>(sc->ret));
            }
            out.append(e);
        }
        if (in.end().kind != StreamEnd::Kind::Clean) {
            std::fprintf(stderr, "trace_tamper: %s\n", describe(in.end()).c_str());
            return 1;
        }
    }
    if (!done) {
        if (preempt)
            std::fprintf(stderr, "trace_tamper: no preemption in the trace\n");
        else if (renumber)
            std::fprintf(stderr, "trace_tamper: no syscall\n");
        else if (hash_only)
            std::fprintf(stderr, "trace_tamper: no syscall input\n");
        else if (write_data || write_hash)
            std::fprintf(stderr, "trace_tamper: fewer write() calls with data\n");
        else if (rename_copy)
            std::fprintf(stderr, "trace_tamper: no exec with a file copy\n");
        else
            std::fprintf(stderr, "trace_tamper: no read() of at least %lld bytes\n", static_cast<long long>(min_bytes));
        return 1;
    }
    std::filesystem::rename(tampered, events);
    return 0;
}
