#include "value_origin.h"

#include <fmt/core.h>

#include <algorithm>
#include <optional>
#include <regex>

#include "memory_writes.h"

namespace rw::cli {
namespace {

// Reverse steps a register is followed back over before the tracer gives up.
constexpr int kMostStepsBack = 200;

struct Instruction {
    uint64_t pc = 0;
    std::string text;                   // as gdb disassembles it
    std::string mnemonic;               // "mov", "movzbl", "add" …
    std::vector<std::string> operands;  // AT&T order: sources first, destination last
    std::optional<uint64_t> rip_target; // a rip-relative operand's address (gdb's comment)
};

// "%eax" -> "a", "%r8d" -> "r8", "%sil" -> "si": registers that overlap.
std::string register_family(std::string r)
{
    if (!r.empty() && r[0] == '%')
        r = r.substr(1);
    static const std::regex numbered("(r\\d+)[dwb]?");
    std::smatch m;
    if (std::regex_match(r, m, numbered))
        return m[1];
    static const std::vector<std::pair<std::string, std::vector<std::string>>> families{
        {"a", {"rax", "eax", "ax", "al", "ah"}}, {"b", {"rbx", "ebx", "bx", "bl", "bh"}},
        {"c", {"rcx", "ecx", "cx", "cl", "ch"}}, {"d", {"rdx", "edx", "dx", "dl", "dh"}},
        {"si", {"rsi", "esi", "si", "sil"}},     {"di", {"rdi", "edi", "di", "dil"}},
        {"bp", {"rbp", "ebp", "bp", "bpl"}},     {"sp", {"rsp", "esp", "sp", "spl"}}};
    for (const auto& [family, names] : families)
        if (std::find(names.begin(), names.end(), r) != names.end())
            return family;
    return r; // xmm0, …: itself
}

uint64_t register_width(const std::string& r)
{
    std::string n = r.substr(r[0] == '%' ? 1 : 0);
    if (n.starts_with("xmm"))
        return 16;
    if (n.starts_with("ymm"))
        return 32;
    if (n.starts_with("zmm"))
        return 64;
    if (n.starts_with("r") && (n.back() == 'd'))
        return 4;
    if (n.starts_with("r") && n.back() == 'w')
        return 2;
    if ((n.starts_with("r") && n.back() == 'b') || n.back() == 'l' || n.back() == 'h')
        return n == "rbp" || n == "rsp" ? 8 : 1;
    if (n.starts_with("e"))
        return 4;
    if (n.starts_with("r"))
        return 8;
    return 2;
}

bool is_register(const std::string& operand)
{
    return !operand.empty() && operand[0] == '%' && operand.find(':') == std::string::npos;
}

bool is_memory(const std::string& operand)
{
    return !operand.empty() && operand[0] != '%' && operand[0] != '$';
}

std::vector<std::string> split_operands(const std::string& s)
{
    std::vector<std::string> out;
    std::string cur;
    int depth = 0;
    for (char c : s) {
        if (c == '(')
            depth++;
        if (c == ')')
            depth--;
        if (c == ',' && depth == 0) {
            out.push_back(cur);
            cur.clear();
            continue;
        }
        cur += c;
    }
    if (!cur.empty())
        out.push_back(cur);
    return out;
}

// What the tracer follows next.
struct Next {
    enum class Kind { Done, Memory, Register } kind = Kind::Done;
    uint64_t address = 0, size = 0; // Memory; for Register, `size` bytes from byte `address` of it
    std::string reg;                // Register
    std::string at;                 // where it holds the value followed
    static Next done() { return {}; }
    static Next memory(uint64_t a, uint64_t n, std::string at) { return {Kind::Memory, a, n, "", std::move(at)}; }
    static Next reg_at(std::string r, std::string at, uint64_t offset, uint64_t n)
    {
        return {Kind::Register, offset, n, std::move(r), std::move(at)};
    }
};

class OriginTracer {
public:
    // (Each instruction is named where it runs: the replay stays there.)
    OriginTracer(GdbMi& gdb, const OriginOptions& options) : gdb_(gdb), options_(options), places_(gdb, false) {}

