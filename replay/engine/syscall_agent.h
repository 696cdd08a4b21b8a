// The syscall agent of one replayed address space: code mapped into the
// program that answers runs of recorded syscalls inside it (replay/agent),
// so that a served call costs a memory copy, not a trap and two context
// switches.
//
// The replayer hands it the calls a thread is to make next (load); their
// sites in the program's code are patched while the thread runs them and
// put back before anything looks at the program again (unpatch): a
// debugger, a snapshot, the ptrace path never see a patched byte. Only the
// instruction that sets the call's number is patched, into a jump of its
// own size: `mov $NR, %eax; syscall` into `jmp STUB; syscall` (and the
// C library's syscall(), whose last instruction before the call is `mov
// 0x8(%rsp), %r9`, the same way), and `xor %eax, %eax; syscall` (read)
// into `jmp TRAMPOLINE; syscall`, where the
// trampoline, five bytes of dead padding after a return or jump near the
// site, jumps to the stub. The syscall instruction is never patched: a
// call the agent does not answer (the ring ran out, or the call is not
// the recorded one) is made there by the program itself and meets the
// replayer as it would have without the agent.
#pragma once

#include <sys/types.h>

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "event.h"
#include "x86_insn.h"

namespace rw::replay {

class SyscallAgent {
public:
    // Runs a syscall in the stopped thread (Replayer::inject_syscall).
    using Inject = std::function<int64_t(long nr, const std::array<uint64_t, 6>& args)>;

    // Maps an agent into the process of `tid` (stopped), near `site` (a
    // syscall instruction it is for), or takes the one already there (a
    // process forked from one that had it); nullptr where none can be
    // (`why` says why).
    static std::unique_ptr<SyscallAgent> map_into(pid_t tid, uint64_t site, const Inject& inject, std::string& why);

    uint64_t base() const { return base_; }
    static uint64_t size();
    // Whether its code (not its data) holds `addr`: a thread stopped there
    // is inside an answer.
    bool in_code(uint64_t addr) const;
    uint64_t exit_address() const;

    // Whether the agent can answer `e` where it was made: its site is one
    // it can patch (no debugger trap in the bytes it would change or skip,
    // `trapped`), its inputs are all in the trace.
    using Trapped = std::function<bool(uint64_t start, uint64_t end)>;
    bool can_serve(pid_t tid, const SyscallEvent& e, const Trapped& trapped);
    // Puts `calls` (in the order the thread makes them) in the ring and
    // patches their sites; the thread is stopped or blocked in a call.
    // Returns how many it took (the first ones; it stops where one does
    // not fit).
    size_t load(pid_t tid, std::span<const SyscallEvent* const> calls);
    // How many of the loaded calls the agent answered; the ring is empty
    // after. 0 if nothing was loaded.
    uint32_t collect(pid_t tid);
    // The program's code as it was. Returns false if it could not be
    // written (the process is gone).
    bool unpatch(pid_t tid);
    bool loaded() const { return loaded_; }
    bool patched() const { return !patched_.empty(); }

private:
    // What sets a site's call number, just before its syscall instruction.
    struct Site {
        int nr = -1;                 // -1: not a site the agent can patch; -2: any call
        std::vector<uint8_t> setter; // `mov $NR, %eax` or `xor %eax, %eax`
        uint64_t trampoline = 0;     // for a setter shorter than a jump
        std::array<uint8_t, 5> padding{};
    };
    explicit SyscallAgent(uint64_t base);
    bool patch(pid_t tid, uint64_t at, const Site& site);
    const Site& site_of(pid_t tid, uint64_t at);
    uint64_t find_trampoline(pid_t tid, uint64_t at, std::array<uint8_t, 5>& padding);
    std::vector<uint8_t> stub_code(uint64_t stub, uint64_t at, const Site& site) const;

    uint64_t base_;
    bool loaded_ = false;
    std::shared_ptr<X86Decoder> decoder_;
    std::map<uint64_t, uint32_t> stub_of_site_; // syscall instruction -> its stub's slot
    std::map<uint64_t, Site> sites_;            // checked syscall instructions
    std::set<uint64_t> trampolines_;            // padding taken by a site
    std::set<uint64_t> patched_;                // sites patched now
};

} // namespace rw::replay
