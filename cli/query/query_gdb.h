// What the whole-recording queries (rewind calls, rewind writes) ask gdb:
// the replay server's rw-query, where the program's symbols are, and what
// the debug information says about code addresses and types.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "gdb_mi.h"
#include "nlohmann/json.hpp"

namespace rw::cli {

// What the user asked cannot be queried (no such function, not an lvalue,
// too many bytes): their input, not a failure of the replay.
struct QueryInputError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// A tool command's JSON reply; throws with the server's error.
nlohmann::json tool_reply(GdbMi& gdb, const std::string& command);

// Moves the replay to the program's end and loads what gdb needs there (the
// program it runs by then, its libraries), so that every function and
// global has its address. `sysroot` is where the trace's files are.
void go_to_end(GdbMi& gdb, const std::string& sysroot);

// A type as the debug information has it, classified for reading its
// value from registers or bytes.
struct TypeInfo {
    std::string name; // "const char *"
    std::string kind; // int, char, bool, enum, pointer, float, other
    uint64_t size = 0;
    bool is_signed = false;
    std::string target;                                          // pointer: the type pointed to
    std::string format(const std::vector<uint8_t>& bytes) const; // little-endian, `size` bytes
    std::string format(uint64_t low_bits) const;
};

struct Parameter {
    std::string name;
    TypeInfo type;
};

// A function's entry and, where there is debug information, its parameters.
struct FunctionInfo {
    std::string name;
    uint64_t entry = 0;
    uint64_t body = 0; // after the prologue, where gdb reads the parameters (entry without debug information)
    bool has_debug_info = false;
    std::vector<Parameter> params;
    std::optional<TypeInfo> returns; // nullopt: void (or unknown without debug information)
    std::string file;
    int line = 0;
    std::string signature() const; // "int f(int a, const char *s)"
};
// Throws if gdb knows no function of that name where the replay is.
FunctionInfo function_info(GdbMi& gdb, const std::string& name);

// The address, size and type of an lvalue where the replay is.
struct LvalueInfo {
    uint64_t address = 0;
    TypeInfo type;
};
// Throws with gdb's message if EXPR is not an lvalue there.
LvalueInfo lvalue_info(GdbMi& gdb, const std::string& expr);

// Where a code address is: function, source line, or the object it is in.
struct CodePlace {
    std::string function;
    std::string file;
    int line = 0;
    std::string object;
    std::string describe() const; // "main (prog.c:27)", "memcpy in libc.so.6", "0x…"
};
class CodePlaces {
public:
    // A code address gdb cannot name may be in a library it has not loaded
    // where the replay stands: it loads the libraries there, and where
    // `may_move_replay`, those at the program's end.
    explicit CodePlaces(GdbMi& gdb, bool may_move_replay = true) : gdb_(gdb), may_move_(may_move_replay) {}
    const CodePlace& at(uint64_t pc);

private:
    std::optional<CodePlace> lookup(uint64_t pc);
    GdbMi& gdb_;
    bool may_move_;
    bool loaded_at_end_ = false;
    std::map<uint64_t, CodePlace> known_;
    std::string program_; // as recorded
};

} // namespace rw::cli
