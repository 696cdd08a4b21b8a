#include "tsc.h"

#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <x86intrin.h>

#include <csignal>

#include "tracee.h"

namespace rw {

std::optional<TscInstruction> decode_tsc_instruction(const TraceeMemory& mem, uint64_t rip)
{
    uint8_t code[3] = {};
    size_t n = mem.read_partial(RemoteAddr(rip), code);
    if (n >= 2 && code[0] == 0x0f && code[1] == 0x31)
        return TscInstruction{false, 2};
    if (n >= 3 && code[0] == 0x0f && code[1] == 0x01 && code[2] == 0xf9)
        return TscInstruction{true, 3};
    return std::nullopt;
}

void apply_tsc(Registers& regs, const TscInstruction& insn, uint64_t tsc, uint32_t aux)
{
    regs[Registers::RAX] = tsc & 0xffffffffu;
    regs[Registers::RDX] = tsc >> 32;
    if (insn.rdtscp)
        regs[Registers::RCX] = aux;
    regs[Registers::RIP] += static_cast<uint64_t>(insn.length);
}

uint64_t read_host_tsc(uint32_t& aux)
{
    unsigned int a = 0;
    uint64_t t = __rdtscp(&a);
    aux = a;
    return t;
}

bool tsc_trap_works()
{
    static const bool works = [] {
        pid_t child = fork();
        if (child == 0) {
            signal(SIGSEGV, SIG_DFL);
            if (prctl(PR_SET_TSC, PR_TSC_SIGSEGV, 0, 0, 0) != 0)
                _exit(2);
            unsigned lo, hi;
            asm volatile("rdtsc" : "=a"(lo), "=d"(hi));
            _exit(0);
        }
        int status = 0;
        if (child < 0 || waitpid(child, &status, 0) != child)
            return false;
        return WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV;
    }();
    return works;
}

} // namespace rw
