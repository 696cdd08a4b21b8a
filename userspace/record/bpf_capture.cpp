#include "bpf_capture.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdarg>
#include <fcntl.h>
#include <sys/stat.h>

#include <cstring>
#include <map>
#include <set>
#include <thread>
#include <tuple>
#include <string>
#include <utility>
#include <vector>

#include "capture.skel.h"
#include "elf_symbols.h"
#include "link_releaser.h"
#include "unique_fd.h"
#include "sync_calls.h"
#include "syscall_table.h"

namespace rw {
namespace {

// libbpf's diagnostics are kept so a failed load can explain itself.
std::string& libbpf_log()
{
    static thread_local std::string log;
    return log;
}

int collect_libbpf_output(enum libbpf_print_level level, const char* fmt, va_list args)
{
    if (level == LIBBPF_DEBUG)
        return 0;
    char buf[1024];
    int n = vsnprintf(buf, sizeof(buf), fmt, args);
    auto& log = libbpf_log();
    if (log.size() < 64 * 1024)
        log += buf;
    return n;
}

// The inode of the recorder's pid namespace, or 0 in the initial one
// (whose inode the kernel fixes), where the kernel's own ids are ours.
uint64_t pid_namespace_of_recorder()
{
    constexpr uint64_t kInitialPidNamespace = 0xEFFFFFFCu;
    struct stat st {};
    if (::stat("/proc/self/ns/pid", &st) != 0 || st.st_ino == kInitialPidNamespace)
        return 0;
    return st.st_ino;
}

std::string explain_load_failure(int err)
{
    std::string msg = "cannot load rewind's eBPF capture program: " + std::string(strerror(-err));
    if (err == -EPERM || err == -EACCES)
        msg += " (rewind needs root, or CAP_BPF + CAP_PERFMON + CAP_SYS_PTRACE)";
    auto& log = libbpf_log();
    if (!log.empty()) {
        std::string tail = log.size() > 2000 ? log.substr(log.size() - 2000) : log;
        msg += "\nlibbpf said:\n" + tail;
    }
    return msg;
}

// BPF_LINK_CREATE for BPF_TRACE_UPROBE_MULTI (Linux 6.6), which this
// libbpf does not know: the prefix of union bpf_attr that it reads.
constexpr int kBpfLinkCreate = 28;
constexpr uint32_t kAttachUprobeMulti = 48;
constexpr uint32_t kUprobeMultiReturn = 1;
constexpr uint8_t kLockPrefix = 0xf0;

struct UprobeMultiAttr {
    uint32_t prog_fd;
    uint32_t target_fd;
    uint32_t attach_type;
    uint32_t flags_unused;
    uint64_t path;
    uint64_t offsets;
    uint64_t ref_ctr_offsets;
    uint64_t cookies;
    uint32_t cnt;
    uint32_t flags;
    uint32_t pid;
    uint32_t padding;
};
static_assert(sizeof(UprobeMultiAttr) == 64);

int ring_callback(void* ctx, void* data, size_t size)
{
    auto* handler = static_cast<BpfCapture::RecordHandler*>(ctx);
    (*handler)({static_cast<const uint8_t*>(data), size});
    return 0;
}

struct SkeletonDeleter {
    void operator()(capture* s) const { capture__destroy(s); }
};

// Where the synchronization calls of one library file are, and which
// function each is: the same for every process that maps it.
struct ProbeSites {
    std::vector<uint64_t> offsets;
    std::vector<uint64_t> cookies;
    std::vector<std::string> unprobeable;
};

ProbeSites find_probe_sites(const std::string& path, const std::string& name)
{
    std::vector<std::string_view> names;
    for (const SyncCall& call : all_sync_calls())
        names.push_back(call.symbol);
    std::map<std::string, uint64_t, std::less<>> offsets;
    try {
        offsets = function_offsets(path, names);
    } catch (const std::exception& e) {
        throw CaptureError("cannot read the symbols of " + name + ": " + e.what());
    }
    ProbeSites sites;
    UniqueFd file(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    for (const SyncCall& call : all_sync_calls()) {
        // A libc without this function (an older one, where libpthread has
        // its own copy, probed as well) cannot call it.
        auto offset = offsets.find(call.symbol);
        if (offset == offsets.end())
            continue;
        // x86-64 uprobes refuse a lock-prefixed first instruction
        // (pthread_spin_lock): that call stays unordered, like any atomic.
        uint8_t first = 0;
        if (::pread(file.get(), &first, 1, static_cast<off_t>(offset->second)) == 1 && first == kLockPrefix) {
            sites.unprobeable.emplace_back(call.symbol);
            continue;
        }
        sites.offsets.push_back(offset->second);
        sites.cookies.push_back(call.fn);
    }
    return sites;
}

using FileVersion = std::tuple<dev_t, ino_t, off_t, int64_t>;

} // namespace

struct BpfCapture::Impl {
    explicit Impl(bool link_holder) : releaser(link_holder) {}

