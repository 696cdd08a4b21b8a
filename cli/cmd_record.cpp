// rewind record [--output DIR] [--] PROGRAM [ARGS…]
#include <set>
#include <cstdio>

#include "commands.h"
#include "exit_like.h"
#include "recorder.h"
#include "tsc.h"

namespace rw::cli {
namespace {

// The program did something rewind cannot record: the recording stopped
// there (as `rewind replay` refuses what it cannot reproduce, with 91 too).
constexpr int kRecordRefused = 91;

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
             a == "--scrub-env") &&
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
    cmd->prefix_command(); // everything from the program name on is the program's
    cmd->footer("Usage: rewind record [OPTIONS] [--] PROGRAM [ARGS...]\n"
                "rewind's exit status is the program's; 91 when rewind refused to record on (the program "
                "traces processes itself: ptrace), 1 when the disk filled. Example:\n  rewind record -- ls -l /tmp\n"
                "The trace keeps the program's environment (meta.json, each exec): use --scrub-env for "
                "secrets. A program that uses a scrubbed value in what it does (writes it, sends it) "
                "diverges on replay there.");
    cmd->callback([=, &outcome] {
        if (!output->empty())
            options->output = *output;
        options->command = cmd->remaining();
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
        options->started = [quiet] {
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
        if (!*quiet) {
            std::fprintf(stderr, "rewind: recorded %llu events of %s to %s%s\n",
                         static_cast<unsigned long long>(r.end.events), options->command[0].c_str(), r.trace.c_str(),
                         r.end.complete ? "" : " (INCOMPLETE: see `rewind info`)");
        }
        exit_like(r.end.exit);
    });
}

} // namespace rw::cli
