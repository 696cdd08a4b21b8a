// The register file as gdb sees it for an x86-64 thread: general
// registers, x87, SSE, the upper halves of the AVX registers, orig_rax and
// the segment bases, in the order the target description (target.xml)
// declares them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "register_file.h"

namespace rw::replay {

std::string target_description_xml();
int gdb_register_count();

// Hex of all registers ('g'), or of one ('p'); nullopt for an unknown number.
std::string encode_registers(const RegisterFile& regs);
std::optional<std::string> encode_register(const RegisterFile& regs, int regnum);
// From gdb's hex ('G', 'P'); false if malformed.
bool decode_registers(RegisterFile& regs, const std::string& hex);
bool decode_register(RegisterFile& regs, int regnum, const std::string& hex);

// gdb register numbers of the registers worth sending with every stop.
inline constexpr int kGdbRbp = 6, kGdbRsp = 7, kGdbRip = 16;

} // namespace rw::replay
