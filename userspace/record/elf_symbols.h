// Where a shared library's exported function lies in its file, for probes
// attached by offset. A library may export several versions of one name
// (glibc keeps pthread_cond_wait@GLIBC_2.2.5 beside the default
// pthread_cond_wait@@GLIBC_2.3.2); programs linked today call the default.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>

namespace rw {

// File offsets of the default versions of `names` found in the ELF file at
// `path`; names it does not define are absent. Throws std::runtime_error
// for a file that is not a 64-bit ELF shared object.
std::map<std::string, uint64_t, std::less<>> function_offsets(const std::string& path,
                                                              std::span<const std::string_view> names);

} // namespace rw