    OriginChain run(uint64_t address, uint64_t size)
    {
        Next next = Next::memory(address, size, options_.at);
        while (next.kind != Next::Kind::Done) {
            if (chain_.hops.size() >= options_.depth) {
                chain_.ends = fmt::format("the chain goes on: --depth {} hops reached", options_.depth);
                break;
            }
            next = next.kind == Next::Kind::Memory ? from_memory(next.address, next.size, next.at)
                                                   : from_register(next.reg, next.at, next.address, next.size);
        }
        return chain_;
    }

private:
    std::string go(const std::string& position)
    {
        std::string p = tool_reply(gdb_, "rw-goto " + position).value("position", position);
        gdb_.console("maintenance flush register-cache");
        return p;
    }

    // One instruction back in the current thread: the server's bounded
    // step back, else gdb's reverse-stepi (which searches where the
    // candidates cannot be trapped: a jump through a table).
    std::optional<std::string> back()
    {
        std::string was = tool_reply(gdb_, "rw-status").value("position", "");
        try {
            std::string p = tool_reply(gdb_, "rw-back 4096").value("position", "");
            gdb_.console("maintenance flush register-cache");
            return p;
        } catch (const std::runtime_error&) {
        }
        // (From the position by the name it had: a step back given up may
        // leave the replay there under another.)
        go(was);
        return step_back_by_gdb();
    }

    std::optional<std::string> step_back_by_gdb()
    {
        std::string was = tool_reply(gdb_, "rw-status").value("position", "");
        MiResult r = gdb_.console("reverse-stepi");
        gdb_.console("maintenance flush register-cache");
        std::string now = tool_reply(gdb_, "rw-status").value("position", "");
        if (!r.ok() || now == was)
            return std::nullopt;
        return now;
    }

    uint64_t value_of(const std::string& expr)
    {
        MiResult r = gdb_.command("-data-evaluate-expression " + mi_quote("(unsigned long)(" + expr + ")"));
        if (!r.ok())
            throw std::runtime_error("gdb cannot evaluate " + expr + ": " + r.error());
        return std::stoull(r.values.str("value"), nullptr, 0);
    }

    Instruction here()
    {
        Instruction i;
        MiResult r = gdb_.console("x/i $pc");
        static const std::regex line(R"(=> (0x[0-9a-f]+)[^:]*:\s+(\S+)\s*([^#\n]*?)\s*(?:#\s*(0x[0-9a-f]+).*)?\n)");
        std::smatch m;
        if (!std::regex_search(r.console, m, line))
            throw std::runtime_error("gdb does not disassemble the instruction here: " + r.console);
        i.pc = std::stoull(m[1], nullptr, 16);
        i.mnemonic = m[2];
        i.operands = split_operands(m[3]);
        if (m[4].matched)
            i.rip_target = std::stoull(m[4], nullptr, 16);
        i.text = i.mnemonic + (m[3].length() ? " " + std::string(m[3]) : "");
        return i;
    }

    // The instruction here, if it writes the byte at `address`: a store
    // whose destination covers it, a string or stack instruction (their
    // destinations are not operands), a copy function's code.
    std::optional<Instruction> writes_bytes(uint64_t address)
    {
        Instruction i = here();
        if (i.operands.size() != 2 || !is_memory(i.operands[1]))
            return i;
        uint64_t width = is_register(i.operands[0]) ? register_width(i.operands[0]) : suffix_width(i.mnemonic);
        uint64_t at = effective_address(i, i.operands[1]);
        if (address >= at && address < at + width)
            return i;
        return std::nullopt;
    }

    static uint64_t suffix_width(const std::string& m)
    {
        switch (m.empty() ? ' ' : m.back()) {
        case 'b':
            return 1;
        case 'w':
            return 2;
        case 'l':
            return 4;
        default:
            return 8;
        }
    }

