#include "recorder.h"

#include "process_image.h"

#include <sys/mman.h>
#include <sys/resource.h>

#include <sys/ptrace.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sys/syscall.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <map>
#include <optional>
#include <set>

#include "attach.h"
#include "record_meta.h"
#include "attached_tree.h"
#include "bpf_capture.h"
#include "event_assembler.h"
#include "event_stream.h"
#include "file_store.h"
#include "flight_window.h"
#include "launch_detach.h"
#include "launcher.h"
#include "mapped_files.h"
#include "read_copies.h"
#include "random_sites.h"
#include "seq_window.h"
#include "supervisor.h"
#include "syscall_table.h"
#include "system_info.h"
#include "trace_dir.h"
#include "tsc.h"
#include "window_images.h"
#include "version.h"

extern char** environ;

namespace rw {
namespace {

// The program runs in rewind's process group, as the shell started rewind:
// a signal it sends to its group (kill(0, SIGABRT), raise through
// killpg, or to its parent) reaches the recorder too, and must not end the
// recording. The program gets the dispositions rewind was started with
// (SignalState), not these. SIGINT and SIGQUIT from the terminal reach the
// program directly; SIGTERM and SIGHUP the supervisor forwards to it;
// Ctrl-Z (SIGTSTP) still stops the recorder with its program.
void shield_from_program_signals()
{
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    for (int sig : {SIGINT, SIGQUIT, SIGABRT, SIGTRAP, SIGTTIN, SIGTTOU, SIGUSR1, SIGUSR2, SIGALRM, SIGPIPE, SIGVTALRM,
                    SIGPROF, SIGIO, SIGPWR, SIGSYS, SIGXCPU, SIGXFSZ, SIGSTKFLT})
        sigaction(sig, &ignore, nullptr);
    for (int sig = SIGRTMIN; sig <= SIGRTMAX; sig++)
        sigaction(sig, &ignore, nullptr);
}

// Writes events to the stream and keeps the numbers end.json reports.
// Space set aside at the start of a recording so that end.json can still
// be written if the disk fills up.
class EndReserve {
public:
    explicit EndReserve(const std::filesystem::path& dir) : path_(dir / ".end-reserve")
    {
        int fd = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (fd < 0)
            return;
        std::vector<char> zeros(kBytes, 0);
        if (::write(fd, zeros.data(), zeros.size()) != static_cast<ssize_t>(zeros.size()))
            ::unlink(path_.c_str());
        ::close(fd);
    }
    ~EndReserve() { release(); }
    void release()
    {
        std::error_code ec;
        std::filesystem::remove(path_, ec);
    }

private:
    static constexpr size_t kBytes = 16 << 10; // end.json is a few KiB
    std::filesystem::path path_;
};

class TraceSink : public EventSink {
public:
    explicit TraceSink(EventStreamWriter& writer) : writer_(writer) {}

    void emit(Event event) override
    {
        if (ended_)
            return;
        uint64_t seq = event_seq(event);
        std::visit([this](const auto& e) { count(e); }, event);
        writer_.append(event);
        if (end_seq_ && seq == *end_seq_) {
            ended_ = true;
            last_index_ = writer_.events_written() - 1;
        }
    }

    // The trace ends with the event of this seq: later ones are dropped.
    void end_with(uint64_t seq) { end_seq_ = seq; }
    // Where the trace ended by end_with, once it has.
    std::optional<uint64_t> ended_at() const { return ended_ ? std::optional(last_index_) : std::nullopt; }

    void fill(TraceEnd& end) const
    {
        end.events = writer_.events_written();
        end.memory_bytes = memory_bytes_;
        end.processes = processes_.size();
        end.threads = threads_.size();
        end.syscall_counts = counts_;
        end.files_written_while_mapped.assign(written_while_mapped_.begin(), written_while_mapped_.end());
        end.files_mapped_shared_writable.emplace(mapped_shared_writable_.begin(), mapped_shared_writable_.end());
    }

private:
    void count(const SyscallEvent& e)
    {
        if (!(e.flags & kSyscallChildReturn))
            counts_[syscall_name(e.nr)]++;
        threads_.insert(e.tid);
        processes_.insert(e.tgid);
        for (const auto& m : e.memory)
            memory_bytes_ += m.length;
        if ((e.flags & kSyscallMappedWrite) && e.file)
            written_while_mapped_.insert({e.file->dev, e.file->ino});
        if (e.nr == SYS_mmap && e.ret >= 0 && e.file && (e.args[3] & MAP_SHARED) && (e.args[2] & PROT_WRITE))
            mapped_shared_writable_.insert({e.file->dev, e.file->ino});
    }
    void count(const ForkEvent& e)
    {
        threads_.insert(e.child_tid);
        processes_.insert(e.child_tgid);
    }
    void count(const ExecEvent& e) { processes_.insert(e.tgid); }
    template <typename T> void count(const T&) {}

