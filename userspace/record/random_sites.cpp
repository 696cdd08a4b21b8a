#include "random_sites.h"

#include <capstone/capstone.h>
#include <elfutils/libdw.h>
#include <gelf.h>
#include <libelf.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "process_image.h"
#include "tracee.h"

namespace rw {
namespace {

constexpr uint8_t kInt3 = 0xcc;
constexpr uint64_t kMostPrefixes = 2; // 66 and a REX

struct ElfCloser {
    void operator()(Elf* e) const { elf_end(e); }
};

struct CfiCloser {
    void operator()(Dwarf_CFI* c) const { dwarf_cfi_end(c); }
};

class Disassembler {
public:
    Disassembler()
    {
        ok_ = cs_open(CS_ARCH_X86, CS_MODE_64, &handle_) == CS_ERR_OK;
        if (ok_) {
            cs_option(handle_, CS_OPT_SKIPDATA, CS_OPT_ON); // resynchronise after bytes that do not decode
            insn_ = cs_malloc(handle_);
        }
    }
    ~Disassembler()
    {
        if (insn_)
            cs_free(insn_, 1);
        if (ok_)
            cs_close(&handle_);
    }
    Disassembler(const Disassembler&) = delete;
    Disassembler& operator=(const Disassembler&) = delete;

