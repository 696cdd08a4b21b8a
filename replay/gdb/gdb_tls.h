// gdb's qGetTLSAddr: where a thread's thread-local variable is (`print
// errno`, a __thread variable). Answered as gdbserver answers it: by glibc's
// own libthread_db, loaded at run time, which knows how this glibc lays out
// a thread's DTV and its modules' TLS blocks (including the cases of a
// module loaded by dlopen, or a thread that has not set up its TLS yet).
// libthread_db reaches the program through proc_service callbacks that the
// executable defines (gdb_tls.cpp; the link exports them): they read the
// replay's memory and registers, and find glibc's symbols in the ELF files
// the replayed process maps (the trace's copies).
//
// A trace replays with the C library it recorded, which may not be the
// host's: libthread_db then refuses it (it only serves its own glibc
// version), and so it does when it is not installed. The address is then
// computed from the descriptors that same glibc publishes for debuggers
// (_thread_db_*), for the common case where the thread has allocated the
// module's block.
#pragma once

#include <cstdint>
#include <string>

#include "event.h"

namespace rw::replay {

class DebugSession;
class HostFiles;

// The reply to "qGetTLSAddr:THREAD,OFFSET,LM" for recorded thread `tid`:
// the address, in hex, of the byte at `offset` in the thread's block of the
// module whose link_map is at `lm`; or "E." and why not.
std::string thread_local_address(DebugSession& session, const HostFiles& files, Tid tid, uint64_t offset, uint64_t lm);

} // namespace rw::replay