    // The address a memory operand names, from the registers where the
    // instruction is about to run.
    uint64_t effective_address(const Instruction& i, const std::string& operand)
    {
        if (operand.find("(%rip)") != std::string::npos && i.rip_target)
            return *i.rip_target;
        static const std::regex form(R"((?:%(fs|gs):)?(-?0x[0-9a-f]+|-?\d+)?(?:\((%\w+)?(?:,(%\w+)(?:,(\d))?)?\))?)");
        std::smatch m;
        if (!std::regex_match(operand, m, form))
            throw std::runtime_error("an operand the tracer does not read: " + operand);
        uint64_t a = 0;
        if (m[1].matched)
            a += value_of("$" + std::string(m[1]) + "_base");
        if (m[2].matched)
            a += static_cast<uint64_t>(std::stoll(m[2], nullptr, 0));
        if (m[3].matched)
            a += value_of("$" + std::string(m[3]).substr(1));
        if (m[4].matched)
            a += value_of("$" + std::string(m[4]).substr(1)) * (m[5].matched ? std::stoull(m[5]) : 1);
        return a;
    }

    OriginHop hop_here(const std::string& kind, const std::string& position, const Instruction& i)
    {
        OriginHop h;
        h.kind = kind;
        h.position = position;
        h.pc = i.pc;
        h.place = places_.at(i.pc);
        h.instruction = i.text;
        h.thread = tool_reply(gdb_, "rw-status").value("thread", int64_t{0});
        return h;
    }

    void end(OriginHop h, const std::string& why, bool origin)
    {
        chain_.hops.push_back(std::move(h));
        chain_.ends = why;
        chain_.complete = origin;
        if (origin && !combined_.empty()) {
            // The value combined other inputs on the way: this is where one
            // of them came from, not the whole value.
            chain_.complete = false;
            chain_.ends += ", the origin of one input of " + combined_ + " (the others not followed)";
        }
    }

    // The register family an instruction writes without naming it, when
    // that is the one followed: the family followed on from there (nullopt
    // where it does not write `family`).
    static std::optional<std::string> implicit_write(const Instruction& i, const std::string& family)
    {
        const std::string& m = i.mnemonic;
        bool one_operand = i.operands.size() == 1;
        if ((m.starts_with("div") || m.starts_with("idiv") || m.starts_with("mul") ||
             (m.starts_with("imul") && one_operand)) &&
            one_operand && (family == "a" || family == "d"))
            return std::string("a"); // the quotient, remainder or product: from the dividend in rax (and rdx)
        if ((m == "cqto" || m == "cltd" || m == "cqo" || m == "cdq" || m == "cwtd") && family == "d")
            return std::string("a"); // rdx: the sign of rax
        if ((m == "cltq" || m == "cdqe" || m == "cwtl" || m == "cbtw") && family == "a")
            return std::string("a");
        return std::nullopt;
    }

