#include "register_match_filter.h"

#include <linux/perf_event.h>
#include <sys/ioctl.h>

#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "register_match.skel.h"

namespace rw::replay {
namespace {

int quiet_libbpf(enum libbpf_print_level, const char*, va_list)
{
    return 0;
}

} // namespace

struct RegisterMatchFilter::Loaded {
    register_match* skeleton = nullptr;
    ~Loaded()
    {
        if (skeleton)
            register_match__destroy(skeleton);
    }
};

RegisterMatchFilter::RegisterMatchFilter(std::unique_ptr<Loaded> loaded) : loaded_(std::move(loaded)) {}
RegisterMatchFilter::~RegisterMatchFilter() = default;

RegisterMatchFilter* RegisterMatchFilter::get()
{
    static std::unique_ptr<RegisterMatchFilter> filter = []() -> std::unique_ptr<RegisterMatchFilter> {
        if (const char* v = std::getenv("REWIND_REGISTER_FILTER"); v && std::string(v) == "0")
            return nullptr; // a stop at each execution (for comparisons)
        // A machine without it counts as before: nothing to print unless asked.
        bool debug = std::getenv("REWIND_DEBUG") != nullptr;
        libbpf_print_fn_t before = debug ? nullptr : libbpf_set_print(quiet_libbpf);
        auto loaded = std::make_unique<Loaded>();
        loaded->skeleton = register_match__open_and_load();
        int err = errno;
        if (!debug)
            libbpf_set_print(before);
        if (!loaded->skeleton || !loaded->skeleton->bss) {
            if (std::getenv("REWIND_DEBUG"))
                std::fprintf(stderr, "[label] no register filter (%s): each execution stops the thread\n",
                             std::strerror(err));
            return nullptr;
        }
        return std::unique_ptr<RegisterMatchFilter>(new RegisterMatchFilter(std::move(loaded)));
    }();
    return filter.get();
}

bool RegisterMatchFilter::attach(int perf_fd, const Registers& want, uint64_t last)
{
    auto* bss = loaded_->skeleton->bss;
    static_assert(sizeof(bss->want) / sizeof(bss->want[0]) <= Registers::kCount);
    for (size_t i = 0; i < sizeof(bss->want) / sizeof(bss->want[0]); i++)
        bss->want[i] = want.words[i];
    bss->seen = 0;
    bss->last = last;
    return ::ioctl(perf_fd, PERF_EVENT_IOC_SET_BPF, bpf_program__fd(loaded_->skeleton->progs.match_registers)) == 0;
}

} // namespace rw::replay
