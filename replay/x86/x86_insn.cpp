#include "x86_insn.h"

#include <capstone/capstone.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <stdexcept>
#include <string_view>

namespace rw::replay {
namespace {

constexpr uint64_t kCF = 1u << 0, kPF = 1u << 2, kZF = 1u << 6, kSF = 1u << 7, kOF = 1u << 11;

// The Registers index of a 64-bit general register, -1 for any other.
int register_index(x86_reg r)
{
    using R = Registers;
    static const std::pair<x86_reg, int> map[] = {
        {X86_REG_RAX, R::RAX}, {X86_REG_RBX, R::RBX}, {X86_REG_RCX, R::RCX}, {X86_REG_RDX, R::RDX},
        {X86_REG_RSI, R::RSI}, {X86_REG_RDI, R::RDI}, {X86_REG_RBP, R::RBP}, {X86_REG_RSP, R::RSP},
        {X86_REG_R8, R::R8},   {X86_REG_R9, R::R9},   {X86_REG_R10, R::R10}, {X86_REG_R11, R::R11},
        {X86_REG_R12, R::R12}, {X86_REG_R13, R::R13}, {X86_REG_R14, R::R14}, {X86_REG_R15, R::R15},
    };
    for (const auto& [reg, index] : map)
        if (r == reg)
            return index;
    return -1;
}

std::optional<uint64_t> reg_value(x86_reg r, const Registers& regs)
{
    using R = Registers;
    struct Map {
        x86_reg r64, r32;
        Registers::Index index;
    };
    static const Map map[] = {
        {X86_REG_RAX, X86_REG_EAX, R::RAX},  {X86_REG_RBX, X86_REG_EBX, R::RBX},  {X86_REG_RCX, X86_REG_ECX, R::RCX},
        {X86_REG_RDX, X86_REG_EDX, R::RDX},  {X86_REG_RSI, X86_REG_ESI, R::RSI},  {X86_REG_RDI, X86_REG_EDI, R::RDI},
        {X86_REG_RBP, X86_REG_EBP, R::RBP},  {X86_REG_RSP, X86_REG_ESP, R::RSP},  {X86_REG_R8, X86_REG_R8D, R::R8},
        {X86_REG_R9, X86_REG_R9D, R::R9},    {X86_REG_R10, X86_REG_R10D, R::R10}, {X86_REG_R11, X86_REG_R11D, R::R11},
        {X86_REG_R12, X86_REG_R12D, R::R12}, {X86_REG_R13, X86_REG_R13D, R::R13}, {X86_REG_R14, X86_REG_R14D, R::R14},
        {X86_REG_R15, X86_REG_R15D, R::R15},
    };
    for (const auto& m : map) {
        if (r == m.r64)
            return regs[m.index];
        if (r == m.r32)
            return regs[m.index] & 0xffffffffu;
    }
    return std::nullopt;
}

bool condition_holds(unsigned id, const Registers& regs)
{
    uint64_t f = regs[Registers::EFLAGS];
    bool cf = f & kCF, pf = f & kPF, zf = f & kZF, sf = f & kSF, of = f & kOF;
    uint64_t rcx = regs[Registers::RCX];
    switch (id) {
    case X86_INS_JO:
        return of;
    case X86_INS_JNO:
        return !of;
    case X86_INS_JB:
        return cf;
    case X86_INS_JAE:
        return !cf;
    case X86_INS_JE:
        return zf;
    case X86_INS_JNE:
        return !zf;
    case X86_INS_JBE:
        return cf || zf;
    case X86_INS_JA:
        return !cf && !zf;
    case X86_INS_JS:
        return sf;
    case X86_INS_JNS:
        return !sf;
    case X86_INS_JP:
        return pf;
    case X86_INS_JNP:
        return !pf;
    case X86_INS_JL:
        return sf != of;
    case X86_INS_JGE:
        return sf == of;
    case X86_INS_JLE:
        return zf || sf != of;
    case X86_INS_JG:
        return !zf && sf == of;
    case X86_INS_JRCXZ:
        return rcx == 0;
    case X86_INS_JECXZ:
        return (rcx & 0xffffffffu) == 0;
    case X86_INS_LOOP:
        return rcx - 1 != 0;
    case X86_INS_LOOPE:
        return rcx - 1 != 0 && zf;
    case X86_INS_LOOPNE:
        return rcx - 1 != 0 && !zf;
    default:
        throw std::logic_error("not a conditional jump");
    }
}

} // namespace

struct X86Decoder::Impl {
    csh handle = 0;

