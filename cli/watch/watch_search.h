// Reverse expression watchpoints: the point of a recording where an
// expression took the value it has at the end (or at a given position),
// found by binary search, the expression evaluated by gdb in throwaway
// copies of the replayed process.
//
// The search narrows an interval [good, bad] level by level: event
// boundaries first (the events are landmarks a replay reaches cheaply);
// inside the stretch between two events, the writes to the memory EXPR
// reads where gdb watches it with a debug register (watch_writes.cpp);
// else, or where those are too many, snapshots taken at interrupts of a
// native run (one per run), each moved on to where the outermost call live
// across the interval next gets control back, so that EXPR is never judged
// in the middle of an update; then executions of the addresses calls return
// to (in that function, and in the frames live at the interval's ends),
// counted with hardware breakpoints; then single steps. Rule for a probe
// where the expression cannot be evaluated (a pointer not yet valid, a crash
// in a called function): it counts as good, that is, not yet the bad value.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <exception>
#include <optional>
#include <string>
#include <vector>

#include "expression_scope.h"
#include "gdb_mi.h"

namespace rw::cli {

struct WatchOptions {
    std::string expr;
    std::string at = "end"; // "end", an event number, "PCT%", or a position ("38:b…x3")
    std::string from;       // "": the start; else an event number or "PCT%" where EXPR differs from its value at `at`
    std::vector<std::string> prints; // also shown where the change happens, from the innermost frame that knows them
    std::function<void(const std::string&)> progress; // one-line status updates
    std::string sysroot; // gdb's sysroot: where the trace's files are, at their recorded paths
};

struct WatchReport {
    enum class Outcome { Found, NoChange, Unevaluable } outcome = Outcome::NoChange;
    std::string message; // for NoChange and Unevaluable: what was seen
    std::string at;      // the position EXPR was first evaluated at (--at's)

    // Found: the last state where EXPR was good, and the next one.
    std::string before, after; // positions
    std::string value_before, value_after;
    std::string what; // "instruction", or the event that changed it ("syscall read", "signal SIGINT"…)
    uint64_t thread = 0;
    uint64_t pc = 0;
    std::string instruction;    // disassembled
    std::string function, file; // file as in the debug info
    std::string object;         // the program or library, where there is no debug info for the line
    int line = 0;
    std::string source_line;
    std::vector<std::string> backtrace; // frames, innermost first
    std::string later_change;           // NoChange: a position after which EXPR last changed, if one was seen
    // Found, when EXPR cannot be evaluated just before the change: the last
    // position where the search saw it evaluated (not bad), and its value.
    std::string last_evaluable_position, last_evaluable_value; // position: "" if it names a snapshot of the search
    std::string last_evaluable_where;                          // "in FUNCTION (FILE:LINE)"
    // Found, EXPR not evaluable just before the change, and no probe of the
    // search saw it evaluated with another value before it.
    bool no_other_value_seen = false;
    std::string unevaluable_why; // no_other_value_seen: why it could not be evaluated just before
    std::vector<std::pair<std::string, std::string>> printed; // --print expressions and their values

    int probes = 0;
    std::vector<std::pair<std::string, std::string>> probe_log; // each probe in order: position, value
    int unevaluable = 0; // probes that could not evaluate EXPR (classified by where main gets control back)
    uint64_t snapshots_let_go = 0; // by the replay, because memory was short
    double seconds = 0;

    // How EXPR's names were resolved (once, for every probe).
    std::string scope;                                      // "main's frame", "file scope", ...
    std::vector<std::pair<std::string, std::string>> names; // name, what it is
    std::vector<std::string> other_meanings;                // "flag: a local of f, at POSITION"
};

// The server let a snapshot of the search go (memory was short): the
// positions it named cannot be reached any more. Not a runtime_error: the
// search reads those as "cannot evaluate or reach this here", and this
// must reach search_stretch, which starts the stretch again.
class SnapshotGone : public std::exception {
public:
    explicit SnapshotGone(std::string why) : why_(std::move(why)) {}
    const char* what() const noexcept override { return why_.c_str(); }

private:
    std::string why_;
};

class WatchSearch {
public:
    WatchSearch(GdbMi& gdb, WatchOptions options);
    WatchReport run();

private:
    struct Value {
        bool ok = false;
        std::string text; // the value, or "<cannot be evaluated: WHY>"
        std::string why;  // not ok: WHY
        // Unevaluable, but after the change where main gets control back.
        bool after_change = false;
    };
    struct Frame {
        std::string function;
        uint64_t pc = 0;
    };
    struct Interval {
        std::string good, bad; // positions: `bad` is `good` and one more segment
    };