    // The bytes [address, address+size) as they are at `at`: their last write.
    Next from_memory(uint64_t address, uint64_t size, const std::string& at)
    {
        std::string command = "rw-query begin " + at;
        for (auto [a, len] : watch_pieces(address, size))
            command += fmt::format(" w{:x}.{}", a, len);
        nlohmann::json reply = tool_reply(gdb_, command + " most=10000000");
        const auto& hits = reply["hits"];
        if (hits.empty()) {
            OriginHop h;
            h.kind = "start";
            h.position = reply.value("from", "");
            h.place = places_.at(address);
            h.what = fmt::format("{} bytes at {:#x} ({}) are as they were when the history began: the program's "
                                 "initial data, or memory no instruction or syscall of this process wrote",
                                 size, address, h.place.function);
            end(h, "the initial data", true);
            return Next::done();
        }
        const auto& last = hits.back();
        if (last["kind"] == "event") {
            OriginHop h;
            h.kind = "event";
            h.position = last["position"].get<std::string>();
            uint64_t event = last["event"].get<uint64_t>();
            h.what = options_.describe_event ? options_.describe_event(event, address) : fmt::format("event {}", event);
            end(h, "a syscall's result", true);
            return Next::done();
        }
        // The writing instruction, one step back from just after it.
        std::string after = go(last["position"].get<std::string>());
        Instruction at_write = here();
        if (at_write.text.starts_with("rep movs") || at_write.mnemonic.starts_with("movs")) {
            // A string copy stopped between its elements (an inlined memcpy):
            // rsi and rdi have moved past the element just copied.
            uint64_t from = value_of("$rsi") - (value_of("$rdi") - address);
            OriginHop c = hop_here("copy", after, at_write);
            c.what = fmt::format("copied by {} from {:#x}", at_write.text.substr(0, at_write.text.find(' ', 4)), from);
            c.tracked = fmt::format("{} bytes at {:#x}", size, from);
            chain_.hops.push_back(c);
            return Next::memory(from, size, after);
        }
        auto before = back();
        std::optional<Instruction> writer = before ? writes_bytes(address) : std::nullopt;
        if (before && !writer) {
            // Not the instruction that wrote them: gdb's own step back.
            go(after);
            before = step_back_by_gdb();
            writer = before ? writes_bytes(address) : std::nullopt;
        }
        if (!writer) {
            OriginHop h = hop_here("unfollowed", after, at_write);
            h.what = "written just before this instruction, which the tracer could not step back to";
            end(h, "a write not stepped back to", false);
            return Next::done();
        }
        Instruction i = *writer;
        OriginHop h = hop_here("store", *before, i);
        h.position = *before;
        if (is_copy_function(h.place.function)) {
            if (auto next = through_copy(h, address, size))
                return *next;
            go(*before); // followed through its registers instead, as any store
        }
        if (h.place.function.find("memset") != std::string::npos) {
            h.kind = "constant";
            h.what = "set by memset";
            end(h, "a memset", true);
            return Next::done();
        }
        const std::string& src = i.operands.empty() ? "" : i.operands.front();
        if (i.operands.size() == 2 && src[0] == '$') {
            h.kind = "constant";
            h.what = "the constant " + src.substr(1) + " in the code";
            end(h, "a constant in the code", true);
            return Next::done();
        }
        if (i.operands.size() == 2 && is_register(src)) {
            // Which bytes of the register: a wide store (a vector copy) puts
            // them at an offset.
            uint64_t offset = 0;
            if (is_memory(i.operands[1])) {
                uint64_t stored_at = effective_address(i, i.operands[1]);
                if (address >= stored_at && address < stored_at + register_width(src))
                    offset = address - stored_at;
            }
            h.what = "stored from " + src + (offset ? fmt::format(" (its byte {})", offset) : "");
            h.tracked = src;
            chain_.hops.push_back(h);
            return Next::reg_at(src, *before, offset, size);
        }
        h.kind = "unfollowed";
        h.what = "written by an instruction the tracer does not follow";
        end(h, "an instruction not followed: " + i.text, false);
        return Next::done();
    }

    static bool is_copy_function(const std::string& f)
    {
        static const std::regex copy("(mem(cpy|move)|str(n)?cpy|stpcpy|stpncpy|wmemcpy)");
        return std::regex_search(f, copy);
    }

