# The agent's flat code (IN) as a C++ array of bytes (OUT).
file(READ ${IN} hex HEX)
string(LENGTH "${hex}" digits)
if(digits EQUAL 0)
  message(FATAL_ERROR "the syscall agent's code is empty")
endif()
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
string(REGEX REPLACE "((0x..,){16})" "\\1\n    " bytes "${bytes}")
file(WRITE ${OUT} "// Generated from replay/agent by embed_code.cmake.\n#pragma once\n#include <cstdint>\n\nnamespace rw::replay {\ninline constexpr uint8_t kSyscallAgentCode[] = {\n    ${bytes}\n};\n}\n")