    Value probe(const std::string& position);
    // An MI command about EXPR (the command, then EXPR with its names
    // pinned), run from the frame EXPR's names were resolved in.
    MiResult in_scope(const std::string& mi_command);
    // Notes where a plain name would have meant something else.
    void note_other_meanings(const std::string& position);
    bool is_bad(const Value& v) const { return v.ok ? v.text == bad_ : v.after_change; }
    std::string go(const std::string& position);                         // returns the position reached
    const std::string& arrived(const std::string& position);             // the replay has moved there
    std::string tool(const std::string& command);                        // a rw-* monitor command's JSON reply
    // The positions the search will come back to (rw-keep): where memory
    // is short, the replay lets their snapshots go last.
    void hold(const std::vector<std::string>& positions);
    double running_time(const std::string& from, const std::string& to); // seconds from `from` to `to`; goes to `to`

    std::optional<std::string> end_position();
    // gdb holds the symbols of `program`, which the process runs at the
    // replay's position (an exec the search went through is not reported
    // to gdb).
    void load_program(const std::string& program);
    // Replays up to `event` in steps, leaving a snapshot at each.
    void walk_to(uint64_t begin, uint64_t event);
    std::optional<uint64_t> event_at(const std::string& spec, uint64_t begin, uint64_t end_event); // an event or PCT%
    // Between the boundary good_event and the bad position, at event
    // bad_event; known_bad: an earlier boundary already seen bad, if any.
    Interval search_events(uint64_t good_event, const std::string& bad, uint64_t bad_event, uint64_t known_bad);
    // A boundary between them that halves the recorded time, or the middle
    // one where the times do not tell them apart (`by_time` false).
    uint64_t time_split(uint64_t lo, uint64_t hi, bool* by_time = nullptr, double* share = nullptr);
    // Boundaries at an eighth, a quarter and half of the recorded time
    // before `end`, the nearest first.
    std::vector<uint64_t> looking_back(uint64_t begin, uint64_t end);
    // A value that comes and goes (watch_last_change.cpp). Boundaries 1,
    // 2, 4, … events before bad_event: the first where EXPR differs, and in
    // known_bad the one probed before it.
    std::optional<uint64_t> gallop_events_back(uint64_t begin, uint64_t bad_event, uint64_t& known_bad);
    // Every boundary looked at has the bad value: the last change inside
    // the stretches before bad_position, the nearest first, looking back
    // over the writes to what EXPR reads, else in running time.
    // looked: how many stretches it looked inside. A change it finds at
    // an event is {where the thread arrives at it, the boundary after}.
    std::optional<Interval> last_change_inside(uint64_t begin, const std::string& bad_position, uint64_t& looked);
    // A change found in a stretch ending in end_segment, or a later one in
    // the instructions after it, where they are few enough to step.
    Interval latest_in_tail(Interval found, const std::string& end_segment);
    // Both ends of `in` have the bad value; quiet: set when the thread
    // did not write what EXPR reads there, or its writes looked at left
    // the end's value.
    std::optional<Interval> last_change_at_writes(const Interval& in, bool* quiet = nullptr);
    std::optional<Interval> last_change_in_time(const Interval& in);
    // The stretch from `in.good` to its bad end: writes, else time, then
    // code; again from its ends if a snapshot it made was let go.
    Interval search_stretch(const Interval& in);
    Interval search_stretch_once(const Interval& in);
    struct Piece {
        uint64_t addr = 0;
        uint32_t len = 0;
    };
    using Pieces = std::vector<Piece>;
    // The memory gdb would watch for EXPR at `position`, in pieces of a
    // debug register each (none where gdb watches in software, or it takes
    // more than two).
    Pieces watched_pieces(const std::string& position);
    // At the interval's good end, else at --at.
    Pieces pieces_for(const Interval& in);
    // Whether event `event` (a syscall) wrote some of those bytes.
    bool event_writes_to(uint64_t event, const Pieces& pieces);
    // The thread's writes to each in the interval (nullopt: too many to
    // count); the run also times the interval where they are few.
    // (most: a cap on the writes counted to each, 0 for the server's.)
    std::optional<std::vector<uint64_t>> count_writes(const Interval& in, const Pieces& pieces, uint64_t most = 0);
    // Where the thread arrives at the event after `boundary` (its syscall
    // instruction…), the end of the stretch from there; nullopt where the
    // event is another thread's or has no such place.
    std::optional<std::string> stretch_end(const std::string& boundary);
    // What the event after `boundary` is, for the report: "syscall read()", …
    std::string event_what(const std::string& boundary);
    // The change at a write to that memory, to the instruction; nullopt
    // where it is not at one.
    std::optional<Interval> search_writes(const Interval& in);
    // The instruction before the write that ends at `after_write`, reached
    // back from there; nullopt where it cannot be found.
    std::optional<std::string> instruction_before(const std::string& after_write);
    Interval search_code(Interval in);
    Interval search_anchors(Interval in);
    std::string settle(const std::string& anchor, const std::vector<Frame>& live); // live: outermost first
    // The calls live across the whole interval (the same functions at the
    // bottom of both ends' stacks), outermost first.
    std::vector<Frame> live_across(const Interval& in);
    // Innermost first. Read once per position: the replay is left at
    // `position` only by the first call.
    std::vector<Frame> frames_at(const std::string& position);
    std::vector<uint64_t> call_returns(const Interval& in); // of the outermost function live at both ends
    // Where the calls of the innermost function at the good end, and of the
    // functions it calls directly, return to: they divide a stretch that is
    // one long call of a function the outer levels only see from outside.
    std::vector<uint64_t> callee_returns(const Interval& in);
    struct FunctionCalls {
        std::vector<uint64_t> returns;    // the address after each call
        std::vector<uint64_t> targets;    // direct calls' destinations (not PLT stubs)
        std::vector<uint64_t> loop_heads; // targets of backward jumps
    };
    const FunctionCalls& calls_in(uint64_t pc); // of the function holding pc
    // Bisection between at(lo), good, and at(hi), bad: the last good k and
    // the first bad one after it. `progress` says where it stands.
    std::pair<uint64_t, uint64_t> bisect(uint64_t lo, uint64_t hi, const std::function<std::string(uint64_t)>& at,
                                         const std::function<std::string(uint64_t, uint64_t)>& progress,
                                         const std::function<uint64_t(uint64_t, uint64_t)>& split = {});
    // The same over executions of an instruction, trying both ends first.
    std::pair<uint64_t, uint64_t> bisect_executions(uint64_t lo, uint64_t hi,
                                                    const std::function<std::string(uint64_t)>& at,
                                                    const std::function<std::string(uint64_t, uint64_t)>& progress);
    // From `first` executions of y on (a count known to lie before the bad
    // anchor the search could not name).
    Interval gallop(const std::string& good, uint64_t y, const std::string& bad, uint64_t first = 1);
    std::optional<Interval> divide(const Interval& in, const std::vector<uint64_t>& used_out);
    Interval step_search(const Interval& in);
    void describe(WatchReport& report, const Interval& found);
    void status(const std::string& what);

