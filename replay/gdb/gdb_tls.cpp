#include "gdb_tls.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <proc_service.h>
#include <sys/stat.h>
#include <thread_db.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "debug_session.h"
#include "gdb_host_files.h"
#include "gdb_registers.h"
#include "steady_now.h"
#include "text.h"
#include "trace.h"
#include "unique_fd.h"

namespace rw::replay {
namespace {

// The symbols an ELF file defines (.dynsym, and .symtab unless stripped),
// and the page its first loadable segment asks for: the mapping of file
// offset 0 lands there plus the load bias.
struct ElfSymbols {
    std::unordered_map<std::string, uint64_t> values;
    uint64_t first_page = 0;
};

// Read once per file: the files are the trace's copies, which never change,
// and libc's table is what every request searches.
std::shared_ptr<const ElfSymbols> symbols_of(int fd)
{
    struct stat st {};
    if (::fstat(fd, &st) != 0)
        return nullptr;
    using Key = std::tuple<dev_t, ino_t, off_t, int64_t>;
    static std::map<Key, std::shared_ptr<const ElfSymbols>> cache;
    Key key{st.st_dev, st.st_ino, st.st_size, st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec};
    if (auto it = cache.find(key); it != cache.end())
        return it->second;

    static const bool initialised = elf_version(EV_CURRENT) != EV_NONE;
    Elf* elf = initialised ? elf_begin(fd, ELF_C_READ_MMAP, nullptr) : nullptr;
    if (!elf)
        return nullptr;
    std::unique_ptr<Elf, int (*)(Elf*)> closer(elf, elf_end);
    if (elf_kind(elf) != ELF_K_ELF || gelf_getclass(elf) != ELFCLASS64)
        return nullptr;
    auto symbols = std::make_shared<ElfSymbols>();
    size_t phnum = 0;
    bool found_page = false;
    if (elf_getphdrnum(elf, &phnum) != 0)
        return nullptr;
    for (size_t i = 0; i < phnum && !found_page; i++) {
        GElf_Phdr ph;
        if (gelf_getphdr(elf, static_cast<int>(i), &ph) && ph.p_type == PT_LOAD && (ph.p_offset & ~0xfffull) == 0) {
            symbols->first_page = ph.p_vaddr & ~0xfffull;
            found_page = true;
        }
    }
    if (!found_page)
        return nullptr;
    for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn; scn = elf_nextscn(elf, scn)) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_DYNSYM && sh.sh_type != SHT_SYMTAB) || sh.sh_entsize == 0)
            continue;
        Elf_Data* data = elf_getdata(scn, nullptr);
        for (size_t i = 0; data && i < sh.sh_size / sh.sh_entsize; i++) {
            GElf_Sym sym;
            if (!gelf_getsym(data, static_cast<int>(i), &sym) || sym.st_shndx == SHN_UNDEF ||
                GELF_ST_TYPE(sym.st_info) == STT_TLS) // a TLS symbol's value is an offset, not an address
                continue;
            if (const char* name = elf_strptr(elf, sh.sh_link, sym.st_name); name && *name)
                symbols->values.emplace(name, sym.st_value);
        }
    }
    cache.emplace(key, symbols);
    return symbols;
}

// The file behind a mapping of the replayed process. Its trace copy first:
// what the kernel mapped at exec is bind-mounted over the original path in
// the replay's own mount namespace, where this process may not be, and
// reading the copy needs no privilege. Then /proc/PID/map_files, the mapped
// file itself (root only).
UniqueFd open_mapped(pid_t live, const std::string& range, const std::string& path, const Trace& trace,
                     const HostFiles& files)
{
    if (std::string copy = files.copy_of(path); !copy.empty())
        return files.open_copy(copy);
    // The replay maps the libraries the program loaded from the copies themselves.
    std::string name = std::filesystem::path(path).filename().string();
    std::error_code ec;
    if (is_content_hash(name) && std::filesystem::equivalent(trace.file_copy(name), path, ec))
        return files.open_copy(path);
    std::string mapped = "/proc/" + std::to_string(live) + "/map_files/" + range;
    struct stat st {};
    if (::stat(mapped.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) // opening a device may do something
        return UniqueFd();
    return UniqueFd(::open(mapped.c_str(), O_RDONLY | O_CLOEXEC));
}

struct LoadedObject {
    uint64_t bias = 0;
    std::shared_ptr<const ElfSymbols> symbols;
};

// Every ELF object the live process maps, in address order (the program
// first, as gdb searches its objfiles).
std::vector<LoadedObject> loaded_objects(pid_t live, const Trace& trace, const HostFiles& files)
{
    std::vector<LoadedObject> objects;
    std::ifstream maps("/proc/" + std::to_string(live) + "/maps");
    std::string line;
    while (std::getline(maps, line)) {
        std::istringstream fields(line);
        std::string range, perms, offset, dev, inode, path;
        fields >> range >> perms >> offset >> dev >> inode;
        std::getline(fields >> std::ws, path);
        if (path.empty() || path[0] != '/' || offset.find_first_not_of('0') != std::string::npos)
            continue;
        if (path.ends_with(" (deleted)"))
            path.resize(path.size() - 10);
        UniqueFd fd = open_mapped(live, range, path, trace, files);
        auto symbols = fd ? symbols_of(fd.get()) : nullptr;
        if (symbols)
            objects.push_back(
                {std::stoull(range.substr(0, range.find('-')), nullptr, 16) - symbols->first_page, std::move(symbols)});
    }
    return objects;
}

} // namespace
} // namespace rw::replay

