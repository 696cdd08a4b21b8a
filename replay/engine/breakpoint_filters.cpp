#include "breakpoint_filters.h"

#include <linux/perf_event.h>
#include <sys/ioctl.h>

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "position_match.skel.h"
#include "register_match.skel.h"
#include "write_match.skel.h"

namespace rw::replay {
namespace {

int quiet_libbpf(enum libbpf_print_level, const char*, va_list)
{
    return 0;
}

// Opens and loads a skeleton (nullptr where it cannot be): quietly unless
// REWIND_DEBUG is set, which also says why it could not.
template <typename Skeleton> Skeleton* load_filter(const char* name, Skeleton* (*open_and_load)())
{
    if (const char* v = std::getenv("REWIND_BPF_FILTERS"); v && std::string(v) == "0")
        return nullptr;
    bool debug = std::getenv("REWIND_DEBUG") != nullptr;
    libbpf_print_fn_t before = debug ? nullptr : libbpf_set_print(quiet_libbpf);
    Skeleton* s = open_and_load();
    int err = errno;
    if (!debug)
        libbpf_set_print(before);
    if (s && !s->bss) {
        // (Global data the replayer cannot write: too old a kernel.)
        err = ENOTSUP;
        s = nullptr;
    }
    if (!s && debug)
        std::fprintf(stderr, "[filter] no %s filter (%s): each execution stops the thread\n", name, std::strerror(err));
    return s;
}

// The process's one Filter, over its skeleton loaded by load_filter.
template <typename Filter, typename Skeleton>
std::unique_ptr<Filter> load_once(const char* name, Skeleton* (*open_and_load)())
{
    auto loaded = std::make_unique<typename Filter::Loaded>();
    if (!(loaded->skeleton = load_filter(name, open_and_load)))
        return nullptr;
    return std::make_unique<Filter>(std::move(loaded));
}

// The registers a filter compares (match_registers.bpf.h), into its global.
template <typename Word, size_t N> void copy_registers(Word (&to)[N], const Registers& want)
{
    static_assert(N <= Registers::kCount);
    std::copy_n(want.words.begin(), N, to);
}

bool filter_breakpoint(int perf_fd, int prog_fd)
{
    return ::ioctl(perf_fd, PERF_EVENT_IOC_SET_BPF, prog_fd) == 0;
}

} // namespace

struct RegisterMatchFilter::Loaded {
    register_match* skeleton = nullptr;
    ~Loaded() { register_match__destroy(skeleton); }
};

RegisterMatchFilter::RegisterMatchFilter(std::unique_ptr<Loaded> loaded) : loaded_(std::move(loaded)) {}
RegisterMatchFilter::~RegisterMatchFilter() = default;

RegisterMatchFilter* RegisterMatchFilter::get()
{
    static auto filter = load_once<RegisterMatchFilter>("register", register_match__open_and_load);
    return filter.get();
}

bool RegisterMatchFilter::attach(int perf_fd, const Registers& want, uint64_t last)
{
    auto* bss = loaded_->skeleton->bss;
    copy_registers(bss->want, want);
    bss->seen = 0;
    bss->last = last;
    return filter_breakpoint(perf_fd, bpf_program__fd(loaded_->skeleton->progs.match_registers));
}

struct PositionMatchFilter::Loaded {
    position_match* skeleton = nullptr;
    ~Loaded() { position_match__destroy(skeleton); }
};

PositionMatchFilter::PositionMatchFilter(std::unique_ptr<Loaded> loaded) : loaded_(std::move(loaded)) {}
PositionMatchFilter::~PositionMatchFilter() = default;

PositionMatchFilter* PositionMatchFilter::get()
{
    static auto filter = load_once<PositionMatchFilter>("position", position_match__open_and_load);
    return filter.get();
}

bool PositionMatchFilter::attach(int perf_fd, const Registers& want, const std::vector<uint64_t>& pages, uint64_t sum)
{
    if (pages.size() > RW_SUM_PAGES)
        return false;
    auto* bss = loaded_->skeleton->bss;
    copy_registers(bss->want, want);
    std::copy(pages.begin(), pages.end(), bss->pages);
    bss->page_count = static_cast<uint32_t>(pages.size());
    bss->want_sum = sum;
    bss->seen = 0;
    bss->last = UINT64_MAX;
    return filter_breakpoint(perf_fd, bpf_program__fd(loaded_->skeleton->progs.match_position));
}

struct WriteMatchFilter::Loaded {
    write_match* skeleton = nullptr;
    ~Loaded() { write_match__destroy(skeleton); }
};

WriteMatchFilter::WriteMatchFilter(std::unique_ptr<Loaded> loaded) : loaded_(std::move(loaded)) {}
WriteMatchFilter::~WriteMatchFilter() = default;

WriteMatchFilter* WriteMatchFilter::get()
{
    static auto filter = load_once<WriteMatchFilter>("write", write_match__open_and_load);
    return filter.get();
}

void WriteMatchFilter::prepare(const std::vector<rw_write_form>& forms, uint64_t lo, uint64_t hi, uint64_t last)
{
    auto* bss = loaded_->skeleton->bss;
    static_assert(sizeof(bss->forms) / sizeof(bss->forms[0]) == kMostCandidates);
    size_t n = std::min(forms.size(), kMostCandidates);
    std::copy_n(forms.begin(), n, bss->forms);
    bss->form_count = static_cast<uint32_t>(n);
    bss->lo = lo;
    bss->hi = hi;
    bss->seen = 0;
    bss->last = last;
}

bool WriteMatchFilter::attach(int perf_fd)
{
    return filter_breakpoint(perf_fd, bpf_program__fd(loaded_->skeleton->progs.match_write));
}

} // namespace rw::replay