    GdbMi& gdb_;
    WatchOptions options_;
    std::string bad_;
    int probes_ = 0;
    std::vector<std::pair<std::string, std::string>> probe_log_;
    int unevaluable_ = 0;
    bool settling_ = false; // evaluating where main gets control back after an unevaluable probe
    bool latest_first_ = false; // bisections look back from their bad end first (a value that comes and goes)
    std::vector<uint64_t> used_;
    std::map<std::string, Value> seen_;                       // positions already evaluated
    std::map<std::string, std::vector<Frame>> frames_;        // positions whose frames were read
    std::map<std::string, std::vector<uint64_t>> call_sites_; // function → the addresses its calls return to
    std::map<uint64_t, FunctionCalls> function_calls_;        // by any address in the function (cache)
    std::string here_;                                        // where the replay is, when known
    std::string program_;                                     // the program gdb holds the symbols of
    std::vector<uint64_t> marks_;                             // events the first pass stopped at
    std::map<std::pair<std::string, std::string>, double> running_times_; // measured runs (from, to)
    std::vector<double> lateness_;           // seconds each sampling alarm landed after its aim
    double lateness() const;                 // what to expect of the next
    bool soft_counting_ = false;             // the server counts executions with int3s (no debug registers)
    bool watchable_ = true;                  // gdb watches EXPR with debug registers (no calls, no registers)
    std::optional<Interval> found_at_write_; // the change, found at a write while naming anchors
    Pieces end_pieces_;                      // what gdb watches for EXPR at --at
    std::vector<std::string> held_;          // what rw-keep said last
    std::optional<std::pair<std::string, Value>> last_evaluable_; // the latest good probe that could evaluate EXPR
    ExpressionScope scope_;                                       // EXPR's one meaning
    std::map<std::string, std::string> other_meanings_;           // name: the first other meaning seen, and where
};

} // namespace rw::cli
