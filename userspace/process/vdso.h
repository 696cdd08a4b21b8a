// The vDSO: code the kernel maps into every process so that clock_gettime,
// gettimeofday, time, clock_getres and getcpu run without a syscall, from
// data the kernel keeps updating. Their answers would be neither recorded
// nor reproducible. rewind leaves the vDSO where the program finds it (a
// program may read its ELF headers and symbols) and rewrites the start of
// each of those functions into the real syscall, so libc's calls are
// recorded and replayed like any other.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace rw {

class TraceeMemory;
struct InitialStack;

// Patches the vDSO of a process right after execve (before it ran any of
// its code) whose initial stack is `stack`. Both recording and replay do
// it, so the two images are the same. Returns what went wrong, or "".
std::string patch_vdso(const TraceeMemory& mem, const InitialStack& stack);
// The same for the vDSO mapped at `base`.
std::string patch_vdso_at(const TraceeMemory& mem, uint64_t base);
// The same for process `pid`'s vDSO, wherever /proc/PID/maps shows it: a
// process CRIU restored has the kernel's own vDSO again.
std::string patch_vdso_of(pid_t pid);

// Writes the kernel's vDSO code `original` back into process `tgid`
// (undoing patch_vdso), whose threads `stopped` are all ptrace-stopped:
// one inside rewind's code is first moved where the kernel's code has it
// (the function's start if its call is still to be made, past its return
// if it was made). Returns what could not be done.
std::vector<std::string> put_back_vdso(pid_t tgid, const std::vector<pid_t>& stopped,
                                       const std::vector<uint8_t>& original);

// Hides the vDSO from the program (AT_SYSINFO_EHDR becomes AT_IGNORE), as
// recordings made before the vDSO was patched did: replay does the same
// for them. Returns false if the stack could not be written.
bool hide_vdso(const TraceeMemory& mem, InitialStack& stack);

} // namespace rw
