// The processes of a recording, read from its event stream: who started
// whom, what each ran, how each ended, and which events are its own. What
// `rewind ps` shows and how `--pid`/`--exec` find the process to debug.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "event.h"

namespace rw {

class Trace;

struct RecordedProcess {
    Tid pid = 0;              // the recorded process id (its thread group id)
    Tid parent = 0;           // 0 for the recorded program itself
    uint64_t first_event = 0; // its fork, or the first exec for the program
    uint64_t last_event = 0;  // the last event of any of its threads
    uint64_t events = 0;      // events of its own threads
    struct Exec {
        uint64_t event = 0;
        std::string filename;
        std::vector<std::string> argv;
    };
    std::vector<Exec> execs;
    std::vector<std::string> inherited_argv; // the parent's command line at the fork (no exec yet)
    size_t threads = 1;
    bool attached = false;          // running when rewind attached (record --pid): there from event 0
    std::optional<int> exit_status; // wait-status form; absent if the trace ends first

    // The command line it ran last (or inherited).
    const std::vector<std::string>& command() const { return execs.empty() ? inherited_argv : execs.back().argv; }
    std::string describe_exit() const;
};

// In order of appearance. Throws what reading the trace throws.
std::vector<RecordedProcess> process_tree(const Trace& trace);

// The process `pid`, or the first one that exec'd a program named `name`
// (its file name or argv[0], with or without the directory); nullptr if none.
const RecordedProcess* find_process(const std::vector<RecordedProcess>& tree, Tid pid);
const RecordedProcess* find_process_by_exec(const std::vector<RecordedProcess>& tree, const std::string& name);
// "pid 10 (sh -c ...), pid 11 (ls)": for messages that say what there is.
std::string list_processes(const std::vector<RecordedProcess>& tree);

} // namespace rw
