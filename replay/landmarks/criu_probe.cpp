// The landmark probe: see criu_probe.h.
#include "criu_probe.h"

#include <fcntl.h>
#include <linux/close_range.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "criu_landmark.h"
#include "tracee.h"

namespace rw::replay {
namespace fs = std::filesystem;

namespace {

constexpr unsigned long kOptions = PTRACE_O_EXITKILL;

// A process that only spins in user code, holding nothing but /dev/null:
// whatever launched the probe (a terminal, a pipe, a test runner's sockets)
// stays out of the image.
pid_t start_spinner()
{
    pid_t pid = fork();
    if (pid != 0)
        return pid;
    // As a replayed program: a session of its own (see replay_launch.cpp).
    ::setsid();
    int null = ::open("/dev/null", O_RDWR);
    for (int fd = 0; fd < 3; fd++)
        dup2(null, fd);
    ::syscall(SYS_close_range, 3u, ~0u, 0);
    for (;;)
        asm volatile("" ::: "memory");
}

void wait_for_stop(pid_t pid)
{
    int status = 0;
    if (waitpid(pid, &status, __WALL) != pid || !WIFSTOPPED(status))
        throw std::runtime_error("the probe process did not stop");
}

class Spinner {
public:
    Spinner() : pid_(start_spinner())
    {
        if (pid_ < 0)
            throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
    }
    ~Spinner()
    {
        ::kill(pid_, SIGKILL);
        waitpid(pid_, nullptr, __WALL);
    }
    Spinner(const Spinner&) = delete;
    Spinner& operator=(const Spinner&) = delete;
    pid_t pid() const { return pid_; }

private:
    pid_t pid_;
};

} // namespace

std::string probe_landmarks(const std::string& criu)
{
    char dir_template[] = "/tmp/rewind-probe-XXXXXX";
    if (!mkdtemp(dir_template))
        return std::string("cannot make a directory for the probe's image: ") + std::strerror(errno);
    fs::path dir = dir_template;
    std::string failure;
    try {
        Spinner spinner;
        if (ptrace(PTRACE_SEIZE, spinner.pid(), nullptr, kOptions) != 0)
            throw std::runtime_error(std::string("PTRACE_SEIZE: ") + std::strerror(errno));
        // Until it has made its session and closed its descriptors it may
        // be stopped in a system call, which is no place for a landmark, or
        // still be in the session it was started in.
        Registers before;
        for (int attempt = 0;; attempt++) {
            ptrace(PTRACE_INTERRUPT, spinner.pid(), nullptr, nullptr);
            wait_for_stop(spinner.pid());
            before = get_registers(spinner.pid());
            if (static_cast<int64_t>(before[Registers::ORIG_RAX]) == -1 && getsid(spinner.pid()) == spinner.pid())
                break;
            if (attempt == 100)
                throw std::runtime_error("the probe process never stopped outside a system call");
            ptrace(PTRACE_CONT, spinner.pid(), nullptr, nullptr);
            usleep(10000);
        }
        dump_landmark(criu, spinner.pid(), {spinner.pid()}, dir / "image", kOptions);
        RestoredLandmark copy = RestoredLandmark::restore(criu, dir / "image", {}, kOptions);
        Registers after = get_registers(copy.pid());
        if (after[Registers::RIP] != before[Registers::RIP] || after[Registers::RSP] != before[Registers::RSP])
            throw std::runtime_error("the restored copy's registers differ from the dumped process's");
    } catch (const std::exception& e) {
        failure = e.what();
    }
    std::error_code ec;
    fs::remove_all(dir, ec);
    return failure;
}

} // namespace rw::replay