// ---- the debugged process, as libthread_db sees it -----------------------
// Thread ids are the recorded ones throughout: the program's memory holds
// them (a pthread's tid field), and the session maps them to the replay's
// real threads. Nothing is written: libthread_db writes only to enable its
// event reporting, which this server does not use.
struct ps_prochandle {
    rw::replay::DebugSession& session;
    const rw::replay::HostFiles& files;
    pid_t live; // the replay's process, whose /proc/PID/maps says what is loaded where
    std::vector<rw::replay::LoadedObject> objects;
    bool objects_read = false;
};

namespace {

// No exception may unwind through libthread_db's C frames.
template <typename F> ps_err_e guarded(F&& f)
{
    try {
        return f();
    } catch (const std::exception&) {
        return PS_ERR;
    }
}

// <sys/reg.h>'s FS and GS: the thread area indexes glibc's libthread_db
// asks for on x86-64 (that header's macros would clash with Registers::FS).
constexpr int kThreadAreaFs = 25, kThreadAreaGs = 26;

} // namespace

extern "C" {

ps_err_e ps_pdread(ps_prochandle* ph, psaddr_t addr, void* out, size_t size)
{
    return guarded([&] {
        std::span<uint8_t> buf(static_cast<uint8_t*>(out), size);
        return ph->session.read_memory(reinterpret_cast<uint64_t>(addr), buf) == size ? PS_OK : PS_BADADDR;
    });
}

ps_err_e ps_pdwrite(ps_prochandle*, psaddr_t, const void*, size_t)
{
    return PS_ERR;
}

ps_err_e ps_ptread(ps_prochandle* ph, psaddr_t addr, void* out, size_t size)
{
    return ps_pdread(ph, addr, out, size);
}

ps_err_e ps_ptwrite(ps_prochandle*, psaddr_t, const void*, size_t)
{
    return PS_ERR;
}

ps_err_e ps_lgetregs(ps_prochandle* ph, lwpid_t lwp, prgregset_t out)
{
    return guarded([&] {
        rw::Registers regs = ph->session.registers(lwp);
        static_assert(sizeof(prgregset_t) == sizeof regs.words, "user_regs_struct order");
        std::memcpy(out, regs.words.data(), sizeof regs.words);
        return PS_OK;
    });
}

ps_err_e ps_lsetregs(ps_prochandle*, lwpid_t, const prgregset_t)
{
    return PS_ERR;
}

ps_err_e ps_lgetfpregs(ps_prochandle* ph, lwpid_t lwp, prfpregset_t* out)
{
    return guarded([&] {
        pid_t real = ph->session.process_of(lwp);
        if (!real)
            return PS_BADLID;
        static_assert(sizeof(prfpregset_t) == sizeof(rw::RegisterFile::fp));
        rw::RegisterFile regs = rw::read_register_file(real);
        std::memcpy(out, &regs.fp, sizeof *out);
        return PS_OK;
    });
}

ps_err_e ps_lsetfpregs(ps_prochandle*, lwpid_t, const prfpregset_t*)
{
    return PS_ERR;
}

pid_t ps_getpid(ps_prochandle* ph)
{
    return ph->session.debugged_process();
}

ps_err_e ps_get_thread_area(ps_prochandle* ph, lwpid_t lwp, int index, psaddr_t* base)
{
    if (index != kThreadAreaFs && index != kThreadAreaGs)
        return PS_BADADDR;
    return guarded([&] {
        rw::Registers regs = ph->session.registers(lwp);
        uint64_t value = regs[index == kThreadAreaFs ? rw::Registers::FS_BASE : rw::Registers::GS_BASE];
        *base = reinterpret_cast<psaddr_t>(value);
        return PS_OK;
    });
}

// The object name (libc.so.6, ld-linux-x86-64.so.2) is not needed: as in gdb,
// the first object that defines the symbol has it.
ps_err_e ps_pglobal_lookup(ps_prochandle* ph, const char*, const char* name, psaddr_t* address)
{
    return guarded([&] {
        if (!ph->objects_read) {
            ph->objects = rw::replay::loaded_objects(ph->live, ph->session.trace(), ph->files);
            ph->objects_read = true;
        }
        for (const auto& object : ph->objects)
            if (auto it = object.symbols->values.find(name); it != object.symbols->values.end()) {
                *address = reinterpret_cast<psaddr_t>(object.bias + it->second);
                return PS_OK;
            }
        return PS_NOSYM;
    });
}

} // extern "C"

