// function_offsets against the dynamic linker's own answer: the file
// offset it gives for a libc function must hold the bytes this process
// runs at that function's address.
#include <doctest/doctest.h>

#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <unistd.h>

#include <array>
#include <cstring>
#include <string>
#include <string_view>

#include "elf_symbols.h"
#include "positional_io.h"
#include "unique_fd.h"

namespace {

std::string library_of(const void* address)
{
    Dl_info info{};
    REQUIRE(dladdr(address, &info) != 0);
    return info.dli_fname;
}

} // namespace

TEST_CASE("function_offsets finds libc's functions at the bytes the process runs")
{
    const void* lock = dlsym(RTLD_DEFAULT, "pthread_mutex_lock");
    const void* unlock = dlsym(RTLD_DEFAULT, "pthread_mutex_unlock");
    REQUIRE(lock);
    REQUIRE(unlock);
    std::string libc = library_of(lock);
    std::array<std::string_view, 3> names{"pthread_mutex_lock", "pthread_mutex_unlock", "no_such_function_here"};
    auto offsets = rw::function_offsets(libc, names);
    CHECK(offsets.count("no_such_function_here") == 0);
    rw::UniqueFd file(::open(libc.c_str(), O_RDONLY | O_CLOEXEC));
    REQUIRE(file.get() >= 0);
    for (auto [name, address] : {std::pair{"pthread_mutex_lock", lock}, std::pair{"pthread_mutex_unlock", unlock}}) {
        CAPTURE(name);
        REQUIRE(offsets.count(name) == 1);
        std::array<unsigned char, 32> on_disk{};
        REQUIRE(rw::pread_full(file.get(), on_disk.data(), on_disk.size(), offsets.at(name)) ==
                static_cast<ssize_t>(on_disk.size()));
        CHECK(std::memcmp(on_disk.data(), address, on_disk.size()) == 0);
    }
}

TEST_CASE("function_offsets refuses what is not a 64-bit ELF file")
{
    std::array<std::string_view, 1> names{"main"};
    CHECK_THROWS(rw::function_offsets("/proc/self/status", names));
    CHECK_THROWS(rw::function_offsets("/nonexistent/library.so", names));
}
