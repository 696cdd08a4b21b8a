#include "private_copy.h"

#include <sys/mman.h>
#include <sys/syscall.h>

#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "thread_injector.h"
#include "tracee.h"

namespace rw {

void make_private(pid_t copy, uint64_t syscall_insn, const Mapping& m)
{
    TraceeMemory mem(copy);
    std::vector<uint8_t> content(m.end - m.start);
    size_t got = mem.read_partial(RemoteAddr(m.start), content);
    int prot = (m.perms.size() > 0 && m.perms[0] == 'r' ? PROT_READ : 0) |
               (m.perms.size() > 1 && m.perms[1] == 'w' ? PROT_WRITE : 0) |
               (m.perms.size() > 2 && m.perms[2] == 'x' ? PROT_EXEC : 0);
    ThreadInjector in(copy, syscall_insn);
    // Writable while it is filled.
    int64_t r = in.call(SYS_mmap, m.start, m.end - m.start, static_cast<uint64_t>(prot | PROT_WRITE),
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, static_cast<uint64_t>(-1), 0);
    if (r != static_cast<int64_t>(m.start))
        throw std::runtime_error("cannot copy the shared mapping " + m.path + " of process " + std::to_string(copy));
    if (got && !mem.write(RemoteAddr(m.start), std::span(content.data(), got)))
        throw std::runtime_error("cannot fill the copy of the shared mapping " + m.path);
    if (!(prot & PROT_WRITE) && in.call(SYS_mprotect, m.start, m.end - m.start, static_cast<uint64_t>(prot)) != 0)
        throw std::runtime_error("cannot protect the copy of the shared mapping " + m.path);
}

} // namespace rw
