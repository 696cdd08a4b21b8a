// The table of sub-operations (syscall_subcommands.cpp), which the index of
// syscall_table.cpp reads.
#pragma once

#include <vector>

#include "syscall_table.h"

namespace rw::detail {

const std::vector<SubcommandInfo>& subcommand_table();

} // namespace rw::detail
