// rewind doctor: can this machine record, replay, and how fast?
#include <fmt/core.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <csignal>
#include <cstdio>
#include <memory>

#include "bpf_capture.h"
#include "commands.h"
#include "hw_breakpoint.h"
#include "tsc.h"
#include "launcher.h"
#include "pmu.h"
#include "system_info.h"

namespace rw::cli {
namespace {

enum class Level { Ok, No, Fail };

struct Check {
    Level level;
    std::string name;
    std::string detail;
};

std::string run_command(const std::string& cmd, int& status)
{
    std::string out;
    FILE* p = popen((cmd + " 2>&1").c_str(), "r");
    if (!p) {
        status = -1;
        return "";
    }
    std::array<char, 512> buf;
    while (fgets(buf.data(), buf.size(), p))
        out += buf.data();
    status = pclose(p);
    while (!out.empty() && (out.back() == '\n' || out.back() == ' '))
        out.pop_back();
    return out;
}

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
    if (find_program("criu").empty())
        return {Level::No, "criu", "not installed: persistent (on-disk) landmarks unavailable"};
    int status = 0;
    std::string out = run_command("criu check", status);
    if (status == 0)
        return {Level::Ok, "criu", "criu check: " + out};
    // criu's most telling line is usually its first error.
    std::string first = out.substr(0, out.find('\n'));
    for (size_t pos = 0; pos < out.size();) {
        size_t end = out.find('\n', pos);
        std::string line = out.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
        if (line.find("Error") != std::string::npos && line.find("exited, status") == std::string::npos) {
            first = line;
            break;
        }
        pos = end == std::string::npos ? out.size() : end + 1;
    }
    return {Level::No, "criu",
            "criu check fails (" + first + "): persistent landmarks unavailable; in-memory snapshots still work"};
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
        checks.push_back(check_criu());
        bool gdb = !find_program("gdb").empty();
        checks.push_back({gdb ? Level::Ok : Level::No, "gdb",
                          gdb ? "found (rewind replay serves it)" : "not installed: `rewind replay` needs gdb"});

        bool can_record = true;
        for (const auto& c : checks) {
            const char* tag = c.level == Level::Ok ? "ok  " : c.level == Level::No ? "no  " : "FAIL";
            fmt::print("  {}  {:<15} {}\n", tag, c.name, c.detail);
            if (c.level == Level::Fail)
                can_record = false;
        }
        fmt::print("\n{}\n", can_record ? "This machine can record and replay."
                                        : "This machine cannot record: fix the FAIL lines above.");
        outcome.exit_code = can_record ? 0 : 1;
    });
}

} // namespace rw::cli