    EventStreamWriter& writer_;
    std::optional<uint64_t> end_seq_;
    bool ended_ = false;
    uint64_t last_index_ = 0;
    uint64_t memory_bytes_ = 0;
    std::set<Tid> threads_;
    std::set<Tid> processes_;
    std::map<std::string, uint64_t> counts_;
    std::set<FileIdentity> written_while_mapped_;
    std::set<FileIdentity> mapped_shared_writable_;
};

// Nothing once the thread has exited (the ring's records are read after
// the fact).
std::optional<pid_t> tgid_of(pid_t tid)
{
    if (auto tgid = proc_status_number(tid, "Tgid"))
        return static_cast<pid_t>(*tgid);
    return std::nullopt;
}

// The libraries whose synchronization calls --parallel orders: libc (which
// holds libpthread since glibc 2.34) and an older glibc's libpthread.
bool is_thread_library(const std::string& path)
{
    std::string name = std::filesystem::path(path).filename().string();
    return name.starts_with("libc.so") || name.starts_with("libpthread.so");
}

std::vector<std::string> current_environment()
{
    std::vector<std::string> env;
    for (char** e = environ; *e; e++)
        env.emplace_back(*e);
    return env;
}

} // namespace

void check_record_prerequisites()
{
    auto missing = missing_record_capabilities();
    if (!missing.empty()) {
        std::string names;
        for (auto c : missing)
            names += (names.empty() ? "" : ", ") + std::string(capability_name(c));
        throw UsageError("rewind record needs root, or these capabilities: " + names + " (missing: " + names + ")", 1);
    }
    if (!kernel_has_btf())
        throw UsageError(std::string("this kernel has no BTF (") + kKernelBtfPath +
                             " is missing); rewind's eBPF capture needs CONFIG_DEBUG_INFO_BTF=y",
                         1);
}

RecordResult record(const RecordOptions& options)
{
    const bool attaching = options.attach_pid != 0;
    if (!attaching && options.command.empty())
        throw UsageError("nothing to record: give a program, e.g. `rewind record -- ls -l`");
    check_record_prerequisites();
    std::string program, exec_path;
    std::vector<std::string> envp;
    std::filesystem::path dir;
    TraceMeta meta;
    if (attaching) {
        if (std::string why = attach_refusal(options.attach_pid); !why.empty())
            throw UsageError("cannot attach: " + why, 1);
        if (options.attach_tree)
            for (pid_t below : descendants_of(options.attach_pid))
                if (std::string why = attach_refusal(below); !why.empty() && !ending(below))
                    throw UsageError("cannot attach to process " + std::to_string(below) + " below process " +
                                         std::to_string(options.attach_pid) + " (--tree): " + why,
                                     1);
        meta = meta_of_running(options.attach_pid, options);
        program = meta.program;
        dir = create_trace_dir(options.output, std::filesystem::path(program).filename());
    } else {
        program = find_program(options.command[0]);
        if (program.empty()) {
            // As a shell: 126 for a file that is there but cannot be executed.
            struct stat st {};
            const std::string& name = options.command[0];
            if (name.find('/') != std::string::npos && ::stat(name.c_str(), &st) == 0)
                throw UsageError(
                    "cannot execute " + name + ": " +
                        (S_ISDIR(st.st_mode) ? "it is a directory" : "it is not executable (no x permission)"),
                    126);
            throw UsageError("program not found: " + name, 127);
        }
        // Executed as a shell would (a #! script sees this path as its argv[1]);
        // the trace names it absolutely.
        exec_path = program;
        program = std::filesystem::absolute(program).lexically_normal().string();
        envp = current_environment();
        dir = create_trace_dir(options.output, std::filesystem::path(program).filename());
        std::vector<std::string> kept = envp;
        options.scrub_env.apply(kept);
        meta = make_meta(program, options.command, kept, options.ring_bytes);
        meta.scrubbed_env.assign(options.scrub_env.names().begin(), options.scrub_env.names().end());
    }
    meta.thread_mode = options.parallel ? "parallel" : "serialized";
    write_meta(dir, meta);
    // The signals that end the recording (and the flight recorder's
    // freeze) wait for the supervisor, which reads them once it runs: one
    // that comes while rewind attaches or saves the start image (`rewind
    // stop` as soon as the trace is there) must not kill it.
    struct HeldSignals {
        sigset_t before;
        explicit HeldSignals(const RecordOptions& o)
        {
            sigset_t held;
            sigemptyset(&held);
            for (int s : {SIGTERM, SIGHUP})
                sigaddset(&held, s);
            if (o.attach_pid)
                sigaddset(&held, SIGINT);
            if (o.window)
                sigaddset(&held, o.window->freeze_signal);
            sigprocmask(SIG_BLOCK, &held, &before);
        }
        ~HeldSignals() { sigprocmask(SIG_SETMASK, &before, nullptr); }
    } held_signals(options);
    note_recorder(dir); // for rewind stop
    struct Forget {
        std::filesystem::path dir;
        ~Forget() { forget_recorder(dir); }
    } forget{dir};

    EventStreamWriter writer(dir / trace_files::kEvents, options.zstd_level);
    TraceSink trace_sink(writer);
    SeqWindow seq_window(trace_sink);
    EventOrderer sink(options.parallel ? static_cast<EventSink&>(seq_window) : trace_sink);
    sink.spill_to(dir, EventOrderer::kDefaultHeldBudget);
    FileStore store(dir / trace_files::kFiles);
    EventAssembler* assembler_ptr = nullptr;
    // Before the capture starts its threads (they must block it too).
    BpfCapture capture({options.ring_bytes, std::max<uint32_t>(options.ring_bytes / 8, 4096), options.parallel},
                       [&](std::span<const uint8_t> rec) { assembler_ptr->on_record(rec); });
    seq_window.set_stalled_test([&capture](uint64_t seq) { return capture.is_stalled_seq(seq); });
    MappedFiles files(store, capture);
    std::vector<std::string> probe_problems;
    RandomSites random_sites;
    files.watch_mappings([&](const FileRef& file, int fd) { return random_sites.scan(fd, file.content_hash); },
                         [&](pid_t tid, const std::string&, const FileRef& file) {
                             std::optional<pid_t> tgid = tgid_of(tid);
                             if (!tgid)
                                 return;
                             if (auto problem = random_sites.plant(tid, *tgid, file.content_hash, file.path);
                                 !problem.empty())
                                 probe_problems.push_back(problem + ": the numbers it gives are not recorded");
                         });
    if (options.parallel)
        files.watch_mappings([](const FileRef& file, int) { return is_thread_library(file.path); },
                             [&](pid_t tid, const std::string& open_path, const FileRef& file) {
                                 // A mapping made by a thread that has exited since: its process
                                 // was probed at its first mapping of the library, made while
                                 // it started (attaching by the gone thread's id failed: ESRCH).
                                 std::optional<pid_t> tgid = tgid_of(tid);
                                 if (!tgid)
                                     return;
                                 try {
                                     capture.attach_sync_probes(*tgid, open_path, file.path);
                                 } catch (const CaptureError& e) {
                                     probe_problems.push_back(std::string(e.what()) +
                                                              ": its threads' lock operations are not ordered");
                                 }
                             });
    ReadCopies reads(store, capture);
    EventAssembler assembler(sink, files, reads);
    assembler_ptr = &assembler;

    uint64_t started = unix_time_ns();
    std::unique_ptr<Launcher> launcher;
    std::unique_ptr<AttachedTree> tree;
    std::vector<Mapping> start_mappings; // every attached process's (the start image mounts their files)
    StartImageMaker first_image;
    std::optional<FlightWindow> window;
    pid_t initial = 0;
    std::vector<pid_t> copies; // the attached processes' copies, for the start image
    if (attaching) {
        // The program is not in rewind's process group: the recorder's
        // signals are its own (Ctrl-C ends the recording with a detach).
        // No PTRACE_O_EXITKILL: if rewind dies, the process goes on.
        try {
            tree = std::make_unique<AttachedTree>(options.attach_pid, options.attach_tree,
                                                  kRecordingPtraceOptions & ~PTRACE_O_EXITKILL);
        } catch (...) {
            std::error_code ec;
            std::filesystem::remove_all(dir, ec);
            throw;
        }
        random_sites.on_plant(
            [t = tree.get()](pid_t tgid, uint64_t addr, uint8_t byte) { t->guardian_of(tgid).int3(tgid, addr, byte); });
        try {
            tree->prepare();
            std::vector<ImagePoint> points = tree->image_points();
            std::vector<SharedRegion> shared;
            try {
                shared = tree->shared_regions();
            } catch (const std::runtime_error& e) {
                throw UsageError(std::string("cannot attach: ") + e.what(), 1);
            }
            copies = tree->park_copies(points);
            first_image = options.start_images();
            first_image.describe(points, shared);
        } catch (...) {
            tree->discard_copies(copies);
            std::error_code ec;
            std::filesystem::remove_all(dir, ec);
            throw;
        }
        for (const auto& a : tree->processes()) {
            std::vector<Mapping> mappings = read_mappings(a->pid());
            // After the copy: its image has none of rewind's int3s.
            files.store_mappings(a->pid(), mappings);
            if (a->pid() == options.attach_pid) {
                meta.attached->mappings = mappings;
                meta.attached->threads = a->threads().size();
            } else {
                meta.attached->descendants.push_back(running_process(a->pid(), tree->parent_of(a->pid())));
                meta.attached->descendants.back().mappings = mappings;
                meta.attached->descendants.back().threads = a->threads().size();
            }
            start_mappings.insert(start_mappings.end(), mappings.begin(), mappings.end());
            for (const auto& t : a->threads()) {
                capture.track_running(t.tid);
                if (t.restarted_call >= 0)
                    capture.note_restarted_call(t.tid, t.restarted_call);
            }
        }
        if (options.window)
            window.emplace(dir, *options.window, writer);
        initial = options.attach_pid;
    } else {
        shield_from_program_signals();
        // A program to detach from gets no recording filter, which could not be taken back (launch_detach.h).
        launcher = std::make_unique<Launcher>(exec_path, options.command, envp, SignalState::initial(),
                                              options.detach_after ? disable_aslr_and_trap_tsc : prepare_for_recording);
        if (ptrace(PTRACE_SEIZE, launcher->pid(), nullptr, reinterpret_cast<void*>(kRecordingPtraceOptions)) != 0)
            throw UsageError(std::string("cannot trace the program: ") + strerror(errno) +
                                 " (is another tracer or a Yama ptrace_scope setting in the way?)",
                             1);
        capture.track_launcher(launcher->pid());
        if (std::string err = launcher->release(); !err.empty()) {
            int status;
            waitpid(launcher->pid(), &status, __WALL);
            std::error_code ec;
            std::filesystem::remove_all(dir, ec);
            throw UsageError("cannot execute " + program + ": " + err, 126);
        }
        initial = launcher->pid();
    }
    if (options.started)
        options.started();

    Supervisor::Options sup_options;
    sup_options.signal_fallback = options.signal_fallback;
    sup_options.time_slice = options.time_slice;
    sup_options.chaos = options.chaos;
    sup_options.parallel = options.parallel;
    sup_options.wait_all = options.wait_all;
    sup_options.scrub_env = options.scrub_env;
    // A refusal: the events held back to be put in order go out now, up to
    // the note that ends the trace; whatever comes later is dropped (the
    // deaths of the processes the recorder kills then).
    std::optional<uint64_t> late_at_end;
    sup_options.end_trace_with = [&](Event last) {
        trace_sink.end_with(event_seq(last));
        sink.emit(std::move(last));
        sink.finish(); // (the calls still open when the program was stopped have no end)
        seq_window.finish();
        late_at_end = seq_window.late();
    };
    if (attaching) {
        sup_options.attached = true;
        sup_options.wait_all = false;
        if (options.detach_after)
            sup_options.detach_at = std::chrono::steady_clock::now() + *options.detach_after;
        sup_options.undo_attach = [&](const std::vector<pid_t>& tids) { return tree->undo(tids); };
        sup_options.rseq_answered = [&](pid_t tid, uint64_t addr, uint32_t len, uint32_t sig) {
            tree->rseq_registered(tid, addr, len, sig);
        };
        if (window) {
            sup_options.roll_due = [&] { return window->due(); };
            sup_options.roll_over = [&](Tid tgid, const std::vector<std::pair<pid_t, int>>& stopped) {
                return take_window_image(tgid, stopped,
                                         {tree->root(), capture, writer, random_sites, files, *window, options, dir});
            };
            sup_options.roll_missed = [&](const std::string& why) { window->missed(why); };
            sup_options.freeze_signal = options.window->freeze_signal;
            sup_options.freeze = [&] { write_window_copy(dir, *window, capture.kernel_hz()); };
        }
    } else if (options.detach_after) {
        sup_options.detach_at = std::chrono::steady_clock::now() + *options.detach_after;
        sup_options.undo_attach = undo_launch;
    }
    Supervisor supervisor(capture, assembler, sink, files, random_sites, sup_options);
    if (attaching) {
        std::vector<std::pair<Tid, std::vector<Tid>>> processes;
        for (const auto& a : tree->processes()) {
            processes.push_back({a->pid(), {}});
            const auto& threads = a->threads();
            for (const auto& t : threads)
                processes.back().second.push_back(t.tid);
            if (std::any_of(threads.begin(), threads.end(), [](const auto& t) { return t.rseq_addr != 0; }))
                for (const auto& t : threads)
                    if (!t.rseq_addr)
                        supervisor.owe_rseq(t.tid);
        }
        supervisor.adopt_tree(processes, tree->shared_objects());
        meta.attached->pause_seconds = tree->paused().count();
        tree->release();
        for (auto [tgid, tid, sig] : tree->held_signals())
            ::syscall(SYS_tgkill, tgid, tid, sig);
        write_meta(dir, meta);
        // The process runs (recorded) while CRIU saves its copy: the pause
        // it sees does not grow with its memory.
        try {
            std::string image = window ? window->next_image() : trace_files::kStartImage;
            first_image.dump(dir, image, copies);
            if (window)
                window->add({0, writer.file_bytes(), std::chrono::steady_clock::now(), image, 0, meta, start_mappings,
                             first_image});
        } catch (...) {
            tree->discard_copies(copies);
            supervisor.request_detach(); // at once: nothing of it can be replayed
            supervisor.run(initial, [] {});
            std::error_code ec;
            std::filesystem::remove_all(dir, ec);
            throw;
        }
        tree->discard_copies(copies);
    }
    // Room for end.json when the disk fills: freed just before it is written.
    EndReserve reserve(dir);
    int status = 0;
    std::optional<uint64_t> disk_full_at;
    try {
        status = supervisor.run(initial, [&] { writer.flush(); });
        capture.drain();
    } catch (const std::system_error& e) {
        if (e.code().value() != ENOSPC && e.code().value() != EDQUOT)
            throw;
        // The policy: stop the program where its recording stops, rather
        // than let it run on unrecorded. (Its tracees die with this
        // process: PTRACE_O_EXITKILL.)
        disk_full_at = writer.events_on_disk();
        status = SIGKILL;
    }

    TraceEnd end;
    end.duration_ns = unix_time_ns() - started;
    end.ended = iso_time_utc(unix_time_ns());
    end.exit = ExitStatus::from_wait_status(status);
    end.detached = supervisor.detached();
    if (end.detached)
        end.detach_reason = !attaching ? "the time given with --detach-after passed"
                            : options.detach_after && std::chrono::nanoseconds(end.duration_ns) >= *options.detach_after
                                ? "the time given with --for passed"
                                : "rewind record was told to stop (a signal)";
    if (disk_full_at) {
        end.disk_full_at = disk_full_at;
        end.events = *disk_full_at;
        end.complete = false;
        end.problems.push_back("the disk filled: the recording stops after event " + std::to_string(*disk_full_at) +
                               ", where the program was stopped");
        reserve.release();
        write_end(dir, end);
        return {dir, end};
    }
    end.stalls = supervisor.stalls();
    end.killed_at_exit = supervisor.killed_at_exit();
    if (std::getenv("REWIND_RECORD_STATS"))
        std::fprintf(stderr,
                     "rewind: supervisor: %llu ptrace stops, %llu stalls, %llu rdtsc traps, %llu deferred signals; "
                     "serialized threads: %llu CPU hand-overs at syscalls that may block, %llu at the exit of a "
                     "syscall past the time slice\n",
                     static_cast<unsigned long long>(supervisor.stops()),
                     static_cast<unsigned long long>(supervisor.stalls()),
                     static_cast<unsigned long long>(supervisor.rdtsc_traps()),
                     static_cast<unsigned long long>(supervisor.deferred_signals()),
                     static_cast<unsigned long long>(supervisor.yields()),
                     static_cast<unsigned long long>(supervisor.syscall_handovers()));
    if (std::getenv("REWIND_RECORD_STATS")) {
        ReadCopies::Counts c = reads.counts();
        std::fprintf(stderr,
                     "rewind: reads of files: %llu by reference (%llu bytes) to %llu files shared, %llu copies "
                     "retired by an open for writing\n",
                     static_cast<unsigned long long>(c.reads_by_reference),
                     static_cast<unsigned long long>(c.bytes_by_reference),
                     static_cast<unsigned long long>(c.files_shared),
                     static_cast<unsigned long long>(c.copies_retired));
    }
    if (std::getenv("REWIND_RECORD_STATS") && options.parallel) {
        std::string unprobed;
        for (const auto& name : capture.unprobed_sync_calls())
            unprobed += " " + name;
        std::fprintf(stderr, "rewind: parallel threads: %zu synchronization probes attached%s%s\n",
                     capture.sync_probes(), unprobed.empty() ? "" : "; not probeable (unordered):", unprobed.c_str());
    }
    end.kernel_hz = capture.kernel_hz();
    for (const auto* list : {&assembler.problems(), &files.problems(), &supervisor.problems(),
                             static_cast<const std::vector<std::string>*>(&probe_problems)})
        end.problems.insert(end.problems.end(), list->begin(), list->end());
    if (uint64_t missed = capture.missed_runs())
        end.problems.push_back("the kernel skipped " + std::to_string(missed) + " runs of the capture programs");
    // (After a detach, the calls the threads were in are made again, unrecorded.)
    if (size_t unfilled = sink.finish(); unfilled && !end.detached)
        end.problems.push_back(std::to_string(unfilled) + " syscalls were entered and never reported");
    seq_window.finish();
    if (uint64_t late = late_at_end.value_or(seq_window.late()))
        end.problems.push_back(std::to_string(late) +
                               " events reached the recorder after later ones had been written "
                               "(it holds up to " +
                               std::to_string(kRecordSeqWindow) + " events or " +
                               std::to_string(kRecordSeqWindowBytes >> 20) + " MiB to put them in order)");
    if (const auto& refusal = supervisor.refusal()) {
        uint64_t at = trace_sink.ended_at().value_or(0);
        end.refusal = RecordRefusal{at, refusal->tid, refusal->why};
        end.problems.insert(end.problems.begin(), "the recording stops at event " + std::to_string(at) +
                                                      ", where the program was stopped: " + refusal->why);
    }
    writer.flush();
    trace_sink.fill(end);
    end.stream_bytes = writer.file_bytes();
    end.complete = end.problems.empty();
    if (attaching) {
        // Mapped shared and writable before the attach, unseen: unknown.
        end.files_mapped_shared_writable.reset();
        try {
            if (window) {
                const FlightWindow::Stretch& first = window->freeze(end);
                FlightWindow::complete(dir, first, end);
            } else {
                first_image.finish(dir, trace_files::kStartImage, end.events, start_mappings);
            }
        } catch (const std::exception& e) {
            end.problems.push_back(std::string("the start image cannot be completed: ") + e.what());
            end.complete = false;
        }
    }
    reserve.release();
    write_end(dir, end);
    update_latest_link(dir);
    RecordResult result{dir, end};
    if (end.detached && !attaching && ::kill(initial, 0) == 0)
        result.runs_on = initial;
    return result;
}

} // namespace rw
