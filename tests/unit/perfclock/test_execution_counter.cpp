#include <doctest/doctest.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdint>

#include "execution_counter.h"
#include "stopped_child.h"
#include "tracee.h"

using namespace rw;
using namespace rw::perfclock;

namespace {

// A word of data the child shares with this process's image (same
// addresses after fork), and a function whose code it shares too.
volatile uint64_t shared_word = 0x1122334455667788ull;
[[gnu::noinline]] int shared_code(int x)
{
    return x * 3 + 1;
}

uint8_t byte_at(pid_t pid, uint64_t addr)
{
    uint8_t b = 0;
    TraceeMemory(pid).read(RemoteAddr(addr), {&b, 1});
    return b;
}

} // namespace

TEST_CASE("an int3 counter plants at code and never writes into data")
{
    StoppedChild child([] { ::_exit(shared_code(1)); });
    SoftCounters soft;
    auto code = reinterpret_cast<uint64_t>(&shared_code);
    auto data = reinterpret_cast<uint64_t>(&shared_word);
    uint8_t code_byte = byte_at(child.pid, code), data_byte = byte_at(child.pid, data);
    {
        auto at_code = soft.add(child.pid, code, 0, 1);
        auto at_data = soft.add(child.pid, data, 0, 2); // a return address unwound through data, say
        CHECK(byte_at(child.pid, code) == 0xcc);
        CHECK(byte_at(child.pid, data) == data_byte);
        CHECK(at_data->count == 0);
        auto second = soft.add(child.pid, code, 0, 3); // shares the int3
        soft.remove(second);
        CHECK(byte_at(child.pid, code) == 0xcc);
        soft.remove(at_code);
        soft.remove(at_data);
    }
    CHECK(soft.empty());
    CHECK(byte_at(child.pid, code) == code_byte);
    CHECK(byte_at(child.pid, data) == data_byte);
}
