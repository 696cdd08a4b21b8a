#include "gdb_tls.h"

#include <elf.h>
#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

#include "debug_session.h"
#include "unique_fd.h"

namespace rw::replay {

namespace {

template <typename T> bool read_at(int fd, T& out, uint64_t offset)
{
    return ::pread(fd, &out, sizeof out, static_cast<off_t>(offset)) == static_cast<ssize_t>(sizeof out);
}

// The value of `name` in an ELF file's dynamic symbol table.
std::optional<uint64_t> dynamic_symbol_in(int fd, const std::string& name)
{
    Elf64_Ehdr eh{};
    if (!read_at(fd, eh, 0) || std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
        eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shnum > 4096)
        return std::nullopt;
    std::vector<Elf64_Shdr> sections(eh.e_shnum);
    for (unsigned i = 0; i < eh.e_shnum; i++)
        if (!read_at(fd, sections[i], eh.e_shoff + i * sizeof(Elf64_Shdr)))
            return std::nullopt;
    for (const auto& sh : sections) {
        if (sh.sh_type != SHT_DYNSYM || sh.sh_link >= sections.size() || sh.sh_entsize != sizeof(Elf64_Sym))
            continue;
        const auto& strtab = sections[sh.sh_link];
        if (strtab.sh_size > (64u << 20) || sh.sh_size > (64u << 20))
            return std::nullopt;
        std::vector<char> strings(strtab.sh_size);
        if (::pread(fd, strings.data(), strings.size(), static_cast<off_t>(strtab.sh_offset)) !=
            static_cast<ssize_t>(strings.size()))
            return std::nullopt;
        for (uint64_t at = 0; at + sizeof(Elf64_Sym) <= sh.sh_size; at += sizeof(Elf64_Sym)) {
            Elf64_Sym sym{};
            if (!read_at(fd, sym, sh.sh_offset + at))
                return std::nullopt;
            if (sym.st_name < strings.size() && sym.st_shndx != SHN_UNDEF &&
                std::strncmp(strings.data() + sym.st_name, name.c_str(), strings.size() - sym.st_name) == 0)
                return sym.st_value;
        }
    }
    return std::nullopt;
}

// Where the ELF object mapped at `start` from file offset 0 was loaded
// relative to its own addresses (0 for an executable not built PIE).
std::optional<uint64_t> load_bias(int fd, uint64_t start)
{
    Elf64_Ehdr eh{};
    if (!read_at(fd, eh, 0) || eh.e_phentsize != sizeof(Elf64_Phdr))
        return std::nullopt;
    for (unsigned i = 0; i < eh.e_phnum; i++) {
        Elf64_Phdr ph{};
        if (!read_at(fd, ph, eh.e_phoff + i * sizeof(Elf64_Phdr)))
            return std::nullopt;
        if (ph.p_type == PT_LOAD && ph.p_offset == 0)
            return start - (ph.p_vaddr & ~uint64_t(0xfff));
    }
    return std::nullopt;
}

// glibc's descriptor of one field: {size in bits, count, offset}.
struct FieldDescriptor {
    uint32_t bits = 0, count = 0, offset = 0;
};

} // namespace

std::optional<uint64_t> find_dynamic_symbol(pid_t pid, const std::string& name)
{
    std::ifstream maps("/proc/" + std::to_string(pid) + "/maps");
    std::string line;
    std::vector<std::string> seen;
    while (std::getline(maps, line)) {
        std::istringstream fields(line);
        std::string range, perms, offset, dev, inode, path;
        fields >> range >> perms >> offset >> dev >> inode;
        std::getline(fields >> std::ws, path);
        if (path.empty() || path[0] != '/' || std::stoull(offset, nullptr, 16) != 0)
            continue;
        // The mapped file itself, whatever its name in the replay's mount namespace.
        UniqueFd fd(::open(("/proc/" + std::to_string(pid) + "/map_files/" + range).c_str(), O_RDONLY | O_CLOEXEC));
        if (!fd)
            continue;
        if (auto value = dynamic_symbol_in(fd.get(), name))
            if (auto bias = load_bias(fd.get(), std::stoull(range.substr(0, range.find('-')), nullptr, 16)))
                return *bias + *value;
    }
    return std::nullopt;
}

std::string thread_local_address(DebugSession& session, const std::string& packet, std::string& why)
{
    // qGetTLSAddr:THREAD,OFFSET,LM (hex; THREAD may be pPID.TID)
    std::string args = packet.substr(packet.find(':') + 1);
    std::array<std::string, 3> part;
    for (size_t i = 0, start = 0; i < 3; i++) {
        size_t end = args.find(',', start);
        part[i] = args.substr(start, end == std::string::npos ? std::string::npos : end - start);
        start = end == std::string::npos ? args.size() : end + 1;
    }
    std::string thread = part[0].substr(part[0].find('.') == std::string::npos ? 0 : part[0].find('.') + 1);
    if (!thread.empty() && thread[0] == 'p')
        thread = thread.substr(1);
    uint64_t tid = 0, offset = 0, lm = 0;
    try {
        tid = std::stoull(thread, nullptr, 16);
        offset = std::stoull(part[1], nullptr, 16);
        lm = std::stoull(part[2], nullptr, 16);
    } catch (const std::exception&) {
        why = "malformed qGetTLSAddr";
        return "E01";
    }
    if (tid == 0)
        tid = static_cast<uint64_t>(session.current_thread());
    pid_t pid = session.process_of(static_cast<Tid>(tid));
    if (!pid) {
        why = "no thread " + std::to_string(tid);
        return "E01";
    }
    auto read64 = [&](uint64_t addr) -> std::optional<uint64_t> {
        uint64_t v = 0;
        if (session.read_memory(addr, {reinterpret_cast<uint8_t*>(&v), sizeof v}) != sizeof v)
            return std::nullopt;
        return v;
    };
    auto descriptor = [&](const char* name) -> std::optional<FieldDescriptor> {
        auto at = find_dynamic_symbol(pid, name);
        FieldDescriptor d;
        if (!at || session.read_memory(*at, {reinterpret_cast<uint8_t*>(&d), sizeof d}) != sizeof d)
            return std::nullopt;
        return d;
    };
    auto modid_field = descriptor("_thread_db_link_map_l_tls_modid");
    auto dtv_field = descriptor("_thread_db_pthread_dtvp");
    auto dtv_slots = descriptor("_thread_db_dtv_dtv");
    auto slot_value = descriptor("_thread_db_dtv_t_pointer_val");
    if (!modid_field || !dtv_field || !dtv_slots || !slot_value || dtv_slots->bits % 8 != 0) {
        why = "the program's C library does not describe its thread structures (_thread_db_* symbols)";
        return "E01";
    }
    uint64_t thread_pointer = session.registers(static_cast<Tid>(tid))[Registers::FS_BASE];
    auto modid = read64(lm + modid_field->offset);
    auto dtv = read64(thread_pointer + dtv_field->offset);
    if (!modid || !dtv || *modid == 0) {
        why = "the module has no thread-local storage, or the thread's is not set up yet";
        return "E01";
    }
    auto block = read64(*dtv + dtv_slots->offset + *modid * (dtv_slots->bits / 8) + slot_value->offset);
    if (!block || *block == ~uint64_t(0) || *block == 0) {
        why = "this thread has not allocated the module's thread-local storage yet";
        return "E01";
    }
    char out[32];
    std::snprintf(out, sizeof out, "%llx", static_cast<unsigned long long>(*block + offset));
    return out;
}

} // namespace rw::replay
