#include "elf_symbols.h"

#include "positional_io.h"
#include "unique_fd.h"

#include <elf.h>
#include <fcntl.h>
#include <sys/stat.h>

#include <cstring>
#include <stdexcept>
#include <vector>

namespace rw {
namespace {

constexpr uint16_t kVersymHidden = 0x8000;

template <typename T> T read_at(const std::vector<char>& image, uint64_t offset)
{
    if (offset > image.size() || image.size() - offset < sizeof(T))
        throw std::runtime_error("a truncated ELF file");
    T value;
    std::memcpy(&value, image.data() + offset, sizeof(T));
    return value;
}

// In one read: through a stream iterator, libc's 2 MB took 10 ms, the
// better part of placing the synchronization probes.
std::vector<char> read_whole_file(const std::string& path)
{
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    struct stat st {};
    if (fd.get() < 0 || ::fstat(fd.get(), &st) != 0)
        throw std::runtime_error("cannot read " + path);
    std::vector<char> image(static_cast<size_t>(st.st_size));
    ssize_t n = pread_full(fd.get(), image.data(), image.size(), 0);
    if (n < 0)
        throw std::runtime_error("cannot read " + path);
    image.resize(static_cast<size_t>(n));
    return image;
}

} // namespace

std::map<std::string, uint64_t, std::less<>> function_offsets(const std::string& path,
                                                              std::span<const std::string_view> names)
{
    std::vector<char> image = read_whole_file(path);
    auto eh = read_at<Elf64_Ehdr>(image, 0);
    if (std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64)
        throw std::runtime_error(path + " is not a 64-bit ELF file");

    std::vector<Elf64_Shdr> sections;
    for (uint16_t i = 0; i < eh.e_shnum; i++)
        sections.push_back(read_at<Elf64_Shdr>(image, eh.e_shoff + uint64_t(i) * eh.e_shentsize));
    const Elf64_Shdr* dynsym = nullptr;
    const Elf64_Shdr* versym = nullptr;
    for (const auto& s : sections) {
        if (s.sh_type == SHT_DYNSYM)
            dynsym = &s;
        else if (s.sh_type == SHT_GNU_versym)
            versym = &s;
    }
    std::map<std::string, uint64_t, std::less<>> found;
    if (!dynsym || dynsym->sh_link >= sections.size() || !dynsym->sh_entsize)
        return found;
    const Elf64_Shdr& strtab = sections[dynsym->sh_link];
    if (strtab.sh_offset > image.size() || strtab.sh_size > image.size() - strtab.sh_offset)
        throw std::runtime_error("a truncated ELF file");
    std::vector<Elf64_Phdr> loads;
    for (uint16_t i = 0; i < eh.e_phnum; i++) {
        auto ph = read_at<Elf64_Phdr>(image, eh.e_phoff + uint64_t(i) * eh.e_phentsize);
        if (ph.p_type == PT_LOAD)
            loads.push_back(ph);
    }

    uint64_t count = dynsym->sh_size / dynsym->sh_entsize;
    for (uint64_t i = 1; i < count; i++) {
        auto sym = read_at<Elf64_Sym>(image, dynsym->sh_offset + i * dynsym->sh_entsize);
        if (ELF64_ST_TYPE(sym.st_info) != STT_FUNC || sym.st_shndx == SHN_UNDEF || sym.st_name >= strtab.sh_size)
            continue;
        const char* start = image.data() + strtab.sh_offset + sym.st_name;
        std::string_view name(start, strnlen(start, strtab.sh_size - sym.st_name));
        bool wanted = false;
        for (auto n : names)
            wanted = wanted || n == name;
        if (!wanted)
            continue;
        bool hidden = versym && (read_at<uint16_t>(image, versym->sh_offset + i * 2) & kVersymHidden);
        // The default version wins over a hidden (compatibility) one.
        if (hidden && found.count(name))
            continue;
        for (const auto& ph : loads) {
            if (sym.st_value >= ph.p_vaddr && sym.st_value < ph.p_vaddr + ph.p_filesz) {
                found[std::string(name)] = sym.st_value - ph.p_vaddr + ph.p_offset;
                break;
            }
        }
    }
    return found;
}

} // namespace rw
