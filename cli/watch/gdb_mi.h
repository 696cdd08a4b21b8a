// A gdb driven through its machine interface (GDB/MI): commands go in with
// a token, and the result record with that token comes back parsed.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace rw::cli {

// An MI value: a string, a tuple {name=value,…} or a list [value,…] / [name=value,…].
struct MiValue {
    enum class Kind { String, Tuple, List } kind = Kind::String;
    std::string text;
    std::vector<std::pair<std::string, MiValue>> items; // tuple and list (names empty in a value list)

    // The item of a tuple named `name`, or nullptr.
    const MiValue* get(const std::string& name) const;
    std::string str(const std::string& name, const std::string& otherwise = "") const;
};

struct MiResult {
    std::string result_class; // done, running, connected, error, exit
    MiValue values;           // the result's name=value pairs, as a tuple
    std::string console;      // what gdb printed meanwhile (console, target and log streams)
    bool ok() const { return result_class != "error"; }
    std::string error() const { return values.str("msg"); }
};

// Parses one MI result or async record's payload after the class: ",a=b,c={…}".
MiValue parse_mi_results(const std::string& text, size_t& pos);
// Parses a C string at `pos` (which is on the opening quote).
std::string parse_mi_cstring(const std::string& text, size_t& pos);
// `s` as an MI C string argument, quoted and escaped.
std::string mi_quote(const std::string& s);
// Whether gdb's error says it could not parse an expression (rather than
// evaluate it).
bool is_parse_error(const std::string& gdb_error);
// The reply of the replay server's rw-* monitor commands: the last line of
// JSON in what gdb printed ("" if there is none).
std::string last_json_line(const std::string& console);

class GdbMi {
public:
    // Starts `gdb` with the MI interpreter and these extra arguments.
    GdbMi(const std::string& gdb, const std::vector<std::string>& args);
    ~GdbMi();
    GdbMi(const GdbMi&) = delete;
    GdbMi& operator=(const GdbMi&) = delete;

    MiResult command(const std::string& mi_command);
    // A CLI command through `-interpreter-exec console`; what it printed.
    MiResult console(const std::string& cli_command);

private:
    std::optional<std::string> read_line();
    pid_t pid_ = -1;
    int to_gdb_ = -1, from_gdb_ = -1;
    std::string buffer_;
    size_t head_ = 0; // where the next line begins in buffer_
    unsigned token_ = 1;
};

} // namespace rw::cli
