#include "gdb_registers.h"
#include "text.h"

#include <cstring>
#include <vector>

namespace rw::replay {
namespace {

// Where each gdb register lives and how wide it is.
enum class Source { Gp, Fp, YmmHigh, Computed };
struct RegisterDef {
    const char* name;
    int bits;
    Source source;
    size_t offset; // Gp: Registers index; Fp: byte offset in user_fpregs_struct; YmmHigh: byte offset
    const char* type;
    const char* feature;
};

constexpr size_t kFpSt = offsetof(user_fpregs_struct, st_space);
constexpr size_t kFpXmm = offsetof(user_fpregs_struct, xmm_space);
constexpr const char* kCore = "org.gnu.gdb.i386.core";
constexpr const char* kSse = "org.gnu.gdb.i386.sse";
constexpr const char* kLinux = "org.gnu.gdb.i386.linux";
constexpr const char* kSeg = "org.gnu.gdb.i386.segments";
constexpr const char* kAvx = "org.gnu.gdb.i386.avx";

// The computed x87 control registers, by their offsets in this table.
enum Computed { kFctrl, kFstat, kFtag, kFiseg, kFioff, kFoseg, kFooff, kFop };

std::vector<RegisterDef> make_defs()
{
    using R = Registers;
    std::vector<RegisterDef> d = {
        {"rax", 64, Source::Gp, R::RAX, "int64", kCore},    {"rbx", 64, Source::Gp, R::RBX, "int64", kCore},
        {"rcx", 64, Source::Gp, R::RCX, "int64", kCore},    {"rdx", 64, Source::Gp, R::RDX, "int64", kCore},
        {"rsi", 64, Source::Gp, R::RSI, "int64", kCore},    {"rdi", 64, Source::Gp, R::RDI, "int64", kCore},
        {"rbp", 64, Source::Gp, R::RBP, "data_ptr", kCore}, {"rsp", 64, Source::Gp, R::RSP, "data_ptr", kCore},
        {"r8", 64, Source::Gp, R::R8, "int64", kCore},      {"r9", 64, Source::Gp, R::R9, "int64", kCore},
        {"r10", 64, Source::Gp, R::R10, "int64", kCore},    {"r11", 64, Source::Gp, R::R11, "int64", kCore},
        {"r12", 64, Source::Gp, R::R12, "int64", kCore},    {"r13", 64, Source::Gp, R::R13, "int64", kCore},
        {"r14", 64, Source::Gp, R::R14, "int64", kCore},    {"r15", 64, Source::Gp, R::R15, "int64", kCore},
        {"rip", 64, Source::Gp, R::RIP, "code_ptr", kCore}, {"eflags", 32, Source::Gp, R::EFLAGS, "i386_eflags", kCore},
        {"cs", 32, Source::Gp, R::CS, "int32", kCore},      {"ss", 32, Source::Gp, R::SS, "int32", kCore},
        {"ds", 32, Source::Gp, R::DS, "int32", kCore},      {"es", 32, Source::Gp, R::ES, "int32", kCore},
        {"fs", 32, Source::Gp, R::FS, "int32", kCore},      {"gs", 32, Source::Gp, R::GS, "int32", kCore},
    };
    static const char* st[] = {"st0", "st1", "st2", "st3", "st4", "st5", "st6", "st7"};
    for (int i = 0; i < 8; i++)
        d.push_back({st[i], 80, Source::Fp, kFpSt + 16 * i, "i387_ext", kCore});
    static const char* x87[] = {"fctrl", "fstat", "ftag", "fiseg", "fioff", "foseg", "fooff", "fop"};
    for (int i = 0; i < 8; i++)
        d.push_back({x87[i], 32, Source::Computed, static_cast<size_t>(i), "int", kCore});
    static const char* xmm[] = {"xmm0", "xmm1", "xmm2",  "xmm3",  "xmm4",  "xmm5",  "xmm6",  "xmm7",
                                "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15"};
    for (int i = 0; i < 16; i++)
        d.push_back({xmm[i], 128, Source::Fp, kFpXmm + 16 * i, "vec128", kSse});
    d.push_back({"mxcsr", 32, Source::Fp, offsetof(user_fpregs_struct, mxcsr), "i386_mxcsr", kSse});
    d.push_back({"orig_rax", 64, Source::Gp, R::ORIG_RAX, "int", kLinux});
    d.push_back({"fs_base", 64, Source::Gp, R::FS_BASE, "int", kSeg});
    d.push_back({"gs_base", 64, Source::Gp, R::GS_BASE, "int", kSeg});
    static const char* ymm[] = {"ymm0h", "ymm1h", "ymm2h",  "ymm3h",  "ymm4h",  "ymm5h",  "ymm6h",  "ymm7h",
                                "ymm8h", "ymm9h", "ymm10h", "ymm11h", "ymm12h", "ymm13h", "ymm14h", "ymm15h"};
    for (int i = 0; i < 16; i++)
        d.push_back({ymm[i], 128, Source::YmmHigh, static_cast<size_t>(16 * i), "uint128", kAvx});
    return d;
}

const std::vector<RegisterDef>& defs()
{
    static const std::vector<RegisterDef> d = make_defs();
    return d;
}

// fxsave keeps an abridged tag (one bit per register); gdb wants the full
// two-bit tags (0 valid, 1 zero, 2 special, 3 empty).
uint32_t full_tag_word(const user_fpregs_struct& fp)
{
    unsigned top = (fp.swd >> 11) & 7;
    uint32_t tags = 0;
    for (unsigned phys = 0; phys < 8; phys++) {
        unsigned tag = 3;
        if (fp.ftw & (1u << phys)) {
            unsigned st = (phys - top) & 7;
            const uint8_t* v = reinterpret_cast<const uint8_t*>(fp.st_space) + 16 * st;
            uint16_t exponent = static_cast<uint16_t>((v[9] << 8) | v[8]) & 0x7fff;
            uint64_t mantissa;
            std::memcpy(&mantissa, v, 8);
            if (exponent == 0x7fff)
                tag = 2;
            else if (exponent == 0)
                tag = mantissa == 0 ? 1 : 2;
            else
                tag = (mantissa >> 63) ? 0 : 2;
        }
        tags |= tag << (2 * phys);
    }
    return tags;
}

uint32_t computed(const user_fpregs_struct& fp, size_t which)
{
    switch (which) {
    case kFctrl:
        return fp.cwd;
    case kFstat:
        return fp.swd;
    case kFtag:
        return full_tag_word(fp);
    case kFiseg:
        return static_cast<uint32_t>(fp.rip >> 32);
    case kFioff:
        return static_cast<uint32_t>(fp.rip);
    case kFoseg:
        return static_cast<uint32_t>(fp.rdp >> 32);
    case kFooff:
        return static_cast<uint32_t>(fp.rdp);
    case kFop:
        return fp.fop;
    }
    return 0;
}

void set_computed(user_fpregs_struct& fp, size_t which, uint32_t v)
{
    switch (which) {
    case kFctrl:
        fp.cwd = static_cast<uint16_t>(v);
        break;
    case kFstat:
        fp.swd = static_cast<uint16_t>(v);
        break;
    case kFtag: {
        uint16_t abridged = 0;
        for (unsigned i = 0; i < 8; i++)
            if (((v >> (2 * i)) & 3) != 3)
                abridged |= static_cast<uint16_t>(1u << i);
        fp.ftw = abridged;
        break;
    }
    case kFiseg:
        fp.rip = (fp.rip & 0xffffffffu) | (uint64_t(v) << 32);
        break;
    case kFioff:
        fp.rip = (fp.rip & ~uint64_t(0xffffffffu)) | v;
        break;
    case kFoseg:
        fp.rdp = (fp.rdp & 0xffffffffu) | (uint64_t(v) << 32);
        break;
    case kFooff:
        fp.rdp = (fp.rdp & ~uint64_t(0xffffffffu)) | v;
        break;
    case kFop:
        fp.fop = static_cast<uint16_t>(v);
        break;
    }
}

// The bytes of one register, little-endian.
std::vector<uint8_t> register_bytes(const RegisterFile& r, const RegisterDef& d)
{
    size_t n = static_cast<size_t>(d.bits / 8);
    std::vector<uint8_t> out(n);
    switch (d.source) {
    case Source::Gp: {
        uint64_t v = r.gp.words[d.offset];
        std::memcpy(out.data(), &v, n);
        break;
    }
    case Source::Fp:
        std::memcpy(out.data(), reinterpret_cast<const uint8_t*>(&r.fp) + d.offset, n);
        break;
    case Source::YmmHigh:
        std::memcpy(out.data(), r.ymm_high.data() + d.offset, n);
        break;
    case Source::Computed: {
        uint32_t v = computed(r.fp, d.offset);
        std::memcpy(out.data(), &v, n);
        break;
    }
    }
    return out;
}

void set_register_bytes(RegisterFile& r, const RegisterDef& d, const uint8_t* bytes)
{
    size_t n = static_cast<size_t>(d.bits / 8);
    switch (d.source) {
    case Source::Gp: {
        uint64_t v = 0;
        std::memcpy(&v, bytes, n);
        r.gp.words[d.offset] = v;
        break;
    }
    case Source::Fp:
        std::memcpy(reinterpret_cast<uint8_t*>(&r.fp) + d.offset, bytes, n);
        break;
    case Source::YmmHigh:
        std::memcpy(r.ymm_high.data() + d.offset, bytes, n);
        break;
    case Source::Computed: {
        uint32_t v = 0;
        std::memcpy(&v, bytes, n);
        set_computed(r.fp, d.offset, v);
        break;
    }
    }
}

std::string to_hex(const std::vector<uint8_t>& bytes)
{
    return hex_bytes(bytes);
}

bool from_hex(const std::string& hex, size_t pos, size_t n, uint8_t* out)
{
    if (pos + 2 * n > hex.size())
        return false;
    for (size_t i = 0; i < n; i++) {
        unsigned v = 0;
        if (std::sscanf(hex.c_str() + pos + 2 * i, "%2x", &v) != 1)
            return false;
        out[i] = static_cast<uint8_t>(v);
    }
    return true;
}

} // namespace

int gdb_register_count()
{
    return static_cast<int>(defs().size());
}

std::string target_description_xml()
{
    std::string x = R"(<?xml version="1.0"?>
<!DOCTYPE target SYSTEM "gdb-target.dtd">
<target version="1.0">
<architecture>i386:x86-64</architecture>
<osabi>GNU/Linux</osabi>
<feature name="org.gnu.gdb.i386.core">
<flags id="i386_eflags" size="4">
<field name="CF" start="0" end="0"/><field name="" start="1" end="1"/><field name="PF" start="2" end="2"/>
<field name="AF" start="4" end="4"/><field name="ZF" start="6" end="6"/><field name="SF" start="7" end="7"/>
<field name="TF" start="8" end="8"/><field name="IF" start="9" end="9"/><field name="DF" start="10" end="10"/>
<field name="OF" start="11" end="11"/><field name="NT" start="14" end="14"/><field name="RF" start="16" end="16"/>
<field name="VM" start="17" end="17"/><field name="AC" start="18" end="18"/><field name="VIF" start="19" end="19"/>
<field name="VIP" start="20" end="20"/><field name="ID" start="21" end="21"/>
</flags>
)";
    int regnum = 0;
    const char* feature = kCore;
    for (const auto& d : defs()) {
        if (std::strcmp(d.feature, feature) != 0) {
            x += "</feature>\n<feature name=\"" + std::string(d.feature) + "\">\n";
            feature = d.feature;
            if (std::strcmp(feature, kSse) == 0)
                x += R"(<vector id="v8bf16" type="bfloat16" count="8"/>
<vector id="v4f" type="ieee_single" count="4"/>
<vector id="v2d" type="ieee_double" count="2"/>
<vector id="v16i8" type="int8" count="16"/>
<vector id="v8i16" type="int16" count="8"/>
<vector id="v4i32" type="int32" count="4"/>
<vector id="v2i64" type="int64" count="2"/>
<union id="vec128"><field name="v8_bfloat16" type="v8bf16"/><field name="v4_float" type="v4f"/><field name="v2_double" type="v2d"/><field name="v16_int8" type="v16i8"/><field name="v8_int16" type="v8i16"/><field name="v4_int32" type="v4i32"/><field name="v2_int64" type="v2i64"/><field name="uint128" type="uint128"/></union>
<flags id="i386_mxcsr" size="4">
<field name="IE" start="0" end="0"/><field name="DE" start="1" end="1"/><field name="ZE" start="2" end="2"/>
<field name="OE" start="3" end="3"/><field name="UE" start="4" end="4"/><field name="PE" start="5" end="5"/>
<field name="DAZ" start="6" end="6"/><field name="IM" start="7" end="7"/><field name="DM" start="8" end="8"/>
<field name="ZM" start="9" end="9"/><field name="OM" start="10" end="10"/><field name="UM" start="11" end="11"/>
<field name="PM" start="12" end="12"/><field name="FZ" start="15" end="15"/>
</flags>
)";
        }
        std::string group;
        if (d.source == Source::Computed)
            group = " group=\"float\"";
        else if (std::strcmp(d.feature, kSse) == 0 && std::strcmp(d.name, "mxcsr") == 0)
            group = " group=\"vector\"";
        x += "<reg name=\"" + std::string(d.name) + "\" bitsize=\"" + std::to_string(d.bits) + "\" type=\"" + d.type +
             "\" regnum=\"" + std::to_string(regnum) + "\"" + group + "/>\n";
        regnum++;
    }
    x += "</feature>\n</target>\n";
    return x;
}

