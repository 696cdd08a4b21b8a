#include <doctest/doctest.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdint>

#include "stopped_child.h"
#include "tracee.h"

using namespace rw;

namespace {

// Same addresses in a forked child: a writable word, and code (read-only).
volatile uint64_t writable_word = 1;
[[gnu::noinline]] int some_code(int x)
{
    return x * 5 + 2;
}

// A child that execs `sleep` when continued; the file write_code keeps
// open for it is closed at the end.
struct ExecingChild : StoppedChild {
    ExecingChild() : StoppedChild([] { ::execl("/bin/sleep", "sleep", "10", nullptr); }) {}
    ~ExecingChild() { forget_code_file(pid); }
};

uint8_t byte_at(pid_t pid, uint64_t addr)
{
    uint8_t b = 0;
    REQUIRE(TraceeMemory(pid).read(RemoteAddr(addr), {&b, 1}));
    return b;
}

} // namespace

TEST_CASE("tracee memory: data and code are written, code through a file that follows an exec")
{
    ExecingChild child;
    TraceeMemory mem(child.pid);
    auto data = reinterpret_cast<uint64_t>(&writable_word);
    auto code = reinterpret_cast<uint64_t>(&some_code);

    uint64_t word = 0x5566778899aabbccull;
    CHECK(mem.write(RemoteAddr(data), {reinterpret_cast<uint8_t*>(&word), sizeof word}));
    CHECK(mem.read_value<uint64_t>(RemoteAddr(data)) == word);
    CHECK(writable_word == 1); // the child's copy, not ours

    uint8_t original = byte_at(child.pid, code), int3 = 0xcc;
    CHECK(mem.write(RemoteAddr(code), {&int3, 1})); // read-only: through /proc/PID/mem
    CHECK(byte_at(child.pid, code) == 0xcc);
    CHECK(mem.write_code(RemoteAddr(code), {&original, 1}));
    CHECK(byte_at(child.pid, code) == original);

    // After the exec, the file opened above would reach the old address
    // space: a write through it fails, and write_code opens the new one.
    REQUIRE(::ptrace(PTRACE_SETOPTIONS, child.pid, nullptr, PTRACE_O_TRACEEXEC) == 0);
    REQUIRE(::ptrace(PTRACE_CONT, child.pid, nullptr, nullptr) == 0);
    int status = 0;
    REQUIRE(::waitpid(child.pid, &status, 0) == child.pid);
    int stop = status >> 8;
    REQUIRE(stop == (SIGTRAP | (PTRACE_EVENT_EXEC << 8)));
    uint64_t entry = get_registers(child.pid)[Registers::RIP];
    uint8_t first = byte_at(child.pid, entry);
    CHECK(mem.write_code(RemoteAddr(entry), {&int3, 1}));
    CHECK(byte_at(child.pid, entry) == 0xcc);
    CHECK(mem.write_code(RemoteAddr(entry), {&first, 1}));
    CHECK(byte_at(child.pid, entry) == first);
}