namespace rw::replay {
namespace {

// libthread_db, loaded once. It resolves the ps_* functions above in the
// executable, so a link that does not export them fails here, not later.
struct ThreadDb {
    decltype(&td_ta_new) ta_new = nullptr;
    decltype(&td_ta_delete) ta_delete = nullptr;
    decltype(&td_ta_map_lwp2thr) map_lwp2thr = nullptr;
    decltype(&td_thr_tls_get_addr) tls_get_addr = nullptr;
    std::string error; // why it cannot be used
};

const ThreadDb& thread_db()
{
    static const ThreadDb db = [] {
        ThreadDb d;
        void* lib = ::dlopen("libthread_db.so.1", RTLD_NOW | RTLD_LOCAL);
        if (!lib) {
            d.error = ::dlerror();
            return d;
        }
        auto init = reinterpret_cast<decltype(&td_init)>(::dlsym(lib, "td_init"));
        d.ta_new = reinterpret_cast<decltype(&td_ta_new)>(::dlsym(lib, "td_ta_new"));
        d.ta_delete = reinterpret_cast<decltype(&td_ta_delete)>(::dlsym(lib, "td_ta_delete"));
        d.map_lwp2thr = reinterpret_cast<decltype(&td_ta_map_lwp2thr)>(::dlsym(lib, "td_ta_map_lwp2thr"));
        d.tls_get_addr = reinterpret_cast<decltype(&td_thr_tls_get_addr)>(::dlsym(lib, "td_thr_tls_get_addr"));
        if (!init || !d.ta_new || !d.ta_delete || !d.map_lwp2thr || !d.tls_get_addr || init() != TD_OK)
            d.error = "libthread_db.so.1 lacks td_ta_new, td_ta_map_lwp2thr or td_thr_tls_get_addr";
        return d;
    }();
    return db;
}

std::string describe(td_err_e err)
{
    switch (err) {
    case TD_NOTLS:
    case TD_NOAPLIC:
        return "the module has no thread-local storage";
    case TD_TLSDEFER:
        return "the thread has not allocated the module's thread-local storage yet";
    case TD_NOTHR:
    case TD_BADTH:
        return "libthread_db does not know the thread (its C library is not set up yet?)";
    case TD_VERSION:
        return "libthread_db.so.1 is for another version of glibc than the program's";
    case TD_NOLIBTHREAD:
        return "the program's C library is not glibc's, or not loaded yet";
    case TD_ERR:
        return "libthread_db cannot tell (TD_ERR): has the thread set up its thread-local storage yet?";
    default:
        return "libthread_db error " + std::to_string(static_cast<int>(err));
    }
}

// gdbserver's way: a fresh agent per request (td_ta_new looks up a few
// symbols, which the cached tables make cheap), so none outlives an exec or
// a move in time. `fallback` says the failure is libthread_db's own, not the
// thread's or the module's.
std::optional<uint64_t> by_thread_db(ps_prochandle& ph, Tid tid, uint64_t lm, std::string& why, bool& fallback)
{
    const ThreadDb& db = thread_db();
    if (!db.error.empty()) {
        why = "cannot load glibc's libthread_db.so.1 (Debian package libc6): " + db.error;
        fallback = true;
        return std::nullopt;
    }
    td_thragent_t* agent = nullptr;
    td_err_e err = db.ta_new(&ph, &agent);
    if (err != TD_OK) {
        why = describe(err);
        fallback = err == TD_VERSION || err == TD_NOLIBTHREAD;
        return std::nullopt;
    }
    td_thrhandle_t thread{};
    psaddr_t address = nullptr;
    err = db.map_lwp2thr(agent, tid, &thread);
    if (err == TD_OK)
        err = db.tls_get_addr(&thread, reinterpret_cast<psaddr_t>(lm), 0, &address);
    db.ta_delete(agent);
    if (err != TD_OK) {
        why = describe(err);
        return std::nullopt;
    }
    return reinterpret_cast<uint64_t>(address);
}

// Without a libthread_db for the program's glibc: its descriptors give the
// module's TLS id (in its link_map), the thread's DTV (from its descriptor
// at the thread pointer) and the DTV's layout; the module's entry there is
// its block, once the thread has allocated it.
std::optional<uint64_t> by_descriptors(ps_prochandle& ph, Tid tid, uint64_t lm, std::string& why)
{
    struct Field {
        uint32_t bits = 0, count = 0, offset = 0;
    };
    auto field = [&](const char* name, Field& f) {
        psaddr_t at = nullptr;
        return ps_pglobal_lookup(&ph, nullptr, name, &at) == PS_OK && ps_pdread(&ph, at, &f, sizeof f) == PS_OK;
    };
    auto word = [&](uint64_t addr, uint64_t& value) {
        return ps_pdread(&ph, reinterpret_cast<psaddr_t>(addr), &value, sizeof value) == PS_OK;
    };
    Field modid_at, dtv_pointer_at, dtv_entries, entry_pointer_at;
    if (!field("_thread_db_link_map_l_tls_modid", modid_at) || !field("_thread_db_pthread_dtvp", dtv_pointer_at) ||
        !field("_thread_db_dtv_dtv", dtv_entries) || !field("_thread_db_dtv_t_pointer_val", entry_pointer_at) ||
        dtv_entries.bits % 8 != 0) {
        why += "; and the program's C library does not describe its thread structures (_thread_db_* symbols)";
        return std::nullopt;
    }
    uint64_t thread_pointer = ph.session.registers(tid)[Registers::FS_BASE];
    uint64_t modid = 0, dtv = 0, block = 0;
    if (!word(lm + modid_at.offset, modid) || modid == 0) {
        why = "the module has no thread-local storage";
        return std::nullopt;
    }
    if (!word(thread_pointer + dtv_pointer_at.offset, dtv) ||
        !word(dtv + dtv_entries.offset + modid * (dtv_entries.bits / 8) + entry_pointer_at.offset, block) ||
        block == 0 || block == ~uint64_t(0)) {
        why = "the thread has not allocated the module's thread-local storage yet";
        return std::nullopt;
    }
    return block;
}

} // namespace

std::string thread_local_address(DebugSession& session, const HostFiles& files, Tid tid, uint64_t offset, uint64_t lm)
{
    auto start = steady_now();
    pid_t live = session.process_of(tid);
    if (!live)
        return "E.no thread " + std::to_string(tid);
    ps_prochandle ph{session, files, live, {}, false};
    std::string why;
    bool fallback = false;
    std::optional<uint64_t> block = by_thread_db(ph, tid, lm, why, fallback);
    const char* how = "libthread_db";
    if (!block && fallback) {
        debug_log("qGetTLSAddr: %s; reading glibc's descriptors instead", why.c_str());
        try {
            block = by_descriptors(ph, tid, lm, why);
            how = "glibc's descriptors";
        } catch (const std::exception& e) {
            why += std::string("; ") + e.what();
        }
    }
    debug_log("qGetTLSAddr thread %d module %#llx: %s in %.2f ms (%s)", tid, static_cast<unsigned long long>(lm),
              block ? hex(*block + offset).c_str() : why.c_str(),
              std::chrono::duration<double, std::milli>(steady_now() - start).count(), how);
    if (!block) {
        // gdb reads no text in a reply; keep the packet's framing characters out.
        for (char& c : why)
            if (c == '$' || c == '#' || c == '}' || c == '*')
                c = ' ';
        return "E." + why;
    }
    return fmt::format("{:x}", *block + offset);
}

} // namespace rw::replay
