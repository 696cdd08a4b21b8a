// rewind record [--output DIR] [--] PROGRAM [ARGS…]
#include <chrono>
#include <cctype>
#include <cstring>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <set>

#include "attach.h"
#include "attached_tree.h"
#include "commands.h"
#include "exit_like.h"
#include "launch_detach.h"
#include "recorder.h"
#include "start_image.h"
#include "tsc.h"

namespace rw::cli {
namespace {

// The program did something rewind cannot record: the recording stopped
// there (as `rewind replay` refuses what it cannot reproduce, with 91 too).
constexpr int kRecordRefused = 91;

// A number and its unit ("2.5GiB": 2.5, "GiB"); no number: nullopt.
std::optional<std::pair<double, std::string>> number_and_unit(const std::string& text)
{
    size_t used = 0;
    double value = 0;
    try {
        value = std::stod(text, &used);
    } catch (const std::exception&) {
        return std::nullopt;
    }
    return std::pair{value, text.substr(used)};
}

// "30s", "5m", "1h", "250ms", or plain seconds.
std::chrono::milliseconds parse_duration(const std::string& option, const std::string& text)
{
    auto number = number_and_unit(text);
    const std::string unit = number ? number->second : "";
    const double value = number ? number->first : 0;
    double ms = unit == "ms" ? 1 : unit == "s" || unit.empty() ? 1e3 : unit == "m" ? 60e3 : unit == "h" ? 3600e3 : -1;
    if (!number || ms < 0 || value <= 0)
        throw UsageError(option + " takes a duration such as 30s, 5m, 1h or 250ms, not '" + text + "'");
    return std::chrono::milliseconds(static_cast<int64_t>(value * ms));
}

// --window's "10m" (a span, as parse_duration) or "2GiB" (a size: B, KiB,
// MiB, GiB, or K, M, G for the same).
RecordWindow parse_window(const std::string& text)
{
    RecordWindow w;
    w.text = text;
    auto number = number_and_unit(text);
    const std::string unit = number ? number->second : "";
    const double value = number ? number->first : 0;
    double scale = unit == "B"                    ? 1
                   : unit == "KiB" || unit == "K" ? 0x1p10
                   : unit == "MiB" || unit == "M" ? 0x1p20
                   : unit == "GiB" || unit == "G" ? 0x1p30
                                                  : 0;
    if (number && scale > 0) {
        if (value * scale < 0x1p20)
            throw UsageError("--window takes at least 1MiB, not '" + text + "'");
        w.bytes = static_cast<uint64_t>(value * scale);
        return w;
    }
    try {
        w.span = parse_duration("--window", text);
    } catch (const UsageError&) {
        throw UsageError("--window takes a span (10m, 1h, 30s) or a size (512MiB, 2GiB), not '" + text + "'");
    }
    if (*w.span < std::chrono::seconds(2))
        throw UsageError("--window takes a span of 2s at least, not '" + text + "'");
    return w;
}

// --freeze-on's signal: USR2, SIGUSR2 or 12. Not one the recorder keeps
// for itself (the detach's, SIGCHLD) nor one that cannot be caught.
int parse_freeze_signal(std::string text)
{
    for (auto& c : text)
        c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (text.starts_with("SIG"))
        text = text.substr(3);
    int sig = 0;
    for (int s = 1; s < SIGRTMIN && !sig; s++)
        if (const char* name = sigabbrev_np(s); name && text == name)
            sig = s;
    if (!sig && !text.empty() && text.find_first_not_of("0123456789") == std::string::npos)
        sig = std::stoi(text);
    if (sig <= 0 || sig >= SIGRTMIN || sig == SIGKILL || sig == SIGSTOP || sig == SIGCHLD || sig == SIGINT ||
        sig == SIGTERM || sig == SIGHUP || sig == SIGQUIT)
        throw UsageError("--freeze-on takes a signal the recorder can give it (USR1, USR2, WINCH…: not INT, TERM, "
                         "HUP, QUIT, which end the recording, nor CHLD, KILL, STOP), not '" +
                         text + "'");
    return sig;
}

// The start image is the replay's: made by replay/landmarks for the recorder.
StartImageMaker start_image_maker()
{
    auto writer = std::make_shared<replay::StartImageWriter>();
    StartImageMaker m;
    m.describe = [writer](const std::vector<ImagePoint>& points, const std::vector<SharedRegion>& shared) {
        std::vector<replay::StartProcess> processes;
        for (const auto& at : points) {
            replay::StartProcess p{at.pid, {}, at.syscall_insn};
            for (const auto& t : at.threads)
                p.threads.push_back({t.tid, t.regs, t.clear_child_tid});
            processes.push_back(std::move(p));
        }
        std::vector<replay::StartSharedMemory> memory;
        for (const auto& r : shared)
            memory.push_back({r.length, r.perms.size() > 1 && r.perms[1] == 'w', r.mapped_at});
        writer->describe(processes, memory);
    };
    m.dump = [writer](const std::filesystem::path& trace, const std::string& dir, const std::vector<pid_t>& copies) {
        writer->dump(trace, dir, copies);
    };
    m.finish = [writer](const std::filesystem::path& trace, const std::string& dir, uint64_t events,
                        const std::vector<Mapping>& mappings) { writer->finish(trace, dir, events, mappings); };
    return m;
}

} // namespace

void strip_record_separator(std::vector<char*>& args)
{
    size_t i = 1;
    while (i < args.size() && std::string_view(args[i]) != "record")
        i++;
    for (i++; i < args.size(); i++) {
        std::string_view a(args[i]);
        if (a == "--") {
            args.erase(args.begin() + static_cast<long>(i));
            return;
        }
        if (!a.starts_with("-"))
            return; // the program name: everything after it is the program's
        // Options that take a value (add_record's), so the value is not taken for the program.
        if ((a == "-o" || a == "--output" || a == "--ring-mib" || a == "--signal-delay-ms" || a == "--time-slice-ms" ||
             a == "--scrub-env" || a == "-p" || a == "--pid" || a == "--for" || a == "--detach-after" ||
             a == "--window" || a == "--freeze-on") &&
            i + 1 < args.size())
            i++;
    }
}

std::vector<std::string> take_passthrough(std::vector<char*>& args, std::string_view subcommand)
{
    std::vector<std::string> out;
    if (args.size() < 2 || std::string_view(args[1]) != subcommand)
        return out;
    for (size_t i = 2; i < args.size(); i++) {
        if (std::string_view(args[i]) == "--") {
            out.assign(args.begin() + static_cast<long>(i) + 1, args.end());
            args.resize(i);
            break;
        }
    }
    return out;
}

void add_record(CLI::App& app, Outcome& outcome)
{
    auto* cmd = app.add_subcommand("record", "Run a program and record its execution");
    auto options = std::make_shared<RecordOptions>();
    auto output = std::make_shared<std::string>();
    auto quiet = std::make_shared<bool>(false);
    auto ring_mib = std::make_shared<uint32_t>(64);
    auto signal_delay = std::make_shared<int>(10);
    cmd->add_option("-o,--output", *output, "Trace directory to create (default: $REWIND_DIR/PROGRAM-N)");
    cmd->add_flag("-q,--quiet", *quiet, "Print nothing but the program's own output");
    cmd->add_option("--ring-mib", *ring_mib, "Kernel ring buffer size in MiB (a power of two)")
        ->check(CLI::Range(1, 4096));
    cmd->add_option("--signal-delay-ms", *signal_delay,
                    "How long a signal that interrupts user code may wait for the thread's next syscall "
                    "before it is delivered where the thread stands (replay then searches for that point)")
        ->check(CLI::Range(1, 60000));
    auto slice = std::make_shared<int>(50);
    cmd->add_option("--time-slice-ms", *slice,
                    "Threads of a process run one at a time; one that spins or computes without a syscall "
                    "while others wait is preempted after this long")
        ->check(CLI::Range(1, 60000));
    cmd->add_flag("--wait", options->wait_all,
                  "Record until every process of the program has exited; by default the recording ends when "
                  "the program itself exits, and the processes it left running (daemons) are killed");
    cmd->add_flag("--chaos", options->chaos,
                  "Hand the CPU to a random waiting thread instead of the longest waiting one, so that "
                  "repeated recordings try other interleavings");
    cmd->add_flag("--parallel", options->parallel,
                  "Run the threads of a process on all CPUs (no stop per syscall): libc's synchronization "
                  "calls (mutexes, rwlocks, condition variables, semaphores, barriers, spinlocks, once, "
                  "create/join) are put in one global order, and replay follows it. Exact for programs whose "
                  "shared data those calls protect; a data race or lock-free code (atomics) makes replay "
                  "report a divergence")
        ->excludes("--chaos");
    auto scrub = std::make_shared<std::vector<std::string>>();
    cmd->add_option("--scrub-env", *scrub,
                    "Keep NAME's value out of the trace (repeat, or NAME,NAME): the program sees it while "
                    "recorded; the trace, and so the replayed program, has a placeholder of the same length")
        ->expected(1) // one NAME (or NAME,NAME) per --scrub-env: the program's name follows
        ->allow_extra_args(false)
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
        ->delimiter(',')
        ->type_name("NAME");
    auto pid = std::make_shared<int>(0);
    cmd->add_option("-p,--pid", *pid,
                    "Record this running process (every thread) from now on instead of starting a program; the "
                    "recording ends with a detach (Ctrl-C, --for, or the process's end), after which it runs on "
                    "as if rewind had never been there");
    auto tree = std::make_shared<bool>(false);
    cmd->add_flag("--tree", *tree,
                  "With --pid: record the processes below it too (its children, theirs…), attached at the same "
                  "moment; the start image has them all");
    auto for_text = std::make_shared<std::string>();
    cmd->add_option("--for", *for_text, "With --pid: detach after this long (30s, 5m, 1h, 250ms)");
    auto detach_text = std::make_shared<std::string>();
    cmd->add_option("--detach-after", *detach_text,
                    "Record the program only for this long (30s, 5m, 1h, 250ms), then detach: it runs on "
                    "unrecorded, as without rewind, and rewind waits for it and exits with its status. Such a "
                    "program gets no recording filter, as an attached process: one that traces processes itself "
                    "gets the kernel's answers")
        ->excludes("--for");
    auto window_text = std::make_shared<std::string>();
    cmd->add_option("--window", *window_text,
                    "With --pid: a flight recorder. Record until the detach (Ctrl-C, rewind stop, --for, or the "
                    "process's end or crash), keeping only the end of the recording: at least this span (10m, 1h) "
                    "or at most about this much disk (2GiB). Start images are taken again as it goes; the trace "
                    "starts at the oldest one kept");
    auto freeze_text = std::make_shared<std::string>();
    cmd->add_option("--freeze-on", *freeze_text,
                    "With --window: this signal to rewind record (default USR1) writes the window so far out as a "
                    "trace of its own (TRACE.1, TRACE.2, …) and the recording goes on")
        ->needs("--window");
    cmd->prefix_command(); // everything from the program name on is the program's
    cmd->footer("Usage: rewind record [OPTIONS] [--] PROGRAM [ARGS...]\n"
                "       rewind record --pid PID [--tree] [--for DURATION] [--window SPAN|SIZE] [OPTIONS]\n"
                "       rewind record --detach-after DURATION [OPTIONS] [--] PROGRAM [ARGS...]\n"
                "rewind's exit status is the program's; 91 when rewind refused to record on (the program "
                "traces processes itself: ptrace), 1 when the disk filled. Examples:\n  rewind record -- ls -l /tmp\n"
                "  rewind record --pid 1234 --for 30s\n"
                "The trace keeps the program's environment (meta.json, each exec): use --scrub-env for "
                "secrets. A program that uses a scrubbed value in what it does (writes it, sends it) "
                "diverges on replay there.");
    cmd->callback([=, &outcome] {
        if (!output->empty())
            options->output = *output;
        options->command = cmd->remaining();
        if (*pid) {
            if (!options->command.empty())
                throw UsageError("--pid records a process that already runs: give no program");
            if (options->parallel)
                throw UsageError("--pid records threads one at a time; --parallel is for programs rewind starts");
            options->attach_pid = *pid;
            options->attach_tree = *tree;
            options->start_images = start_image_maker;
            if (*tree && !window_text->empty())
                throw UsageError("--window records one process (its start images are taken again as it goes); "
                                 "it cannot go with --tree");
        } else if (*tree) {
            throw UsageError("--tree goes with --pid (it records the processes below a running one)");
        } else if (!for_text->empty()) {
            throw UsageError("--for goes with --pid (for a program rewind starts: --detach-after)");
        } else if (!window_text->empty()) {
            throw UsageError("--window goes with --pid (it records a running process)");
        }
        if (!window_text->empty()) {
            options->window = parse_window(*window_text);
            if (!freeze_text->empty())
                options->window->freeze_signal = parse_freeze_signal(*freeze_text);
        }
        if (!for_text->empty())
            options->detach_after = parse_duration("--for", *for_text);
        if (!detach_text->empty()) {
            if (options->parallel)
                throw UsageError("--detach-after records threads one at a time; it cannot go with --parallel");
            options->detach_after = parse_duration("--detach-after", *detach_text);
        }
        for (const auto& name : *scrub)
            if (name.empty() || name.find('=') != std::string::npos)
                throw UsageError("--scrub-env takes variable names (NAME, not NAME=VALUE): '" + name + "'");
        options->scrub_env = EnvScrub(std::set<std::string>(scrub->begin(), scrub->end()));
        uint32_t ring = *ring_mib << 20;
        if (ring & (ring - 1))
            throw UsageError("--ring-mib must be a power of two");
        options->ring_bytes = ring;
        options->signal_fallback = std::chrono::milliseconds(*signal_delay);
        options->time_slice = std::chrono::milliseconds(*slice);
        options->started = [quiet, pid, for_text] {
            if (!*quiet && *pid)
                std::fprintf(stderr, "rewind: attached to process %d; recording %s\n", *pid,
                             for_text->empty() ? "until Ctrl-C (or the process ends), then detaching"
                                               : ("for " + *for_text + ", then detaching").c_str());
            if (!*quiet && !tsc_trap_works())
                std::fprintf(stderr, "rewind: warning: this machine does not trap rdtsc (PR_SET_TSC is ignored); a "
                                     "program that reads the TSC directly will not replay (`rewind doctor`)\n");
        };
        RecordResult r = record(*options);
        if (r.end.disk_full_at) {
            std::fprintf(stderr,
                         "rewind: the disk filled while recording to %s: the trace ends after event %llu, and the "
                         "program was stopped there (it replays up to that point; see `rewind info`)\n",
                         r.trace.c_str(), static_cast<unsigned long long>(*r.end.disk_full_at));
            outcome.exit_code = 1;
            return;
        }
        if (r.end.refusal) {
            // Said even with -q: the program did not run to its end.
            std::fprintf(stderr,
                         "rewind: %s\nrewind: the recording stopped there and the program was killed; the trace %s "
                         "ends at event %llu and replays up to there (see `rewind info`)\n",
                         r.end.refusal->why.c_str(), r.trace.c_str(),
                         static_cast<unsigned long long>(r.end.refusal->event));
            outcome.exit_code = kRecordRefused;
            return;
        }
        if (!*quiet && r.end.killed_at_exit)
            std::fprintf(stderr,
                         "rewind: %s exited and left %llu process%s running: killed, and the recording ends here "
                         "(rewind record --wait records until every process exits)\n",
                         options->command[0].c_str(), static_cast<unsigned long long>(r.end.killed_at_exit),
                         r.end.killed_at_exit == 1 ? "" : "es");
        if (!*quiet && *pid) {
            std::string below;
            if (*tree)
                if (auto n = read_meta(r.trace).attached->descendants.size(); n)
                    below = " and the " + std::to_string(n) + " process" + (n == 1 ? "" : "es") + " below it";
            std::fprintf(stderr, "rewind: recorded %llu events of process %d%s to %s%s\n",
                         static_cast<unsigned long long>(r.end.events), *pid, below.c_str(), r.trace.c_str(),
                         r.end.complete ? "" : " (INCOMPLETE: see `rewind info`)");
            if (r.end.detached)
                std::fprintf(stderr, "rewind: detached (%s); the process%s run%s on\n", r.end.detach_reason.c_str(),
                             below.empty() ? "" : "es", below.empty() ? "s" : "");
        } else if (!*quiet) {
            std::fprintf(stderr, "rewind: recorded %llu events of %s to %s%s\n",
                         static_cast<unsigned long long>(r.end.events), options->command[0].c_str(), r.trace.c_str(),
                         r.end.complete ? "" : " (INCOMPLETE: see `rewind info`)");
        }
        if (r.runs_on) {
            if (!*quiet)
                std::fprintf(stderr, "rewind: detached (%s); %s runs on unrecorded\n", r.end.detach_reason.c_str(),
                             options->command[0].c_str());
            int status = wait_for_program(r.runs_on);
            exit_like(ExitStatus::from_wait_status(status));
        }
        if (r.end.detached)
            return; // (the program's status is not rewind's: it runs on)
        exit_like(r.end.exit);
    });
}

} // namespace rw::cli