    // Decodes from `from` (vaddr, at `code`) and returns where the
    // instructions start that are rdrand/rdseed with their 0f byte at one
    // of `candidates` (ascending vaddrs of the 0f byte, all after `from`).
    std::vector<uint64_t> walk(const uint8_t* code, size_t size, uint64_t from, const std::vector<uint64_t>& candidates)
    {
        std::vector<uint64_t> found;
        if (!ok_ || !insn_)
            return found;
        uint64_t addr = from;
        auto next = candidates.begin();
        while (next != candidates.end() && size > 0) {
            if (addr > *next) {
                ++next; // decoding went past it: inside another instruction
                continue;
            }
            if (*next - addr <= kMostPrefixes) {
                auto insn = decode_random_instruction({code, std::min<size_t>(size, 16)});
                if (insn && addr + insn->length - 3 == *next) {
                    found.push_back(addr);
                    ++next;
                }
            }
            if (!cs_disasm_iter(handle_, &code, &size, &addr, insn_))
                break;
        }
        return found;
    }

private:
    csh handle_ = 0;
    cs_insn* insn_ = nullptr;
    bool ok_ = false;
};

bool looks_like_random_instruction(const uint8_t* p, const uint8_t* end)
{
    if (end - p < 3 || p[0] != 0x0f || p[1] != 0xc7)
        return false;
    unsigned modrm = p[2];
    return (modrm >> 6) == 3 && (((modrm >> 3) & 7) == 6 || ((modrm >> 3) & 7) == 7);
}

} // namespace

std::vector<uint64_t> find_random_sites(int fd)
{
    std::vector<uint64_t> sites;
    if (elf_version(EV_CURRENT) == EV_NONE)
        return sites;
    std::unique_ptr<Elf, ElfCloser> elf(elf_begin(fd, ELF_C_READ_MMAP, nullptr));
    size_t image_size = 0;
    const char* raw = elf ? elf_rawfile(elf.get(), &image_size) : nullptr;
    size_t headers = 0;
    if (!raw || elf_kind(elf.get()) != ELF_K_ELF || elf_getphdrnum(elf.get(), &headers) != 0)
        return sites;
    const auto* image = reinterpret_cast<const uint8_t*>(raw);
    std::unique_ptr<Dwarf_CFI, CfiCloser> cfi;
    bool cfi_tried = false;
    Disassembler disassembler;

    for (size_t i = 0; i < headers; i++) {
        GElf_Phdr ph;
        if (!gelf_getphdr(elf.get(), static_cast<int>(i), &ph) || ph.p_type != PT_LOAD || !(ph.p_flags & PF_X) ||
            ph.p_offset >= image_size)
            continue;
        const uint8_t* begin = image + ph.p_offset;
        const uint8_t* end = image + std::min<uint64_t>(image_size, ph.p_offset + ph.p_filesz);
        auto vaddr_of = [&](const uint8_t* p) { return ph.p_vaddr + static_cast<uint64_t>(p - begin); };
        std::vector<uint64_t> unframed; // candidates no function description covers
        for (const uint8_t* p = begin; p < end; p++) {
            p = static_cast<const uint8_t*>(std::memchr(p, 0x0f, static_cast<size_t>(end - p)));
            if (!p)
                break;
            if (!looks_like_random_instruction(p, end))
                continue;
            uint64_t candidate = vaddr_of(p);
            if (!cfi_tried) {
                cfi.reset(dwarf_getcfi_elf(elf.get()));
                cfi_tried = true;
            }
            Dwarf_Frame* frame = nullptr;
            Dwarf_Addr start = 0, stop = 0;
            if (cfi && dwarf_cfi_addrframe(cfi.get(), candidate, &frame) == 0 &&
                dwarf_frame_info(frame, &start, &stop, nullptr) >= 0 && start >= ph.p_vaddr && start <= candidate) {
                std::free(frame);
                const uint8_t* from = begin + (start - ph.p_vaddr);
                for (uint64_t site : disassembler.walk(from, static_cast<size_t>(end - from), start, {candidate}))
                    sites.push_back(site - ph.p_vaddr + ph.p_offset);
            } else {
                std::free(frame);
                unframed.push_back(candidate);
            }
        }
        if (!unframed.empty())
            for (uint64_t site : disassembler.walk(begin, static_cast<size_t>(end - begin), ph.p_vaddr, unframed))
                sites.push_back(site - ph.p_vaddr + ph.p_offset);
    }
    std::sort(sites.begin(), sites.end());
    sites.erase(std::unique(sites.begin(), sites.end()), sites.end());
    return sites;
}

bool RandomSites::scan(int fd, const std::string& hash)
{
    auto it = by_content_.find(hash);
    if (it == by_content_.end())
        it = by_content_.emplace(hash, find_random_sites(fd)).first;
    return !it->second.empty();
}

std::string RandomSites::plant(pid_t tid, pid_t tgid, const std::string& hash, const std::string& path)
{
    auto sites = by_content_.find(hash);
    if (sites == by_content_.end() || sites->second.empty())
        return "";
    auto& planted = by_process_[tgid];
    TraceeMemory mem(tid);
    for (const Mapping& m : read_mappings(tid)) {
        if (m.path != path || m.perms.size() < 3 || m.perms[2] != 'x')
            continue;
        for (uint64_t offset : sites->second) {
            if (offset < m.offset || offset - m.offset >= m.end - m.start)
                continue;
            uint64_t addr = m.start + (offset - m.offset);
            if (planted.contains(addr))
                continue;
            uint8_t code[16] = {};
            mem.read_partial(RemoteAddr(addr), code);
            auto insn = decode_random_instruction(code);
            if (!insn)
                return path + " has no rdrand/rdseed at " + std::to_string(addr) + " where its file has one";
            if (!mem.write(RemoteAddr(addr), std::span<const uint8_t>(&kInt3, 1)))
                return "cannot plant a breakpoint on the rdrand/rdseed of " + path;
            planted[addr] = *insn;
            replaced_[tgid][addr] = code[0];
            if (on_plant_)
                on_plant_(tgid, addr, code[0]);
            planted_count_++;
        }
    }
    return "";
}

bool RandomSites::write_replaced(pid_t tgid, pid_t into) const
{
    auto it = replaced_.find(tgid);
    if (it == replaced_.end())
        return true;
    bool ok = true;
    TraceeMemory mem(into);
    for (auto [addr, byte] : it->second)
        ok = mem.write(RemoteAddr(addr), std::span<const uint8_t>(&byte, 1)) && ok;
    return ok;
}

bool RandomSites::unplant(pid_t tgid, pid_t tid)
{
    bool ok = write_replaced(tgid, tid);
    replaced_.erase(tgid);
    by_process_.erase(tgid);
    return ok;
}

bool RandomSites::unplant_in_copy(pid_t tgid, pid_t copy) const
{
    return write_replaced(tgid, copy);
}

std::optional<RandomInstruction> RandomSites::at(pid_t tgid, uint64_t addr)
{
    auto it = by_process_.find(tgid);
    if (it == by_process_.end()) {
        // A fork child's memory is a copy of its parent's, int3s included.
        auto parent = proc_status_number(tgid, "PPid");
        auto from = parent ? by_process_.find(static_cast<pid_t>(*parent)) : by_process_.end();
        if (from == by_process_.end())
            return std::nullopt;
        it = by_process_.emplace(tgid, from->second).first;
    }
    auto site = it->second.find(addr);
    if (site == it->second.end())
        return std::nullopt;
    return site->second;
}

void RandomSites::forget(pid_t tgid, bool execed)
{
    if (execed)
        by_process_[tgid].clear(); // its parent's int3s are gone with the old image
    else
        by_process_.erase(tgid);
    replaced_.erase(tgid);
}

} // namespace rw
