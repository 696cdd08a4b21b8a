// The whole register state of a stopped thread: general registers, x87
// and SSE, and the upper halves of the AVX registers, read and written
// through ptrace.
#pragma once

#include <sys/types.h>
#include <sys/user.h>

#include <array>
#include <cstdint>

#include "event.h"

namespace rw {

struct RegisterFile {
    Registers gp;
    user_fpregs_struct fp{};
    std::array<uint8_t, 256> ymm_high{}; // 16 × 16 bytes
    bool has_avx = false;
};

RegisterFile read_register_file(pid_t tid);
void write_register_file(pid_t tid, const RegisterFile& regs);

} // namespace rw
