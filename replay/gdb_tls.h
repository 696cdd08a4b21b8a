// gdb's qGetTLSAddr: where a thread's thread-local variable is (`print
// errno`, a __thread variable). glibc describes its own data structures
// for debuggers in _thread_db_* symbols (what libthread_db reads): the
// offset of a module's TLS id in its link_map, of the DTV pointer in a
// thread's descriptor, and the DTV's layout. With those, the address is the
// thread's DTV entry for the module, plus the variable's offset.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>

namespace rw::replay {

class DebugSession;

// The reply to "qGetTLSAddr:THREAD,OFFSET,LM": the address in hex, or
// "E01" with the reason in `why`.
std::string thread_local_address(DebugSession& session, const std::string& packet, std::string& why);

// The address of a dynamic symbol in process `pid`, searched in every ELF
// object it maps (for glibc's private _thread_db_* descriptors).
std::optional<uint64_t> find_dynamic_symbol(pid_t pid, const std::string& name);

} // namespace rw::replay