    // Inside a libc copy: at its entry (reached back by a breakpoint there:
    // a tail call has no caller frame to finish into), each destination
    // byte's source byte.
    std::optional<Next> through_copy(const OriginHop& h, uint64_t address, uint64_t size)
    {
        static const std::regex symbol(R"(^(\S+)(?: \+ (\d+))? in section)");
        std::smatch m;
        MiResult s = gdb_.console(fmt::format("info symbol {:#x}", h.pc));
        if (!std::regex_search(s.console, m, symbol))
            return std::nullopt;
        uint64_t entry = h.pc - (m[2].matched ? std::stoull(m[2]) : 0);
        bool counted = h.place.function.find("str") == std::string::npos; // memcpy/memmove: n bytes
        // Two ways back to where the copy was asked: the symbol's entry (a
        // tail call leaves no caller to finish into), else the call in the
        // caller (a copy entered by another symbol: mempcpy into memmove).
        std::string call, why;
        uint64_t dst = 0, src = 0, n = 0;
        for (bool by_entry : {true, false}) {
            go(h.position);
            MiResult r;
            if (by_entry) {
                gdb_.console(fmt::format("tbreak *{:#x}", entry));
                r = gdb_.console("reverse-continue");
                gdb_.console("delete");
            } else {
                r = gdb_.console("reverse-finish");
            }
            gdb_.console("maintenance flush register-cache");
            if (!r.ok()) {
                why = r.error();
                continue;
            }
            call = tool_reply(gdb_, "rw-status").value("position", "");
            dst = value_of("$rdi"), src = value_of("$rsi"), n = value_of("$rdx");
            if (address >= dst && (!counted || address < dst + n))
                break;
            why = fmt::format("the copy found there writes to {:#x}, not {:#x}", dst, address);
            call.clear();
        }
        if (call.empty())
            return std::nullopt;
        Instruction i = here();
        uint64_t from = src + (address - dst);
        OriginHop c = hop_here("copy", call, i);
        c.pc = value_of("*(unsigned long*)$rsp") - 1; // in the caller: its line is the hop's
        c.place = places_.at(c.pc);
        c.instruction.clear();
        c.what =
            fmt::format("{}(dst={:#x}, src={:#x}{}) copied byte {} of its source, called from {}", h.place.function,
                        dst, src, counted ? fmt::format(", n={}", n) : "", address - dst, c.place.describe());
        c.tracked = fmt::format("{} bytes at {:#x}", size, from);
        chain_.hops.push_back(c);
        return Next::memory(from, size, call);
    }