    struct Decoded {
        cs_insn* insn = nullptr;
        explicit operator bool() const { return insn != nullptr; }
        ~Decoded()
        {
            if (insn)
                cs_free(insn, 1);
        }
        const cs_x86& x86() const { return insn->detail->x86; }
        bool in_group(uint8_t g) const
        {
            for (uint8_t i = 0; i < insn->detail->groups_count; i++)
                if (insn->detail->groups[i] == g)
                    return true;
            return false;
        }
    };

    // Whether operand i is memory the instruction writes. Capstone 4 marks
    // the destination of many SIMD stores read-only (vmovdqu, vmovdqu64,
    // movups, vmovq, vextracti128…): the stores of glibc's memcpy and
    // memset. In Intel order a store's destination is operand 0.
    static bool writes_operand(const Decoded& d, uint8_t i)
    {
        const cs_x86_op& op = d.x86().operands[i];
        if (op.type != X86_OP_MEM)
            return false;
        if (op.access & CS_AC_WRITE)
            return true;
        if (i != 0)
            return false;
        std::string_view m = d.insn->mnemonic;
        for (std::string_view store : {"mov", "vmov", "vpmov", "kmov", "extract", "vextract", "pextr", "vpextr",
                                       "vcompress", "vpcompress", "vmaskmov", "vpmaskmov"})
            if (m.starts_with(store))
                return true;
        return false;
    }

    void decode(Decoded& d, uint64_t addr, std::span<const uint8_t> code) const
    {
        if (cs_disasm(handle, code.data(), code.size(), addr, 1, &d.insn) != 1)
            d.insn = nullptr;
    }

    static Insn::Flow flow_of(const Decoded& d)
    {
        unsigned id = d.insn->id;
        if (d.in_group(CS_GRP_RET) || d.in_group(CS_GRP_IRET))
            return Insn::Flow::Ret;
        if (d.in_group(CS_GRP_CALL))
            return Insn::Flow::Call;
        if (d.in_group(CS_GRP_JUMP))
            return id == X86_INS_JMP || id == X86_INS_LJMP ? Insn::Flow::Jump : Insn::Flow::CondJump;
        if (d.in_group(CS_GRP_INT) || id == X86_INS_HLT || id == X86_INS_UD2)
            return Insn::Flow::Stop;
        return Insn::Flow::Next;
    }

    static std::optional<uint64_t> effective_address(const cs_insn* insn, const cs_x86_op& op, const Registers& regs)
    {
        uint64_t ea = static_cast<uint64_t>(op.mem.disp);
        if (op.mem.base == X86_REG_RIP) {
            ea += insn->address + insn->size;
        } else if (op.mem.base != X86_REG_INVALID) {
            auto b = reg_value(static_cast<x86_reg>(op.mem.base), regs);
            if (!b)
                return std::nullopt;
            ea += *b;
        }
        if (op.mem.index != X86_REG_INVALID) {
            auto i = reg_value(static_cast<x86_reg>(op.mem.index), regs);
            if (!i)
                return std::nullopt;
            ea += *i * static_cast<uint64_t>(op.mem.scale);
        }
        if (op.mem.segment == X86_REG_FS)
            ea += regs[Registers::FS_BASE];
        else if (op.mem.segment == X86_REG_GS)
            ea += regs[Registers::GS_BASE];
        return ea;
    }

