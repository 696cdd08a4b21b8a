#include "vdso.h"

#include <elf.h>
#include <gelf.h>
#include <sys/auxv.h>
#include <sys/syscall.h>

#include <array>
#include <cstring>
#include <map>
#include <memory>
#include <string_view>
#include <system_error>
#include <vector>

#include "process_image.h"
#include "tracee.h"

namespace rw {
namespace {

// A vDSO image is a few pages; anything larger is not one.
constexpr size_t kMaxVdsoBytes = 64 * 1024;

struct ElfCloser {
    void operator()(Elf* e) const { elf_end(e); }
};

// The replacement code: `mov eax, NR; syscall; ret` (8 bytes, as short as
// the shortest function replaced), or for getrandom, whose vDSO form takes
// an opaque state, `mov rax, -ENOSYS; ret`: libc then makes the syscall.
std::array<uint8_t, 8> syscall_stub(uint32_t nr)
{
    std::array<uint8_t, 8> code = {0xb8, 0, 0, 0, 0, 0x0f, 0x05, 0xc3};
    std::memcpy(&code[1], &nr, 4);
    return code;
}

std::array<uint8_t, 8> enosys_stub()
{
    return {0x48, 0xc7, 0xc0, 0xda, 0xff, 0xff, 0xff, 0xc3}; // mov rax, -38; ret
}

struct Replacement {
    std::string_view name;
    std::array<uint8_t, 8> code;
};

const std::vector<Replacement>& replacements()
{
    static const std::vector<Replacement> all = {
        {"__vdso_clock_gettime", syscall_stub(SYS_clock_gettime)},
        {"__vdso_gettimeofday", syscall_stub(SYS_gettimeofday)},
        {"__vdso_time", syscall_stub(SYS_time)},
        {"__vdso_clock_getres", syscall_stub(SYS_clock_getres)},
        {"__vdso_getcpu", syscall_stub(SYS_getcpu)},
        {"__vdso_getrandom", enosys_stub()},
    };
    return all;
}

// Offsets (from the image's start) and sizes of the functions among the
// dynamic symbols of the vDSO image `image`. Empty if it is not an ELF image.
std::map<std::string, std::pair<uint64_t, uint64_t>> symbols(std::vector<uint8_t>& image)
{
    std::map<std::string, std::pair<uint64_t, uint64_t>> out;
    if (elf_version(EV_CURRENT) == EV_NONE)
        return out;
    std::unique_ptr<Elf, ElfCloser> elf(elf_memory(reinterpret_cast<char*>(image.data()), image.size()));
    if (!elf || elf_kind(elf.get()) != ELF_K_ELF)
        return out;
    // The vDSO is linked at 0 on x86-64 (its symbols are offsets); the
    // first PT_LOAD's address says so, or what to subtract.
    uint64_t base = 0;
    size_t headers = 0;
    if (elf_getphdrnum(elf.get(), &headers) != 0)
        return out;
    for (size_t i = 0; i < headers; i++) {
        GElf_Phdr ph;
        if (gelf_getphdr(elf.get(), static_cast<int>(i), &ph) && ph.p_type == PT_LOAD) {
            base = ph.p_vaddr - ph.p_offset;
            break;
        }
    }
    for (Elf_Scn* scn = elf_nextscn(elf.get(), nullptr); scn; scn = elf_nextscn(elf.get(), scn)) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM || sh.sh_entsize == 0)
            continue;
        Elf_Data* data = elf_getdata(scn, nullptr);
        size_t count = sh.sh_size / sh.sh_entsize;
        for (size_t i = 0; data && i < count; i++) {
            GElf_Sym sym;
            if (!gelf_getsym(data, static_cast<int>(i), &sym) || GELF_ST_TYPE(sym.st_info) != STT_FUNC)
                continue;
            const char* name = elf_strptr(elf.get(), sh.sh_link, sym.st_name);
            if (name && sym.st_value >= base)
                out[name] = {sym.st_value - base, sym.st_size};
        }
    }
    return out;
}

} // namespace

std::string patch_vdso(const TraceeMemory& mem, const InitialStack& stack)
{
    std::optional<uint64_t> at = stack.aux(AT_SYSINFO_EHDR);
    if (!at || *at == 0)
        return ""; // no vDSO: libc makes the syscalls itself
    return patch_vdso_at(mem, *at);
}