    // The register `reg` as it is at `at`: the instruction that set it.
    Next from_register(const std::string& reg, const std::string& at, uint64_t offset, uint64_t tracked_size)
    {
        go(at);
        std::string family = register_family(reg);
        // What the register holds here: a load found by stepping back must
        // have put it there (a step back named wrongly would go elsewhere).
        bool known = register_width(reg) <= 8 && offset == 0;
        uint64_t holds = known ? value_of("$" + reg.substr(1)) : 0;
        for (int steps = 0; steps < kMostStepsBack; steps++) {
            auto p = back();
            if (!p) {
                OriginHop h;
                h.kind = "unfollowed";
                h.position = at;
                h.tracked = reg;
                end(h, reg + " was set before the history began", false);
                return Next::done();
            }
            Instruction i = here();
            // Instructions whose destinations are not their operands: the
            // divide and multiply family (rax and rdx), sign extensions.
            if (auto implicit = implicit_write(i, family)) {
                OriginHop h = hop_here("compute", *p, i);
                h.what = "computed by " + i.text +
                         (*implicit == family ? "" : " from %r" + std::string(*implicit == "a" ? "ax" : "dx"));
                if (i.mnemonic.starts_with("div") || i.mnemonic.starts_with("idiv") || i.mnemonic.starts_with("mul") ||
                    i.mnemonic.starts_with("imul"))
                    combined_ = i.text + " at " + h.place.describe();
                std::string next = *implicit == "a" ? "%rax" : "%rdx";
                h.tracked = next;
                chain_.hops.push_back(h);
                if (chain_.hops.size() >= options_.depth)
                    return Next::reg_at(next, *p, offset, tracked_size);
                family = *implicit;
                known = false;
                continue;
            }
            if (i.operands.empty() || !writes_destination(i.mnemonic))
                continue;
            const std::string& dst = i.operands.back();
            bool pops = i.mnemonic.starts_with("pop") && i.operands.size() == 1;
            if (!is_register(dst) || register_family(dst) != family) {
                if (!(i.mnemonic.starts_with("xchg") && i.operands.size() == 2 &&
                      register_family(i.operands[0]) == family))
                    continue;
            }
            const std::string src = i.operands.size() == 2 ? i.operands[0] : "";
            OriginHop h = hop_here("move", *p, i);
            uint64_t address = 0, size = 0;
            bool plain_move = i.mnemonic.starts_with("mov") || i.mnemonic.starts_with("vmov");
            if (pops) {
                h.kind = "load";
                address = value_of("$rsp");
                size = 8;
                h.what = fmt::format("popped from the stack at {:#x}", address);
            } else if (plain_move && is_memory(src)) {
                h.kind = "load";
                address = effective_address(i, src) + offset;
                size = offset ? tracked_size : std::min(load_width(i, dst), std::max<uint64_t>(tracked_size, 1));
                h.what = fmt::format("loaded {} bytes from {:#x}", size, address);
                uint64_t width = load_width(i, dst);
                uint64_t mask = width >= 8 ? ~0ull : (1ull << (8 * width)) - 1;
                if (known && (value_of(fmt::format("*(unsigned long*){:#x}", address)) & mask) != (holds & mask)) {
                    h.kind = "unfollowed";
                    h.what = fmt::format("{} is not what {} held: the step back went astray", h.what, reg);
                    end(h, "a load the tracer could not confirm", false);
                    return Next::done();
                }
            } else if (plain_move && src[0] == '$') {
                h.kind = "constant";
                h.what = "the constant " + src.substr(1) + " in the code";
                end(h, "a constant in the code", true);
                return Next::done();
            } else if (i.mnemonic.starts_with("xor") && src == dst) {
                h.kind = "constant";
                h.what = "zeroed (" + i.text + ")";
                end(h, "a constant in the code", true);
                return Next::done();
            } else if (plain_move && is_register(src)) {
                h.what = "copied from " + src;
                h.tracked = src;
                chain_.hops.push_back(h);
                return Next::reg_at(src, *p, offset, tracked_size);
            } else if (i.mnemonic.starts_with("lea")) {
                h.kind = "constant";
                h.what = "an address computed by " + i.text;
                end(h, "an address", true);
                return Next::done();
            } else {
                // Arithmetic: the value combines what the register held with
                // the other operand; followed through the register, the
                // operation named.
                h.kind = "compute";
                h.what = "computed by " + i.mnemonic + (src.empty() ? "" : " with " + src);
                if (is_register(src) && register_family(src) != family)
                    combined_ = i.text + " at " + h.place.describe();
                h.tracked = reg;
                chain_.hops.push_back(h);
                if (known)
                    holds = value_of("$" + reg.substr(1)); // its input, which the earlier write made
                if (is_memory(src)) {
                    // (The memory operand is the newer input: followed there.)
                    return Next::memory(effective_address(i, src) + offset,
                                        std::min<uint64_t>(register_width(dst), tracked_size), *p);
                }
                if (chain_.hops.size() >= options_.depth)
                    return Next::reg_at(reg, *p, offset, tracked_size);
                continue;
            }
            h.tracked = fmt::format("{} bytes at {:#x}", size, address);
            chain_.hops.push_back(h);
            return Next::memory(address, size, *p);
        }
        OriginHop h;
        h.kind = "unfollowed";
        h.position = at;
        h.tracked = reg;
        end(h, fmt::format("{} not set within {} instructions before", reg, kMostStepsBack), false);
        return Next::done();
    }

    static bool writes_destination(const std::string& m)
    {
        for (const char* only_reads :
             {"cmp", "test", "push", "j", "call", "ret", "nop", "bt", "ucomis", "comis", "endbr"})
            if (m.starts_with(only_reads))
                return false;
        return true;
    }

    static uint64_t load_width(const Instruction& i, const std::string& dst)
    {
        // movzbl, movswq, movslq: the first size letter is the source's.
        static const std::regex extend("mov[sz]([bwl])[wlq]");
        std::smatch m;
        if (std::regex_match(i.mnemonic, m, extend))
            return m[1] == "b" ? 1 : m[1] == "w" ? 2 : 4;
        if (i.mnemonic == "movsbl" || i.mnemonic == "movsbw")
            return 1;
        return std::min<uint64_t>(register_width(dst), 8);
    }

    GdbMi& gdb_;
    const OriginOptions& options_;
    CodePlaces places_;
    OriginChain chain_;
    std::string combined_; // the last operation that combined the value followed with another input
};

} // namespace

OriginChain trace_origin(GdbMi& gdb, uint64_t address, uint64_t size, const OriginOptions& options)
{
    return OriginTracer(gdb, options).run(address, size);
}

} // namespace rw::cli