    // The destination of a jump or call: its single operand's value.
    static std::optional<uint64_t> branch_target(const Decoded& d, const Registers& regs, const MemoryReader& memory)
    {
        const cs_x86& x = d.x86();
        if (x.op_count < 1)
            return std::nullopt;
        const cs_x86_op& op = x.operands[0];
        switch (op.type) {
        case X86_OP_IMM:
            return static_cast<uint64_t>(op.imm);
        case X86_OP_REG:
            return reg_value(static_cast<x86_reg>(op.reg), regs);
        case X86_OP_MEM: {
            auto ea = effective_address(d.insn, op, regs);
            uint64_t v = 0;
            if (!ea || !memory(*ea, {reinterpret_cast<uint8_t*>(&v), 8}))
                return std::nullopt;
            return v;
        }
        default:
            return std::nullopt;
        }
    }
};

X86Decoder::X86Decoder() : impl_(new Impl)
{
    if (cs_open(CS_ARCH_X86, CS_MODE_64, &impl_->handle) != CS_ERR_OK) {
        delete impl_;
        throw std::runtime_error("cannot initialise the x86 disassembler (Capstone)");
    }
    cs_option(impl_->handle, CS_OPT_DETAIL, CS_OPT_ON);
}

X86Decoder::~X86Decoder()
{
    cs_close(&impl_->handle);
    delete impl_;
}

std::optional<X86Decoder::Insn> X86Decoder::decode(uint64_t addr, std::span<const uint8_t> code) const
{
    Impl::Decoded d;
    impl_->decode(d, addr, code);
    if (!d)
        return std::nullopt;
    Insn out;
    out.addr = addr;
    out.size = static_cast<uint8_t>(d.insn->size);
    out.flow = Impl::flow_of(d);
    out.text = std::string(d.insn->mnemonic) + (d.insn->op_str[0] ? " " : "") + d.insn->op_str;
    const cs_x86& x = d.x86();
    for (uint8_t i = 0; i < x.op_count; i++)
        if (Impl::writes_operand(d, i))
            out.writes_memory = true;
    unsigned id = d.insn->id;
    if (out.flow == Insn::Flow::Call || id == X86_INS_PUSH || id == X86_INS_PUSHFQ)
        out.writes_memory = true;
    return out;
}

std::optional<uint64_t> X86Decoder::successor(uint64_t addr, std::span<const uint8_t> code, const Registers& regs,
                                              const MemoryReader& memory) const
{
    Impl::Decoded d;
    impl_->decode(d, addr, code);
    if (!d)
        return std::nullopt;
    uint64_t next = addr + d.insn->size;
    switch (Impl::flow_of(d)) {
    case Insn::Flow::Next:
        return next;
    case Insn::Flow::Stop:
        return std::nullopt;
    case Insn::Flow::Jump:
    case Insn::Flow::Call:
        return Impl::branch_target(d, regs, memory);
    case Insn::Flow::CondJump:
        if (!condition_holds(d.insn->id, regs))
            return next;
        return Impl::branch_target(d, regs, memory);
    case Insn::Flow::Ret: {
        uint64_t v = 0;
        if (!memory(regs[Registers::RSP], {reinterpret_cast<uint8_t*>(&v), 8}))
            return std::nullopt;
        return v;
    }
    }
    return std::nullopt;
}

std::vector<MemoryWrite> X86Decoder::writes(uint64_t addr, std::span<const uint8_t> code, const Registers& regs) const
{
    Impl::Decoded d;
    impl_->decode(d, addr, code);
    std::vector<MemoryWrite> out;
    if (!d)
        return out;
    const cs_x86& x = d.x86();
    unsigned id = d.insn->id;
    bool rep = x.prefix[0] == X86_PREFIX_REP || x.prefix[0] == X86_PREFIX_REPNE;
    for (uint8_t i = 0; i < x.op_count; i++) {
        const cs_x86_op& op = x.operands[i];
        if (!Impl::writes_operand(d, i))
            continue;
        auto ea = Impl::effective_address(d.insn, op, regs);
        if (!ea)
            continue;
        uint64_t len = op.size ? op.size : 8;
        if (rep) // a repeated string store covers rcx elements (forwards; backwards stores are rare)
            len *= std::max<uint64_t>(regs[Registers::RCX], 1);
        out.push_back({*ea, len});
    }
    if (Impl::flow_of(d) == Insn::Flow::Call || id == X86_INS_PUSH || id == X86_INS_PUSHFQ)
        out.push_back({regs[Registers::RSP] - 8, 8});
    return out;
}

std::optional<WriteForm> X86Decoder::write_form(uint64_t addr, std::span<const uint8_t> code) const
{
    Impl::Decoded d;
    impl_->decode(d, addr, code);
    if (!d)
        return std::nullopt;
    const cs_x86& x = d.x86();
    unsigned id = d.insn->id;
    std::optional<WriteForm> form;
    auto another = [&form, addr](WriteForm f) {
        f.ip = addr;
        if (form)
            return false; // two places
        form = f;
        return true;
    };
    for (uint8_t i = 0; i < x.op_count; i++) {
        const cs_x86_op& op = x.operands[i];
        if (!Impl::writes_operand(d, i))
            continue;
        if (op.mem.segment != X86_REG_INVALID || x.addr_size != 8)
            return std::nullopt;
        WriteForm f{};
        f.base = f.index = -1;
        f.scale = 1;
        f.disp = op.mem.disp;
        if (op.mem.base == X86_REG_RIP)
            f.disp += static_cast<int64_t>(d.insn->address + d.insn->size);
        else if (op.mem.base != X86_REG_INVALID && (f.base = register_index(static_cast<x86_reg>(op.mem.base))) < 0)
            return std::nullopt;
        if (op.mem.index != X86_REG_INVALID) {
            if ((f.index = register_index(static_cast<x86_reg>(op.mem.index))) < 0)
                return std::nullopt; // a vector index (a scatter)
            f.scale = static_cast<uint32_t>(op.mem.scale);
        }
        f.size = op.size ? op.size : 8;
        f.times_rcx = x.prefix[0] == X86_PREFIX_REP || x.prefix[0] == X86_PREFIX_REPNE;
        if (!another(f))
            return std::nullopt;
    }
    if (Impl::flow_of(d) == Insn::Flow::Call || id == X86_INS_PUSH || id == X86_INS_PUSHFQ) {
        WriteForm f{};
        f.index = -1;
        f.base = Registers::RSP;
        f.disp = -8;
        f.size = 8;
        if (!another(f))
            return std::nullopt;
    }
    return form;
}

namespace {

std::array<uint8_t, 16> code_before(uint64_t end, const MemoryReader& memory, size_t& readable)
{
    std::array<uint8_t, 16> code{};
    readable = 0;
    // Page boundaries: take as much of the tail as can be read.
    for (size_t n = 16; n > 0; n--) {
        if (memory(end - n, {code.data() + 16 - n, n})) {
            readable = n;
            break;
        }
    }
    return code;
}

// The returns of the function at `entry`, in a linear sweep of its code
// up to the next function's entry (`endbr64`) or a size limit.
std::vector<uint64_t> returns_of(const X86Decoder& decoder, uint64_t entry, const MemoryReader& memory, size_t most)
{
    std::vector<uint64_t> out;
    std::vector<uint8_t> code(8192);
    size_t n = 0;
    for (size_t chunk = code.size(); chunk >= 64 && n == 0; chunk /= 2)
        if (memory(entry, {code.data(), chunk}))
            n = chunk;
    for (size_t off = 0; off < n && out.size() < most;) {
        auto insn = decoder.decode(entry + off, {code.data() + off, n - off});
        if (!insn)
            break;
        if (off > 0 && insn->text.rfind("endbr64", 0) == 0)
            break;
        if (insn->flow == X86Decoder::Insn::Flow::Ret)
            out.push_back(entry + off);
        off += insn->size;
    }
    return out;
}

// Direct jumps within a window around `target` that land on it, nearest
// first. Bytes are tried at every offset, so a few may be the middle of
// another instruction; the backstep's trap on such an address never fires.
std::vector<uint64_t> jump_sources(const X86Decoder& decoder, uint64_t target, const MemoryReader& memory)
{
    // The page holding the target and its neighbours, as far as they read.
    constexpr uint64_t kPage = 4096;
    uint64_t page = target & ~(kPage - 1);
    uint64_t first = page >= kPage ? page - kPage : page, last = page + kPage;
    std::vector<uint8_t> code(3 * kPage);
    auto readable = [&](uint64_t p) { return memory(p, {code.data() + (p - first), kPage}); };
    if (!readable(page))
        return {};
    uint64_t start = first != page && readable(first) ? first : page;
    uint64_t end = readable(last) ? last + kPage : page + kPage;
    if (start != first)
        std::memmove(code.data(), code.data() + (start - first), end - start);
    size_t n = end - start;
    std::vector<uint64_t> found;
    for (size_t i = 0; i + 2 <= n; i++) {
        uint64_t at = start + i;
        uint8_t b0 = code[i], b1 = code[i + 1];
        size_t size = 0;
        int64_t rel = 0;
        if (b0 == 0xeb || (b0 >= 0x70 && b0 <= 0x7f)) {
            size = 2;
            rel = static_cast<int8_t>(b1);
        } else if ((b0 == 0xe9 && i + 5 <= n) || (b0 == 0x0f && b1 >= 0x80 && b1 <= 0x8f && i + 6 <= n)) {
            size = b0 == 0xe9 ? 5 : 6;
            int32_t r32 = 0;
            std::memcpy(&r32, &code[i + size - 4], 4);
            rel = r32;
        } else {
            continue;
        }
        if (at + size + static_cast<uint64_t>(rel) != target)
            continue;
        auto insn = decoder.decode(at, std::span<const uint8_t>(&code[i], std::min<size_t>(15, n - i)));
        using F = X86Decoder::Insn::Flow;
        if (insn && insn->size == size && (insn->flow == F::Jump || insn->flow == F::CondJump))
            found.push_back(at);
    }
    std::sort(found.begin(), found.end(), [&](uint64_t a, uint64_t b) {
        auto distance = [&](uint64_t x) { return x > target ? x - target : target - x; };
        return distance(a) < distance(b);
    });
    return found;
}

// The jump among the first few instructions at `entry` (a PLT stub:
// endbr64, then a jump through the GOT) and where it goes, computed with the
// registers and memory of now.
std::optional<std::pair<uint64_t, uint64_t>> stub_jump(const X86Decoder& decoder, uint64_t entry, const Registers& regs,
                                                       const MemoryReader& memory)
{
    std::array<uint8_t, 64> code{};
    size_t n = 0;
    for (size_t chunk = code.size(); chunk >= 16 && n == 0; chunk /= 2)
        if (memory(entry, {code.data(), chunk}))
            n = chunk;
    size_t off = 0;
    for (int i = 0; i < 4 && off < n; i++) {
        std::span<const uint8_t> bytes(code.data() + off, n - off);
        auto insn = decoder.decode(entry + off, bytes);
        if (!insn)
            break;
        if (insn->flow == X86Decoder::Insn::Flow::Jump) {
            Registers any = regs;
            if (auto to = decoder.successor(entry + off, bytes.first(insn->size), any, memory))
                return std::pair{entry + off, *to};
            break;
        }
        if (insn->flow != X86Decoder::Insn::Flow::Next)
            break;
        off += insn->size;
    }
    return std::nullopt;
}

// The stub's jump at `entry`, if it lands on `target`.
std::vector<uint64_t> stub_jumps_to(const X86Decoder& decoder, uint64_t entry, uint64_t target, const Registers& regs,
                                    const MemoryReader& memory)
{
    auto j = stub_jump(decoder, entry, regs, memory);
    if (j && j->second == target)
        return {j->first};
    return {};
}

// The instructions from `addr` on, up to `most`, until one that does not
// fall through; calls `f(addr, insn, bytes)` for each.
template <typename F>
void decode_run(const X86Decoder& decoder, uint64_t addr, const MemoryReader& memory, size_t most, F f)
{
    std::vector<uint8_t> code(most * 16);
    size_t n = 0;
    for (size_t chunk = code.size(); chunk >= 16 && n == 0; chunk /= 2)
        if (memory(addr, {code.data(), chunk}))
            n = chunk;
    size_t off = 0;
    for (size_t i = 0; i < most && off < n; i++) {
        std::span<const uint8_t> bytes(code.data() + off, n - off);
        auto insn = decoder.decode(addr + off, bytes);
        if (!insn || !f(addr + off, *insn, bytes.first(insn->size)))
            return;
        off += insn->size;
    }
}

// On the first call through a lazily bound PLT entry (`jmp *GOT; push N;
// jmp PLT0`), its GOT slot still led to the push: PLT0 pushes one more word
// and jumps to the dynamic linker's resolver, which ends in a jump through a
// register to the function it bound.
struct LazyBinding {
    uint64_t first_jump = 0; // the stub's jump through its GOT slot
    uint64_t push = 0;       // where that slot led before binding: the push after it
    uint64_t stub_jump = 0;  // the stub's jump to PLT0
    uint64_t plt0 = 0;
    uint64_t plt0_jump = 0;  // PLT0's jump to the resolver
    uint64_t resolver = 0;   // where it lands
    uint64_t final_jump = 0; // the resolver's jump to the bound function
    uint64_t final_dest = 0; // where that goes, with the registers of now
};

std::optional<LazyBinding> lazy_binding(const X86Decoder& decoder, uint64_t stub, const Registers& regs,
                                        const MemoryReader& memory)
{
    using F = X86Decoder::Insn::Flow;
    // The stub: an indirect jump, a push, a direct jump to PLT0.
    LazyBinding lb;
    int seen = 0;
    decode_run(decoder, stub, memory, 4, [&](uint64_t at, const X86Decoder::Insn& insn, std::span<const uint8_t> b) {
        seen++;
        if (insn.flow == F::Jump && seen > 1) {
            Registers any = regs;
            lb.stub_jump = at;
            lb.plt0 = decoder.successor(at, b, any, memory).value_or(0);
            return false;
        }
        if (insn.flow == F::Jump) {
            lb.first_jump = at;
            lb.push = at + insn.size;
        }
        return insn.flow == F::Next || (insn.flow == F::Jump && seen == 1);
    });
    if (!lb.plt0 || !lb.first_jump)
        return std::nullopt;
    // PLT0: a push, then a jump through the GOT to the resolver.
    decode_run(decoder, lb.plt0, memory, 3, [&](uint64_t at, const X86Decoder::Insn& insn, std::span<const uint8_t> b) {
        if (insn.flow == F::Jump) {
            Registers any = regs;
            lb.plt0_jump = at;
            lb.resolver = decoder.successor(at, b, any, memory).value_or(0);
            return false;
        }
        return insn.flow == F::Next;
    });
    if (!lb.resolver)
        return std::nullopt;
    decode_run(decoder, lb.resolver, memory, 256,
               [&](uint64_t at, const X86Decoder::Insn& insn, std::span<const uint8_t> b) {
                   if (insn.flow == F::Jump) {
                       Registers any = regs;
                       lb.final_jump = at;
                       lb.final_dest = decoder.successor(at, b, any, memory).value_or(0);
                       return false; // the resolver's end
                   }
                   return insn.flow != F::Ret && insn.flow != F::Stop;
               });
    return lb;
}

// The resolver's jump, if it lands on `target` (the bound function's entry).
std::vector<uint64_t> lazy_binding_jumps(const X86Decoder& decoder, uint64_t stub, uint64_t target,
                                         const Registers& regs, const MemoryReader& memory)
{
    auto lb = lazy_binding(decoder, stub, regs, memory);
    if (lb && lb->final_jump && lb->final_dest == target)
        return {lb->final_jump};
    return {};
}

// The call (direct, through a stub) whose return address is at `slot`, and
// the stub it called.
std::optional<uint64_t> stub_called_from(const X86Decoder& decoder, uint64_t slot, const Registers& regs,
                                         const MemoryReader& memory)
{
    uint64_t ret = 0;
    size_t readable = 0;
    if (!memory(slot, {reinterpret_cast<uint8_t*>(&ret), 8}) || ret <= 16)
        return std::nullopt;
    auto site = code_before(ret, memory, readable);
    if (readable < 5)
        return std::nullopt;
    std::span<const uint8_t> bytes(site.data() + 11, 5);
    auto insn = decoder.decode(ret - 5, bytes);
    if (!insn || insn->size != 5 || insn->flow != X86Decoder::Insn::Flow::Call)
        return std::nullopt;
    Registers any = regs;
    return decoder.successor(ret - 5, bytes, any, memory);
}

// Where the stub at `entry` jumps to.
std::vector<uint64_t> stub_destinations(const X86Decoder& decoder, uint64_t entry, const Registers& regs,
                                        const MemoryReader& memory)
{
    auto j = stub_jump(decoder, entry, regs, memory);
    if (j)
        return {j->second};
    return {};
}

} // namespace

std::vector<uint64_t> returns_of_function(const X86Decoder& decoder, uint64_t entry, const Registers& regs,
                                          const MemoryReader& memory)
{
    auto rets = returns_of(decoder, entry, memory, 6);
    if (rets.empty())
        for (uint64_t to : stub_destinations(decoder, entry, regs, memory)) {
            auto more = returns_of(decoder, to, memory, 6);
            rets.insert(rets.end(), more.begin(), more.end());
        }
    return rets;
}

bool follows_call(const X86Decoder& decoder, uint64_t addr, const MemoryReader& memory)
{
    size_t readable = 0;
    auto code = code_before(addr, memory, readable);
    for (size_t k : {2, 3, 5, 6, 7, 4}) {
        if (k > readable)
            continue;
        std::span<const uint8_t> bytes(code.data() + 16 - k, k);
        auto insn = decoder.decode(addr - k, bytes);
        if (insn && insn->size == k && insn->flow == X86Decoder::Insn::Flow::Call)
            return true;
    }
    return false;
}

std::vector<uint64_t> predecessor_candidates(const X86Decoder& decoder, uint64_t target, const Registers& regs,
                                             const MemoryReader& memory)
{
    std::vector<uint64_t> out;
    size_t readable = 0;
    auto code = code_before(target, memory, readable);
    for (size_t k = std::min<size_t>(readable, 15); k >= 1; k--) {
        std::span<const uint8_t> bytes(code.data() + 16 - k, k);
        auto insn = decoder.decode(target - k, bytes);
        using F = X86Decoder::Insn::Flow;
        if (insn && insn->size == k && (insn->flow == F::Next || insn->flow == F::CondJump))
            out.push_back(target - k);
        // Just after a call: the callee returned here. An indirect call's
        // destination is computed with the registers of now, often still
        // right (a callee-saved base register); a wrong one only adds
        // candidates that never lead here.
        if (insn && insn->size == k && insn->flow == F::Call && k >= 2) {
            Registers any = regs;
            if (auto callee = decoder.successor(target - k, bytes, any, memory)) {
                auto rets = returns_of_function(decoder, *callee, regs, memory);
                out.insert(out.begin(), rets.begin(), rets.end());
            }
        }
    }
    // Arrived by a direct jump from nearby (a loop's back edge, an if's
    // join): the instructions whose target this is, nearest first.
    for (uint64_t from : jump_sources(decoder, target, memory))
        out.push_back(from);
    // Arrived by a call: the return address is on top of the stack.
    uint64_t ret = 0;
    if (memory(regs[Registers::RSP], {reinterpret_cast<uint8_t*>(&ret), 8}) && ret > 16) {
        auto site = code_before(ret, memory, readable);
        Registers at_call = regs;
        at_call[Registers::RSP] += 8;
        for (size_t k : {5, 2, 3, 6, 7, 4}) {
            if (k > readable)
                continue;
            std::span<const uint8_t> bytes(site.data() + 16 - k, k);
            auto insn = decoder.decode(ret - k, bytes);
            if (!insn || insn->size != k || insn->flow != X86Decoder::Insn::Flow::Call)
                continue;
            auto to = decoder.successor(ret - k, bytes, at_call, memory);
            if (to && *to == target)
                out.insert(out.begin(), ret - k); // a call that lands here is the likeliest
            else if (to) {
                // A call through a stub (the PLT): the stub's jump that lands
                // here, or on the first call the dynamic linker's.
                for (uint64_t j : stub_jumps_to(decoder, *to, target, regs, memory))
                    out.insert(out.begin(), j);
                for (uint64_t j : lazy_binding_jumps(decoder, *to, target, regs, memory))
                    out.push_back(j);
            }
        }
    }
    // At the dynamic linker's resolver, entered from PLT0 on a first call:
    // on the stack the link map (PLT0's push), the relocation index (the
    // stub's), then the return address to the call site.
    // Before that, at PLT0 (the index, the return address) and at the stub's
    // push (the return address).
    for (uint64_t depth : {16, 8, 0})
        if (auto stub = stub_called_from(decoder, regs[Registers::RSP] + depth, regs, memory))
            if (auto lb = lazy_binding(decoder, *stub, regs, memory)) {
                uint64_t from = depth == 16 && lb->resolver == target ? lb->plt0_jump
                                : depth == 8 && lb->plt0 == target    ? lb->stub_jump
                                : depth == 0 && lb->push == target    ? lb->first_jump
                                                                      : 0;
                if (from)
                    out.insert(out.begin(), from);
            }
    return out;
}

std::vector<uint64_t> writer_candidates(const X86Decoder& decoder, uint64_t after, const Registers& regs,
                                        const MemoryReader& memory, uint64_t addr, uint64_t len)
{
    std::vector<uint64_t> exact, others;
    size_t readable = 0;
    auto code = code_before(after, memory, readable);
    auto overlaps = [&](const std::vector<MemoryWrite>& ws) {
        for (const auto& w : ws)
            if (w.addr < addr + len && addr < w.addr + w.len)
                return true;
        return false;
    };
    for (size_t k = std::min<size_t>(readable, 15); k >= 1; k--) {
        std::span<const uint8_t> bytes(code.data() + 16 - k, k);
        auto insn = decoder.decode(after - k, bytes);
        if (!insn || insn->size != k || insn->flow != X86Decoder::Insn::Flow::Next || !insn->writes_memory)
            continue;
        // Judged with the registers after the write: an instruction that
        // moved the stack pointer or a string pointer wrote just beside.
        Registers before_push = regs;
        before_push[Registers::RSP] += 8;
        if (overlaps(decoder.writes(after - k, bytes, regs)) || overlaps(decoder.writes(after - k, bytes, before_push)))
            exact.push_back(after - k);
        else
            others.push_back(after - k);
    }
    exact.insert(exact.end(), others.begin(), others.end());
    return exact;
}

} // namespace rw::replay