std::string encode_registers(const RegisterFile& r)
{
    std::string out;
    for (const auto& d : defs())
        out += to_hex(register_bytes(r, d));
    return out;
}

std::optional<std::string> encode_register(const RegisterFile& r, int regnum)
{
    if (regnum < 0 || regnum >= gdb_register_count())
        return std::nullopt;
    return to_hex(register_bytes(r, defs()[static_cast<size_t>(regnum)]));
}

bool decode_registers(RegisterFile& r, const std::string& hex)
{
    size_t pos = 0;
    for (const auto& d : defs()) {
        size_t n = static_cast<size_t>(d.bits / 8);
        if (pos + 2 * n > hex.size())
            return pos == hex.size(); // gdb may send fewer
        std::vector<uint8_t> bytes(n);
        if (hex[pos] != 'x') {
            if (!from_hex(hex, pos, n, bytes.data()))
                return false;
            set_register_bytes(r, d, bytes.data());
        }
        pos += 2 * n;
    }
    return true;
}

bool decode_register(RegisterFile& r, int regnum, const std::string& hex)
{
    if (regnum < 0 || regnum >= gdb_register_count())
        return false;
    const auto& d = defs()[static_cast<size_t>(regnum)];
    size_t n = static_cast<size_t>(d.bits / 8);
    std::vector<uint8_t> bytes(n);
    if (hex.size() != 2 * n || !from_hex(hex, 0, n, bytes.data()))
        return false;
    set_register_bytes(r, d, bytes.data());
    return true;
}

} // namespace rw::replay
