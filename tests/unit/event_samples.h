// A deterministic mix of every event kind, for codec and stream tests.
#pragma once

#include <random>
#include <vector>

#include "event.h"

namespace rw::testing {

inline std::vector<Event> sample_events(size_t count, uint32_t seed = 7)
{
    std::mt19937_64 rng(seed);
    auto rnd = [&](uint64_t mod) { return mod ? rng() % mod : rng(); };
    std::vector<Event> out;
    for (size_t i = 0; i < count; i++) {
        switch (i % 8) {
        case 0: {
            SyscallEvent e;
            e.seq = i;
            e.tid = static_cast<Tid>(100 + rnd(4));
            e.tgid = 100;
            e.nr = static_cast<int32_t>(rnd(330));
            for (auto& a : e.args)
                a = rnd(0);
            e.ret = static_cast<int64_t>(rnd(0));
            e.ip = rnd(0);
            e.sp = rnd(0);
            e.exit_time = rnd(0);
            e.flags = static_cast<uint32_t>(rnd(16));
            for (uint64_t m = rnd(3); m-- > 0;) {
                MemoryRange r;
                r.addr = rnd(0);
                r.buffer = static_cast<uint8_t>(rnd(4));
                r.dir = rnd(2) ? Direction::In : Direction::Out;
                r.bytes.resize(rnd(300));
                for (auto& b : r.bytes)
                    b = static_cast<uint8_t>(rnd(256));
                r.length = r.bytes.size();
                r.hash = rnd(0);
                e.memory.push_back(r);
            }
            if (rnd(2)) {
                MemoryRange h; // as the recorder writes them: only inputs are kept as a hash
                h.dir = Direction::In;
                h.hashed_only = true;
                h.length = 100000;
                h.hash = rnd(0);
                e.memory.push_back(h);
            }
            if (rnd(3) == 0)
                e.file = FileRef{rnd(0), rnd(0), static_cast<int64_t>(rnd(0)), 5, "abcdef", "/lib/libx.so"};
            if (rnd(4) == 0) { // a write to a mapped file: its identity and where the data went
                e.flags |= kSyscallMappedWrite;
                e.file = FileRef{rnd(0), rnd(0), static_cast<int64_t>(rnd(1 << 20)), 7, "", ""};
                e.file_offset = rnd(0);
            }
            out.push_back(e);
            break;
        }
        case 1:
            out.push_back(ForkEvent{i, 100, 100, static_cast<Tid>(200 + i), static_cast<Tid>(200 + i), rnd(0)});
            break;
        case 2: {
            ExecEvent e;
            e.seq = i;
            e.tid = e.tgid = 300;
            e.former_tid = 301;
            e.filename = "/bin/true";
            e.executable = "/usr/bin/true";
            e.argv = {"true", "--version", ""};
            e.envp = {"A=1", "PATH=/bin"};
            e.auxv = {6, 4096, 25, rnd(0)};
            e.at_random[3] = 9;
            for (auto& w : e.regs.words)
                w = rnd(0);
            e.mappings.push_back({0x400000, 0x401000, "r-xp", 0, "/usr/bin/true", "ff00"});
            e.mappings.push_back({0x7ff000, 0x800000, "rw-p", 0, "[stack]", ""});
            out.push_back(e);
            break;
        }
        case 3: {
            ExitEvent e;
            e.seq = i;
            e.tid = 100;
            e.tgid = 100;
            e.exit_code = 0x8b;
            e.group_exit_code = 0x8b;
            e.group_dead = true;
            e.pending_nr = 231;
            e.pending_args[0] = 3;
            out.push_back(e);
            break;
        }
        case 4: {
            SignalEvent e;
            e.seq = i;
            e.tid = 100;
            e.tgid = 100;
            e.signo = 14;
            e.kind = static_cast<SignalKind>(1 + rnd(3));
            e.anchor_seq = rnd(1000);
            e.siginfo[0] = 14;
            for (auto& w : e.regs.words)
                w = rnd(0);
            if (e.kind == SignalKind::AtPosition && rnd(2) == 1) {
                e.pages = {0x7ffff7000000 + 4096 * rnd(16), 0x7ffffffde000};
                e.pages_hash = rnd(0);
            }
            out.push_back(e);
            break;
        }
        case 5:
            out.push_back(RdtscEvent{i, 100, rnd(0), rnd(0), static_cast<uint32_t>(rnd(64)), rnd(2) == 1});
            break;
        case 6:
            out.push_back(RandomEvent{i, 100, rnd(0), rnd(0), rnd(2) == 1});
            break;
        default:
            out.push_back(
                NoteEvent{i, 100, rnd(2) ? NoteKind::Info : NoteKind::Incomplete, "note " + std::to_string(i)});
        }
    }
    return out;
}

} // namespace rw::testing