    LinkReleaser releaser; // destroyed last: the links close while the rest is torn down
    std::unique_ptr<capture, SkeletonDeleter> skel;
    ring_buffer* ring = nullptr; // made by ring_maker
    std::thread ring_maker;
    std::string ring_error;
    RecordHandler handler;
    std::map<pid_t, std::vector<UniqueFd>> sync_links; // each process's probe links
    size_t probes = 0;
    std::set<std::tuple<pid_t, dev_t, ino_t>> probed;
    std::map<pid_t, std::set<std::string>> probed_names; // the libraries each process has probes in
    std::set<std::string> unprobed;
    std::map<FileVersion, ProbeSites> sites; // by library file, read once

    const ProbeSites& sites_in(const std::string& path, const std::string& name, const struct stat& st)
    {
        FileVersion version{st.st_dev, st.st_ino, st.st_size,
                            int64_t(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec};
        auto it = sites.find(version);
        if (it == sites.end()) {
            it = sites.emplace(version, find_probe_sites(path, name)).first;
            unprobed.insert(it->second.unprobeable.begin(), it->second.unprobeable.end());
        }
        return it->second;
    }

    ring_buffer* ready_ring()
    {
        if (ring_maker.joinable())
            ring_maker.join();
        if (!ring)
            throw CaptureError("cannot map the capture ring buffer: " + ring_error);
        return ring;
    }

    ~Impl()
    {
        if (ring_maker.joinable())
            ring_maker.join();
        for (auto& [pid, links] : sync_links)
            releaser.release(std::move(links));
        if (ring)
            ring_buffer__free(ring);
    }
};

BpfCapture::BpfCapture(const Options& options, RecordHandler handler)
    : impl_(std::make_unique<Impl>(options.sync_probes)), options_(options)
{
    impl_->handler = std::move(handler);
    libbpf_log().clear();
    libbpf_set_print(collect_libbpf_output);

    impl_->skel.reset(capture__open());
    if (!impl_->skel)
        throw CaptureError("cannot open rewind's eBPF capture program: " + std::string(strerror(errno)));
    auto* s = impl_->skel.get();
    s->rodata->cfg.recorder_tgid = static_cast<uint32_t>(getpid());
    s->rodata->cfg.pid_ns_ino = pid_namespace_of_recorder();
    s->rodata->cfg.wakeup_bytes = options.wakeup_bytes;
    // The size of a per-CPU BPF map's value a program looks up (RW_STATE_BPF_VALUE).
    int cpus = libbpf_num_possible_cpus();
    s->rodata->cfg.possible_cpus = cpus > 0 ? static_cast<uint32_t>(cpus) : 0;
    if (int err = bpf_map__set_max_entries(s->maps.rb, options.ring_bytes))
        throw CaptureError("invalid ring buffer size " + std::to_string(options.ring_bytes) + ": " + strerror(-err));

    // The synchronization probes attach as multi-uprobe links.
    bpf_program__set_expected_attach_type(s->progs.on_sync_entry, static_cast<bpf_attach_type>(kAttachUprobeMulti));
    bpf_program__set_expected_attach_type(s->progs.on_sync_return, static_cast<bpf_attach_type>(kAttachUprobeMulti));
    if (int err = capture__load(s))
        throw CaptureError(explain_load_failure(err));

    // Upload the syscall table: the kernel side knows exactly what we know.
    int specs_fd = bpf_map__fd(s->maps.specs);
    for (const auto& info : all_syscalls()) {
        uint32_t key = static_cast<uint32_t>(info.nr);
        rw_sys_spec spec = kernel_spec(info);
        if (bpf_map_update_elem(specs_fd, &key, &spec, BPF_ANY))
            throw CaptureError("cannot upload the syscall table: " + std::string(strerror(errno)));
    }
    int subs_fd = bpf_map__fd(s->maps.subcmds);
    for (const auto& sub : all_subcommands()) {
        rw_subcmd_key key{static_cast<uint32_t>(sub.nr), 0, sub.value};
        rw_sys_spec spec = kernel_spec(sub);
        if (bpf_map_update_elem(subs_fd, &key, &spec, BPF_ANY))
            throw CaptureError("cannot upload the subcommand table: " + std::string(strerror(errno)));
    }

    if (int err = capture__attach(s))
        throw CaptureError("cannot attach rewind's eBPF programs (tp_btf needs kernel BTF): " +
                           std::string(strerror(-err)));

    // Mapping the ring (twice its size: 32,768 pages for 64 MiB) takes 10 ms,
    // done meanwhile the program is started; the ring is needed at the
    // program's first stop.
    impl_->ring_maker = std::thread([impl = impl_.get(), fd = bpf_map__fd(s->maps.rb)] {
        impl->ring = ring_buffer__new(fd, ring_callback, &impl->handler, nullptr);
        if (!impl->ring)
            impl->ring_error = strerror(errno);
    });
}

BpfCapture::~BpfCapture() = default;

void BpfCapture::track_launcher(pid_t pid)
{
    int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
    if (pidfd < 0)
        throw CaptureError("pidfd_open: " + std::string(strerror(errno)));
    rw_task_state state{};
    state.phase = RW_TASK_WAIT_EXEC;
    int rc = bpf_map_update_elem(bpf_map__fd(impl_->skel->maps.task_state), &pidfd, &state, BPF_ANY);
    int err = errno;
    close(pidfd);
    if (rc)
        throw CaptureError("cannot register the program with the capture: " + std::string(strerror(err)));
}

namespace {

// A pidfd for one thread (PIDFD_THREAD, Linux 6.9), or for a process.
int thread_pidfd(pid_t tid)
{
    constexpr unsigned kPidfdThread = O_EXCL;
    int fd = static_cast<int>(syscall(SYS_pidfd_open, tid, kPidfdThread));
    if (fd < 0)
        fd = static_cast<int>(syscall(SYS_pidfd_open, tid, 0));
    return fd;
}

} // namespace

void BpfCapture::track_running(pid_t tid)
{
    int pidfd = thread_pidfd(tid);
    if (pidfd < 0)
        throw CaptureError("pidfd_open of thread " + std::to_string(tid) + ": " + std::string(strerror(errno)));
    rw_task_state state{};
    state.phase = RW_TASK_ACTIVE;
    int rc = bpf_map_update_elem(bpf_map__fd(impl_->skel->maps.task_state), &pidfd, &state, BPF_ANY);
    int err = errno;
    close(pidfd);
    if (rc)
        throw CaptureError("cannot register thread " + std::to_string(tid) + " with the capture: " + strerror(err));
    // (Set by the exec hook for a launched program.)
    __atomic_store_n(&impl_->skel->bss->kernel_hz, 1000000000u / RW_EXIT_TIME_UNIT_NS, __ATOMIC_SEQ_CST);
}

bool BpfCapture::untrack(pid_t tid)
{
    int pidfd = thread_pidfd(tid);
    if (pidfd < 0)
        return false;
    int rc = bpf_map_delete_elem(bpf_map__fd(impl_->skel->maps.task_state), &pidfd);
    close(pidfd);
    return rc == 0;
}

void BpfCapture::note_restarted_call(pid_t tid, int nr)
{
    auto key = static_cast<uint32_t>(tid);
    int32_t value = nr;
    if (bpf_map_update_elem(bpf_map__fd(impl_->skel->maps.restarted_calls), &key, &value, BPF_ANY) != 0)
        throw CaptureError("cannot note the call thread " + std::to_string(tid) + " restarts: " + strerror(errno));
}

void BpfCapture::unrecorded(pid_t tid, const std::function<void()>& fn)
{
    int pidfd = thread_pidfd(tid);
    int map = bpf_map__fd(impl_->skel->maps.task_state);
    rw_task_state state{};
    bool tracked = pidfd >= 0 && bpf_map_lookup_elem(map, &pidfd, &state) == 0;
    if (tracked)
        bpf_map_delete_elem(map, &pidfd);
    try {
        fn();
    } catch (...) {
        if (tracked)
            bpf_map_update_elem(map, &pidfd, &state, BPF_ANY);
        close(pidfd);
        throw;
    }
    if (tracked)
        bpf_map_update_elem(map, &pidfd, &state, BPF_ANY);
    if (pidfd >= 0)
        close(pidfd);
}

void BpfCapture::unrecorded(std::span<const pid_t> tids, const std::function<void()>& fn)
{
    if (tids.empty())
        fn();
    else
        unrecorded(tids.front(), [&] { unrecorded(tids.subspan(1), fn); });
}

int BpfCapture::ring_fd() const
{
    return ring_buffer__epoll_fd(impl_->ready_ring());
}

size_t BpfCapture::drain()
{
    int n = ring_buffer__consume(impl_->ready_ring());
    if (n < 0)
        throw CaptureError("reading the capture ring: " + std::string(strerror(-n)));
    return static_cast<size_t>(n);
}

bool BpfCapture::has_stall(pid_t tid)
{
    uint32_t key = static_cast<uint32_t>(tid);
    rw_stall stall{};
    return bpf_map_lookup_elem(bpf_map__fd(impl_->skel->maps.stalls), &key, &stall) == 0;
}

std::optional<rw_stall> BpfCapture::take_stall(pid_t tid)
{
    uint32_t key = static_cast<uint32_t>(tid);
    rw_stall stall{};
    int fd = bpf_map__fd(impl_->skel->maps.stalls);
    if (bpf_map_lookup_elem(fd, &key, &stall))
        return std::nullopt;
    bpf_map_delete_elem(fd, &key);
    return stall;
}

bool BpfCapture::is_stalled_seq(uint64_t seq)
{
    int fd = bpf_map__fd(impl_->skel->maps.stalls);
    uint32_t key = 0, next = 0;
    uint32_t* from = nullptr;
    while (bpf_map_get_next_key(fd, from, &next) == 0) {
        rw_stall stall{};
        if (bpf_map_lookup_elem(fd, &next, &stall) == 0 && stall.seq == seq)
            return true;
        key = next;
        from = &key;
    }
    return false;
}

void BpfCapture::mark_file_known(const rw_file_identity& identity)
{
    struct {
        uint64_t dev, ino;
    } key{identity.dev, identity.ino};
    bpf_map_update_elem(bpf_map__fd(impl_->skel->maps.known_files), &key, &identity, BPF_ANY);
}

namespace {

struct ReadCopyKey {
    uint64_t dev, ino;
};

} // namespace

bool BpfCapture::register_read_copy(const rw_file_identity& identity)
{
    ReadCopyKey key{identity.dev, identity.ino};
    rw_read_copy value{identity, RW_COPY_PENDING, 0, 0, 0};
    return bpf_map_update_elem(bpf_map__fd(impl_->skel->maps.read_copies), &key, &value, BPF_ANY) == 0;
}

std::optional<rw_read_copy> BpfCapture::read_copy(const rw_file_identity& identity)
{
    ReadCopyKey key{identity.dev, identity.ino};
    rw_read_copy value{};
    if (bpf_map_lookup_elem(bpf_map__fd(impl_->skel->maps.read_copies), &key, &value) != 0)
        return std::nullopt;
    return value;
}

bool BpfCapture::share_read_copy(const rw_file_identity& identity)
{
    ReadCopyKey key{identity.dev, identity.ino};
    rw_read_copy value{identity, RW_COPY_SHARED, 0, 0, 0};
    // BPF_EXIST: an entry an open for writing deleted stays deleted.
    return bpf_map_update_elem(bpf_map__fd(impl_->skel->maps.read_copies), &key, &value, BPF_EXIST) == 0;
}

void BpfCapture::withdraw_read_copy(const rw_file_identity& identity)
{
    ReadCopyKey key{identity.dev, identity.ino};
    bpf_map_delete_elem(bpf_map__fd(impl_->skel->maps.read_copies), &key);
}

uint64_t BpfCapture::read_copies_retired() const
{
    return __atomic_load_n(&impl_->skel->bss->copies_retired, __ATOMIC_SEQ_CST);
}

std::optional<uint64_t> BpfCapture::signal_mask(pid_t tid) const
{
    uint32_t key = static_cast<uint32_t>(tid);
    uint64_t mask = 0;
    if (bpf_map_lookup_elem(bpf_map__fd(impl_->skel->maps.signal_masks), &key, &mask) != 0)
        return std::nullopt;
    return mask;
}

void BpfCapture::answer_at_exit(pid_t tid)
{
    uint32_t key = static_cast<uint32_t>(tid), one = 1;
    if (bpf_map_update_elem(bpf_map__fd(impl_->skel->maps.answered_calls), &key, &one, BPF_ANY))
        throw CaptureError("cannot tell the kernel side that rewind answers a call of thread " + std::to_string(tid) +
                           ": " + strerror(errno));
}

void BpfCapture::set_serialized(pid_t tgid, bool serialized, bool every_call)
{
    uint32_t key = static_cast<uint32_t>(tgid), mode = every_call ? RW_SERIALIZED_EVERY_CALL : RW_SERIALIZED;
    int fd = bpf_map__fd(impl_->skel->maps.serialized);
    if (serialized) {
        if (bpf_map_update_elem(fd, &key, &mode, BPF_ANY))
            throw CaptureError("cannot tell the kernel side that process " + std::to_string(tgid) +
                               " runs one thread at a time: " + strerror(errno));
    } else {
        bpf_map_delete_elem(fd, &key);
    }
}

void BpfCapture::inherit_sync_probes(pid_t parent, pid_t child)
{
    auto it = impl_->probed_names.find(parent);
    if (it == impl_->probed_names.end())
        return;
    for (const std::string& name : std::set<std::string>(it->second))
        attach_sync_probes(child, name, name);
}

void BpfCapture::attach_sync_probes(pid_t pid, const std::string& path, const std::string& name)
{
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0)
        throw CaptureError("cannot probe the synchronization calls of " + name + ": " + strerror(errno));
    if (!impl_->probed.insert({pid, st.st_dev, st.st_ino}).second)
        return;
    impl_->probed_names[pid].insert(name);
    auto* s = impl_->skel.get();
    const ProbeSites& sites = impl_->sites_in(path, name, st);
    const std::vector<uint64_t>& at = sites.offsets;
    const std::vector<uint64_t>& cookies = sites.cookies;
    if (at.empty())
        return;
    // One multi-uprobe link per direction: a link per function would cost a
    // kernel grace period (a tenth of a second here) to attach and to detach.
    // Returns first: a call entered once the entry probe is in must find
    // its return probed, or its thread would count itself inside it for
    // good (the process runs while the links are made, up to 20 ms apart).
    for (bool ret : {true, false}) {
        UprobeMultiAttr attr{};
        attr.prog_fd = static_cast<uint32_t>(bpf_program__fd(ret ? s->progs.on_sync_return : s->progs.on_sync_entry));
        attr.attach_type = kAttachUprobeMulti;
        attr.path = reinterpret_cast<uint64_t>(path.c_str());
        attr.offsets = reinterpret_cast<uint64_t>(at.data());
        attr.cookies = reinterpret_cast<uint64_t>(cookies.data());
        attr.cnt = static_cast<uint32_t>(at.size());
        attr.flags = ret ? kUprobeMultiReturn : 0;
        attr.pid = static_cast<uint32_t>(pid);
        int fd = static_cast<int>(::syscall(SYS_bpf, kBpfLinkCreate, &attr, sizeof(attr)));
        if (fd < 0)
            throw CaptureError("cannot attach uprobes to the synchronization calls of " + name + ": " +
                               strerror(errno) + " (rewind record --parallel needs multi-uprobe links, Linux 6.6)");
        impl_->sync_links[pid].emplace_back(fd);
        impl_->probes += at.size();
    }
}

void BpfCapture::release_sync_probes(pid_t pid)
{
    impl_->probed_names.erase(pid);
    std::erase_if(impl_->probed, [pid](const auto& key) { return std::get<0>(key) == pid; });
    auto it = impl_->sync_links.find(pid);
    if (it == impl_->sync_links.end())
        return;
    impl_->releaser.release(std::move(it->second));
    impl_->sync_links.erase(it);
}

size_t BpfCapture::sync_probes() const
{
    return impl_->probes;
}

std::vector<std::string> BpfCapture::unprobed_sync_calls() const
{
    return {impl_->unprobed.begin(), impl_->unprobed.end()};
}

uint64_t BpfCapture::next_seq()
{
    return __atomic_fetch_add(&impl_->skel->bss->seq_counter, 1, __ATOMIC_SEQ_CST);
}

uint64_t BpfCapture::ring_refusals() const
{
    return __atomic_load_n(&impl_->skel->bss->ring_refusals, __ATOMIC_SEQ_CST);
}

uint32_t BpfCapture::kernel_hz() const
{
    return __atomic_load_n(&impl_->skel->bss->kernel_hz, __ATOMIC_SEQ_CST);
}

uint64_t BpfCapture::missed_runs() const
{
    uint64_t total = 0;
    bpf_program* prog;
    bpf_object__for_each_program(prog, impl_->skel->obj)
    {
        bpf_prog_info info{};
        uint32_t len = sizeof(info);
        if (bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &len) == 0)
            total += info.recursion_misses;
    }
    return total;
}

} // namespace rw
