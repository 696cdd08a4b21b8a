// rewind doctor: can this machine record, replay, and how fast?
#include <fmt/core.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <sstream>

#include "bpf_capture.h"
#include "commands.h"
#include "criu_landmark.h"
#include "criu_probe.h"
#include "hw_breakpoint.h"
#include "task_clock.h"
#include "tsc.h"
#include "launcher.h"
#include "pmu.h"
#include "system_info.h"

namespace rw::cli {
namespace {
namespace fs = std::filesystem;

enum class Level { Ok, No, Fail };

struct Check {
    Level level;
    std::string name;
    std::string detail;
};

bool kernel_at_least(const std::string& release, int major, int minor)
{
    int ma = 0, mi = 0;
    std::sscanf(release.c_str(), "%d.%d", &ma, &mi);
    return ma > major || (ma == major && mi >= minor);
}

Check check_ptrace()
{
    pid_t child = fork();
    if (child == 0) {
        pause();
        _exit(0);
    }
    bool ok = ptrace(PTRACE_SEIZE, child, nullptr, nullptr) == 0;
    int err = errno;
    kill(child, SIGKILL);
    waitpid(child, nullptr, 0);
    return ok ? Check{Level::Ok, "ptrace", "PTRACE_SEIZE works"}
              : Check{Level::Fail, "ptrace", std::string("PTRACE_SEIZE: ") + strerror(err)};
}

Check check_rdtsc_trap()
{
    if (tsc_trap_works())
        return {Level::Ok, "rdtsc trap", "PR_SET_TSC makes rdtsc fault, so it can be recorded"};
    return {Level::No, "rdtsc trap",
            "PR_SET_TSC does not trap rdtsc here (the hypervisor ignores it): a program that reads the TSC "
            "directly records unseen values, and its replay reports a divergence"};
}

Check check_ebpf()
{
    try {
        BpfCapture capture({1u << 20, 1u << 16}, [](std::span<const uint8_t>) {});
        return {Level::Ok, "ebpf", "capture program loads and attaches (tp_btf sys_exit, sched_process_*)"};
    } catch (const std::exception& e) {
        std::string msg = e.what();
        return {Level::Fail, "ebpf", msg.substr(0, msg.find('\n'))};
    }
}

Check check_criu()
{
    std::string criu = replay::find_criu();
    if (criu.empty())
        return {Level::No, "criu",
                "not installed (scripts/install-criu.sh installs CRIU 4.1 in " +
                    std::string(fs::path(replay::kCriuPrivatePath).parent_path().parent_path()) +
                    "): persistent (on-disk) landmarks unavailable"};
    std::string version = replay::criu_version(criu);
    std::string what = criu + " " + (version.empty() ? "(no version)" : version);
    replay::ProgramOutput out = replay::run_program({criu, "check"});
    if (out.status == 0 && replay::version_at_least(version, 4, 1)) {
        std::string probe = replay::probe_landmarks(criu);
        if (probe.empty())
            return {Level::Ok, "criu",
                    what + ", criu check passes, a test process dumps and restores: persistent landmarks available"};
        return {Level::No, "criu",
                what +
                    ": criu check passes, but a test process cannot be saved and restored as a landmark, so "
                    "persistent landmarks are unavailable here (in-memory snapshots still work):\n" +
                    probe};
    }
    std::string why;
    if (out.status != 0) {
        // criu's most telling line is usually its first error.
        std::istringstream lines(out.output);
        for (std::string line; std::getline(lines, line);) {
            if (why.empty() && !line.empty())
                why = line;
            if (line.find("Error") != std::string::npos && line.find("exited, status") == std::string::npos) {
                why = line;
                break;
            }
        }
        why = "criu check fails (" + why + ")";
    } else {
        why = "criu check passes, but rewind needs CRIU 4.1 or later";
    }
    return {Level::No, "criu",
            what + ": " + why +
                "; persistent landmarks unavailable (scripts/install-criu.sh installs CRIU 4.1), "
                "in-memory snapshots still work"};
}

} // namespace

void add_doctor(CLI::App& app, Outcome& outcome)
{
    auto* cmd = app.add_subcommand("doctor", "Check what this machine supports");
    cmd->callback([&outcome] {
        std::vector<Check> checks;
        KernelInfo k = kernel_info();
        bool kernel_ok = kernel_at_least(k.release, 5, 17);
        checks.push_back({kernel_ok ? Level::Ok : Level::Fail, "kernel",
                          "Linux " + k.release + " (" + k.machine + ")" +
                              (kernel_ok ? "" : ": rewind needs 5.17 or later (bpf_loop, task storage)")});
        checks.push_back({kernel_has_btf() ? Level::Ok : Level::Fail, "btf",
                          kernel_has_btf() ? std::string(kKernelBtfPath)
                                           : std::string(kKernelBtfPath) + " missing: needs CONFIG_DEBUG_INFO_BTF"});
        auto missing = missing_record_capabilities();
        std::string caps;
        for (auto c : missing)
            caps += (caps.empty() ? "" : ", ") + std::string(capability_name(c));
        checks.push_back(
            {missing.empty() ? Level::Ok : Level::Fail, "privileges",
             missing.empty() ? (geteuid() == 0 ? "root" : "CAP_BPF, CAP_PERFMON, CAP_SYS_PTRACE") : "missing " + caps});
        checks.push_back(check_ebpf());
        checks.push_back(check_ptrace());
        checks.push_back(check_rdtsc_trap());
        CpuInfo cpu = cpu_info();
        checks.push_back({Level::Ok, "cpu",
                          cpu.model_name + (cpu.has("rdrand") ? " (rdrand present: it cannot be "
                                                                "trapped; replay detects its effects)"
                                                              : "")});
        auto pmu = perfclock::probe_pmu();
        checks.push_back({pmu.available ? Level::Ok : Level::No, "pmu",
                          pmu.description + (pmu.available ? "" : "; positions use the software clock")});
        auto bp = perfclock::probe_breakpoints();
        checks.push_back({bp.available ? Level::Ok : Level::No, "hw breakpoints",
                          bp.available ? bp.description
                                       : bp.description + ": the debug registers do not work here, so positions "
                                                          "between events cannot be counted (reverse execution, "
                                                          "goto and rewind watch are unavailable; replay and "
                                                          "forward debugging work)"});
        bool task_clock = perfclock::task_clock_works();
        checks.push_back({task_clock ? Level::Ok : Level::No, "task clock",
                          task_clock ? "perf task-clock alarms work (rewind watch bisects running time with them)"
                                     : "perf software events are not allowed: rewind watch times its samples "
                                       "from the tracer, less precisely"});
        checks.push_back(check_criu());
        bool gdb = !find_program("gdb").empty();
        checks.push_back({gdb ? Level::Ok : Level::No, "gdb",
                          gdb ? "found (rewind replay serves it)" : "not installed: `rewind replay` needs gdb"});

        bool can_record = true;
        for (const auto& c : checks) {
            const char* tag = c.level == Level::Ok ? "ok  " : c.level == Level::No ? "no  " : "FAIL";
            // A detail of several lines (what CRIU said) goes on indented.
            std::string detail = c.detail;
            for (size_t at = detail.find('\n'); at != std::string::npos; at = detail.find('\n', at + 1))
                detail.insert(at + 1, std::string(24, ' '));
            fmt::print("  {}  {:<15} {}\n", tag, c.name, detail);
            if (c.level == Level::Fail)
                can_record = false;
        }
        fmt::print("\n{}\n", can_record ? "This machine can record and replay."
                                        : "This machine cannot record: fix the FAIL lines above.");
        outcome.exit_code = can_record ? 0 : 1;
    });
}

} // namespace rw::cli
