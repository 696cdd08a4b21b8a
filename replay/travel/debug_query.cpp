// Whole-recording queries for tools (rewind calls, rewind writes): one
// collect from a boundary to a position that notes every execution of some
// instructions and every change of some bytes, with the thread's registers
// there. A query costs one replay and a stop per hit: the instructions
// between hits run at full speed.
#include <sys/ptrace.h>
#include <sys/user.h>

#include <cstring>

#include "debug_session.h"
#include "nlohmann/json.hpp"
#include "text.h"

namespace rw::replay {
namespace {

constexpr uint64_t kQueryMostDefault = 100000;
// Bytes read where each argument register points, at a function's entry.
constexpr size_t kPointedBytes = 64;

nlohmann::json registers_json(const Registers& regs)
{
    // The argument registers of the x86-64 ABI, its return value, and where
    // the thread is.
    return {{"rdi", regs[Registers::RDI]}, {"rsi", regs[Registers::RSI]}, {"rdx", regs[Registers::RDX]},
            {"rcx", regs[Registers::RCX]}, {"r8", regs[Registers::R8]},   {"r9", regs[Registers::R9]},
            {"rax", regs[Registers::RAX]}, {"rsp", regs[Registers::RSP]}, {"rip", regs[Registers::RIP]}};
}

// The low 8 bytes of xmm0-7: the float and double arguments of the ABI,
// and xmm0 the value returned (empty where they cannot be read).
nlohmann::json float_registers(pid_t tid)
{
    user_fpregs_struct fp{};
    if (::ptrace(PTRACE_GETFPREGS, tid, nullptr, &fp) != 0)
        return nlohmann::json::array();
    nlohmann::json out = nlohmann::json::array();
    for (int i = 0; i < 8; i++) {
        uint64_t low = 0;
        std::memcpy(&low, reinterpret_cast<const uint8_t*>(fp.xmm_space) + 16 * i, sizeof low);
        out.push_back(low);
    }
    return out;
}

} // namespace

std::optional<std::vector<uint8_t>> DebugSession::read_watched(Task& task) const
{
    std::vector<uint8_t> out;
    TraceeMemory mem = task.memory();
    for (auto [addr, len] : query_->watched) {
        std::vector<uint8_t> piece(len);
        if (!mem.read(RemoteAddr(addr), piece))
            return std::nullopt;
        out.insert(out.end(), piece.begin(), piece.end());
    }
    return out;
}

std::string DebugSession::run_query(const ResumeRequest& r)
{
    perfclock::Position from = r.from.value_or(begin_);
    perfclock::Position to;
    if (r.to)
        to = *r.to;
    else if (end_)
        to = *end_;
    else
        to = perfclock::Position{UINT64_MAX, {}}; // never reached: the collect ends at the end of history
    if (to.event < from.event)
        throw NoSuchPosition("a query's end comes before its start");
    debug_log("query %s -> %s: %zu instructions, %zu ranges", from.describe().c_str(), to.describe().c_str(),
              r.addrs.size(), r.writes.size());

    // The debugger's breakpoints step aside for the query's, and come back
    // however it ends.
    struct Swap {
        DebugSession& s;
        std::set<uint64_t> software;
        std::vector<HardwareBreakpoint> hardware;
        explicit Swap(DebugSession& session)
            : s(session), software(session.breakpoints_.software()), hardware(session.breakpoints_.hardware())
        {
            for (uint64_t a : software)
                s.breakpoints_.remove_software(a);
            for (const auto& h : hardware)
                s.breakpoints_.remove_hardware(h);
        }
        ~Swap()
        {
            for (uint64_t a : std::set<uint64_t>(s.breakpoints_.software()))
                s.breakpoints_.remove_software(a);
            for (const auto& h : std::vector<HardwareBreakpoint>(s.breakpoints_.hardware()))
                s.breakpoints_.remove_hardware(h);
            for (uint64_t a : software)
                s.breakpoints_.add_software(a);
            for (const auto& h : hardware)
                s.breakpoints_.add_hardware(h);
            s.query_.reset();
            s.collected_.reset(); // its hits were for other breakpoints
        }
    } swap(*this);
    // A debug register stops once at an execution, an int3 twice (its trap
    // and the step over it): the instructions asked about get the registers
    // the watched ranges leave, the return addresses found on the way int3s.
    size_t registers_left = perfclock::breakpoints_work() ? 4 - std::min<size_t>(4, r.writes.size()) : 0;
    for (uint64_t a : r.addrs) {
        if (registers_left > 0) {
            breakpoints_.add_hardware({perfclock::BreakpointKind::Execute, a, 1});
            registers_left--;
        } else {
            breakpoints_.add_software(a);
        }
    }
    for (auto [addr, len] : r.writes)
        breakpoints_.add_hardware({perfclock::BreakpointKind::Write, addr, len});

    query_ = std::make_unique<Query>();
    query_->watched = r.writes;
    query_->with = r.query_with;
    query_->asked.insert(r.addrs.begin(), r.addrs.end());
    query_->functions.insert(r.functions.begin(), r.functions.end());
    query_->first_event = from.event;
    query_->most = r.most ? r.most : kQueryMostDefault;
    const Timeline::Entry* start = timeline_.best_for(from);
    if (!start)
        start = timeline_.best_for(begin_);
    if (!query_->watched.empty()) {
        // The bytes before the first change: where the query starts.
        restore_for(from);
        arrival_hook_ = [] { return AfterArrival::Report; };
        execute();
        arrival_hook_ = nullptr;
        if (Task* t = debugged_task())
            query_->last = read_watched(*t);
        start = timeline_.best_for(from);
    }
    nlohmann::json initial = query_->last ? nlohmann::json(hex_bytes(*query_->last)) : nlohmann::json();
    collect(*start, to);

    nlohmann::json j;
    j["initial"] = initial;
    j["complete"] = !query_->full;
    j["most"] = query_->most;
    j["from"] = from.serialize();
    j["to"] = to.serialize();
    // The records are JSON already: joined, not parsed again.
    std::string out = j.dump();
    out.pop_back();
    out += ",\"hits\":[";
    for (size_t i = 0; i < query_->records.size(); i++)
        out += (i ? "," : "") + query_->records[i];
    return out + "]}";
}

void DebugSession::note_query_hits(Task& task)
{
    Query& q = *query_;
    for (; q.noted < hits_.size(); q.noted++) {
        const Hit& h = hits_[q.noted];
        if (h.pos.event < q.first_event)
            continue;
        bool is_break = h.kind != StopReport::Kind::Watch;
        if (is_break && q.returns.count(h.addr) && note_query_return(task, h) && !q.asked.count(h.addr))
            continue;
        if (is_break && !q.asked.count(h.addr))
            continue; // a return address reached by another call
        nlohmann::json rec;
        rec["position"] = h.pos.serialize();
        rec["thread"] = task.recorded_tid();
        Registers regs = h.arrival ? h.arrival->regs : task.regs();
        rec["regs"] = registers_json(regs);
        if (h.kind == StopReport::Kind::Watch) {
            rec["kind"] = "write";
            rec["addr"] = h.addr;
            if (h.arrival)
                rec["before"] = h.arrival->before; // the instructions that may have written
            auto now = read_watched(task);
            rec["bytes"] = now ? nlohmann::json(hex_bytes(*now)) : nlohmann::json();
            q.last = now;
        } else {
            rec["kind"] = "break";
            rec["addr"] = h.addr;
            if (q.with & ResumeRequest::kWithXmm)
                rec["xmm"] = float_registers(task.tid());
            // What the argument registers asked about point to: strings
            // and small structs passed by pointer.
            nlohmann::json pointed = nlohmann::json::object();
            uint32_t bit = 2;
            for (auto [name, index] : {std::pair{"rdi", Registers::RDI},
                                       {"rsi", Registers::RSI},
                                       {"rdx", Registers::RDX},
                                       {"rcx", Registers::RCX},
                                       {"r8", Registers::R8},
                                       {"r9", Registers::R9}}) {
                uint64_t at = regs[index];
                bool asked = q.with & bit;
                bit <<= 1;
                if (!asked || at < 4096)
                    continue;
                // (A string near the end of its mapping: up to the page's end.)
                std::vector<uint8_t> bytes(kPointedBytes);
                if (!task.memory().read(RemoteAddr(at), bytes)) {
                    bytes.resize(std::min<uint64_t>(kPointedBytes, 4096 - at % 4096));
                    if (!task.memory().read(RemoteAddr(at), bytes))
                        continue;
                }
                pointed[name] = hex_bytes(bytes);
            }
            if (!pointed.empty())
                rec["pointed"] = pointed;
            // The return address, where the instruction is a function's first.
            std::vector<uint8_t> top(8);
            if (task.memory().read(RemoteAddr(regs[Registers::RSP]), top)) {
                rec["stack"] = hex_bytes(top);
                if (q.functions.count(h.addr) && !q.full && q.noted_records < q.most) {
                    // Its return: a stop at the return address with the
                    // stack as the call leaves it, however far away.
                    uint64_t ret = 0;
                    std::memcpy(&ret, top.data(), sizeof ret);
                    auto seen = hit_counts_.find(ret);
                    q.pending.push_back({task.recorded_tid(), regs[Registers::RSP] + 8, q.records.size(), h.pos, ret,
                                         seen == hit_counts_.end() ? 0 : seen->second});
                    if (q.returns.insert(ret).second && !q.asked.count(ret) && !breakpoints_.has_software(ret)) {
                        breakpoints_.add_software(ret);
                        breakpoints_.apply(task);
                    }
                }
            }
        }
        add_query_record(rec.dump());
    }
}

bool DebugSession::add_query_record(std::string record)
{
    Query& q = *query_;
    if (q.full || q.noted_records >= q.most) {
        // One more than asked for: the list is cut, once the calls listed
        // have returned.
        q.full = true;
        if (q.pending.empty())
            throw CollectDone{};
        return false;
    }
    q.noted_records++;
    q.records.push_back(std::move(record));
    return true;
}

bool DebugSession::note_query_return(Task& task, const Hit& h)
{
    Query& q = *query_;
    Registers regs = task.regs();
    Tid tid = task.recorded_tid();
    for (size_t k = q.pending.size(); k-- > 0;) {
        const Query::Call& c = q.pending[k];
        if (c.tid != tid || c.return_address != h.addr || c.rsp_after != regs[Registers::RSP])
            continue;
        // Counted from the entry in its own stretch: the int3 at the return
        // address may have come in this stretch, after executions it missed.
        perfclock::Position at = h.pos;
        if (c.entry.event == h.pos.event)
            at = c.entry.with(perfclock::Segment::brk(h.addr, h.pos.path.back().count - c.returns_before));
        nlohmann::json rec;
        rec["position"] = at.serialize();
        rec["kind"] = "return";
        rec["call"] = c.record;
        rec["thread"] = tid;
        rec["regs"] = registers_json(regs);
        if (q.with & ResumeRequest::kWithXmm)
            rec["xmm"] = float_registers(task.tid());
        q.records.push_back(rec.dump()); // (not counted: the calls listed are)
        // The calls above it on this thread's stack left without returning
        // (longjmp, an exception).
        for (size_t j = q.pending.size(); j-- > k;)
            if (q.pending[j].tid == tid)
                q.pending.erase(q.pending.begin() + static_cast<long>(j));
        if (q.full && q.pending.empty())
            throw CollectDone{};
        return true;
    }
    return false;
}

void DebugSession::note_query_event()
{
    Query& q = *query_;
    Task* t = debugged_task();
    if (q.watched.empty() || !t || position_.event <= q.first_event)
        return;
    // An event's writes (a syscall's results, a signal frame) are the
    // replay's, which no watchpoint sees: compared at each boundary.
    auto now = read_watched(*t);
    if (now == q.last)
        return;
    nlohmann::json rec;
    rec["position"] = position_.serialize();
    rec["kind"] = "event";
    rec["event"] = position_.event - 1;
    rec["bytes"] = now ? nlohmann::json(hex_bytes(*now)) : nlohmann::json();
    q.last = now;
    add_query_record(rec.dump());
}

} // namespace rw::replay