std::string patch_vdso_of(pid_t pid)
{
    for (const Mapping& m : read_mappings(pid))
        if (m.path == "[vdso]")
            return patch_vdso_at(TraceeMemory(pid), m.start);
    return "";
}

std::string patch_vdso_at(const TraceeMemory& mem, uint64_t base)
{
    // Its size: the ELF header's section headers end the image.
    std::vector<uint8_t> header(sizeof(Elf64_Ehdr));
    if (!mem.read(RemoteAddr(base), header))
        return "cannot read the vDSO's ELF header";
    Elf64_Ehdr eh;
    std::memcpy(&eh, header.data(), sizeof eh);
    uint64_t size = eh.e_shoff + uint64_t(eh.e_shnum) * eh.e_shentsize;
    if (std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || size > kMaxVdsoBytes || size < sizeof eh)
        return "the vDSO is not an ELF image rewind knows";
    std::vector<uint8_t> image(size);
    if (!mem.read(RemoteAddr(base), image))
        return "cannot read the vDSO";
    auto found = symbols(image);
    for (const Replacement& r : replacements()) {
        auto it = found.find(std::string(r.name));
        if (it == found.end())
            continue; // (getrandom came in Linux 6.11)
        auto [offset, length] = it->second;
        if (length < r.code.size() || offset + r.code.size() > size)
            return "the vDSO's " + std::string(r.name) + " is too short to patch";
        if (!mem.write(RemoteAddr(base + offset), r.code))
            return "cannot patch the vDSO's " + std::string(r.name);
    }
    return "";
}

namespace {

using Symbols = std::map<std::string, std::pair<uint64_t, uint64_t>>;

// Moves a thread stopped inside one of the replacements to where it would
// be in the kernel's code: the function's start if its call is still to be
// made, past the function's return if it was made. Else it would go on in
// the middle of the kernel's instructions.
bool leave_replacement(pid_t tid, uint64_t base, const Symbols& found)
{
    try {
        Registers r = get_registers(tid);
        uint64_t rip = r[Registers::RIP];
        for (const Replacement& rep : replacements()) {
            auto it = found.find(std::string(rep.name));
            if (it == found.end())
                continue;
            uint64_t start = base + it->second.first;
            if (rip <= start || rip >= start + rep.code.size())
                continue;
            if (rip < start + rep.code.size() - 1) {
                // Before the syscall (made again after an interruption): the
                // kernel's code makes the call from the same argument registers.
                r[Registers::RIP] = start;
            } else {
                // At the `ret`, the result in rax: returned from here.
                uint64_t to = 0;
                if (!TraceeMemory(tid).read(RemoteAddr(r[Registers::RSP]), {reinterpret_cast<uint8_t*>(&to), 8}))
                    return false;
                r[Registers::RIP] = to;
                r[Registers::RSP] += 8;
            }
            set_registers(tid, r);
            break;
        }
        return true;
    } catch (const std::system_error&) {
        return false;
    }
}

} // namespace

std::vector<std::string> put_back_vdso(pid_t tgid, const std::vector<pid_t>& stopped,
                                       const std::vector<uint8_t>& original)
{
    std::vector<std::string> problems;
    if (stopped.empty())
        return problems;
    for (const Mapping& m : read_mappings(tgid)) {
        if (m.path != "[vdso]")
            continue;
        if (m.end - m.start != original.size()) {
            problems.push_back("cannot put back the vDSO of process " + std::to_string(tgid) + ": not the kernel's size");
            continue;
        }
        std::vector<uint8_t> image = original;
        Symbols found = symbols(image);
        for (pid_t tid : stopped)
            if (!leave_replacement(tid, m.start, found))
                problems.push_back("thread " + std::to_string(tid) + " cannot leave rewind's vDSO code");
        if (!TraceeMemory(stopped.front()).write(RemoteAddr(m.start), original))
            problems.push_back("cannot put back the vDSO of process " + std::to_string(tgid));
    }
    return problems;
}

bool hide_vdso(const TraceeMemory& mem, InitialStack& st)
{
    for (size_t i = 0; i + 1 < st.auxv.size(); i += 2) {
        if (st.auxv[i] != AT_SYSINFO_EHDR)
            continue;
        uint64_t ignore = AT_IGNORE;
        if (!mem.write(RemoteAddr(st.auxv_addr + i * 8), {reinterpret_cast<const uint8_t*>(&ignore), 8}))
            return false;
        st.auxv[i] = AT_IGNORE;
    }
    return true;
}

} // namespace rw
