// The sub-operations of calls that multiplex (ioctl, fcntl, prctl, bpf,
// the System V IPC controls…): what each reads and writes.
#include "syscall_subcommands.h"

#include <sys/syscall.h>

#include <cstring>
#include <vector>

#include "table_builders.h"

namespace rw::detail {
namespace {

using namespace table_builders;

// bpf(cmd, attr, size): the union bpf_attr, of which the kernel reads
// `size` bytes (and takes the rest as zeros: fields past it are absent).
constexpr rw_buf_spec bpf_attr()
{
    return in_arg(1, 2);
}
// A buffer a field of the attr points to, at `off`.
constexpr rw_buf_spec bpf_pointed(uint16_t off, rw_buf_spec b)
{
    return within(2, via(off, b));
}
// A field of the attr the kernel writes back, at `off`.
constexpr rw_buf_spec bpf_written(uint16_t off, uint32_t size)
{
    return within(2, at(off, out_fixed(1, size)));
}
// A map's key or value, sized by the map whose descriptor is the attr's
// first u32.
constexpr rw_buf_spec bpf_map_data(uint8_t dir, uint16_t off, rw_state which)
{
    return bpf_pointed(off, state_sized(dir, 1, which, 1, 0));
}
// The log a verifier writes (also when it refuses): the buffer at
// `ptr_off`, of the size at `size_off`.
constexpr rw_buf_spec bpf_log(uint16_t ptr_off, uint16_t size_off)
{
    rw_buf_spec b = buf(RW_SZ_FIELD, 1, 1, kOut, 0);
    b.size_off = size_off;
    return bpf_pointed(ptr_off, b);
}

// A BPF program's instructions: whether it calls bpf_probe_write_user,
// which writes into the memory of whatever process runs when the program
// does, at no syscall of that process's.
std::string_view bpf_program_refusal(std::span<const uint8_t> insns)
{
    constexpr uint8_t kCall = 0x85; // BPF_JMP | BPF_CALL
    constexpr int32_t kProbeWriteUser = 36;
    for (size_t at = 0; at + 8 <= insns.size(); at += 8) {
        int32_t imm;
        std::memcpy(&imm, insns.data() + at + 4, sizeof imm);
        // src_reg 0: a helper, by number (1 is another BPF function, 2 a kfunc).
        if (insns[at] == kCall && (insns[at + 1] >> 4) == 0 && imm == kProbeWriteUser)
            return "the program it loads calls bpf_probe_write_user, which writes into the memory of the process "
                   "it runs in outside any of its syscalls";
    }
    return {};
}

std::vector<SubcommandInfo> bpf_commands()
{
    constexpr int nr = SYS_bpf;
    // union bpf_attr's layouts (uapi/linux/bpf.h), by command.
    return {
        sub(nr, 0, "BPF_MAP_CREATE", {bpf_attr()}, kNewFd),
        sub(nr, 1, "BPF_MAP_LOOKUP_ELEM",
            {bpf_attr(), bpf_map_data(kIn, 8, RW_STATE_BPF_KEY), bpf_map_data(kOut, 16, RW_STATE_BPF_VALUE)}),
        sub(nr, 2, "BPF_MAP_UPDATE_ELEM",
            {bpf_attr(), bpf_map_data(kIn, 8, RW_STATE_BPF_KEY), bpf_map_data(kIn, 16, RW_STATE_BPF_VALUE)}),
        sub(nr, 3, "BPF_MAP_DELETE_ELEM", {bpf_attr(), bpf_map_data(kIn, 8, RW_STATE_BPF_KEY)}),
        // The key is absent for the first key.
        sub(nr, 4, "BPF_MAP_GET_NEXT_KEY",
            {bpf_attr(), bpf_map_data(kIn, 8, RW_STATE_BPF_KEY), bpf_map_data(kOut, 16, RW_STATE_BPF_KEY)}),
        // The instructions (insn_cnt at 4, 8 bytes each, at 8) are kept whole:
        // `rewind info` looks in them for what replay cannot reproduce. The
        // license at 16, the log at 32 (log_size at 28), log_true_size at 140.
        inspected(1, bpf_program_refusal,
                  sub(nr, 5, "BPF_PROG_LOAD",
                      {bpf_attr(), kept(bpf_pointed(8, in_field_sized(1, 1, 4, 8))), bpf_pointed(16, in_str(1)),
                       bpf_log(32, 28), within(2, at(140, out_fixed_always(1, 4)))},
                      kNewFd)),
        sub(nr, 6, "BPF_OBJ_PIN", {bpf_attr(), bpf_pointed(0, in_str(1))}),
        sub(nr, 7, "BPF_OBJ_GET", {bpf_attr(), bpf_pointed(0, in_str(1))}, kNewFd),
        sub(nr, 8, "BPF_PROG_ATTACH", {bpf_attr()}),
        sub(nr, 9, "BPF_PROG_DETACH", {bpf_attr()}),
        // retval, data_size_out at 4..16, duration, ctx_size_out at 36..48;
        // data_out at 24 (data_size_out at 12), ctx_out at 56 (ctx_size_out
        // at 44).
        sub(nr, 10, "BPF_PROG_TEST_RUN",
            {bpf_attr(), bpf_written(4, 12), bpf_written(36, 12), bpf_pointed(24, out_field_sized(1, 1, 12)),
             bpf_pointed(56, out_field_sized(1, 1, 44))}),
        sub(nr, 11, "BPF_PROG_GET_NEXT_ID", {bpf_attr(), bpf_written(4, 4)}),
        sub(nr, 12, "BPF_MAP_GET_NEXT_ID", {bpf_attr(), bpf_written(4, 4)}),
        sub(nr, 13, "BPF_PROG_GET_FD_BY_ID", {bpf_attr()}, kNewFd),
        sub(nr, 14, "BPF_MAP_GET_FD_BY_ID", {bpf_attr()}, kNewFd),
        // info_len at 4 (read, written back with what was written), the
        // info at 8.
        sub(nr, 15, "BPF_OBJ_GET_INFO_BY_FD",
            {bpf_attr(), bpf_written(4, 4), bpf_pointed(8, out_field_sized(1, 1, 4))}),
        // attach_flags .. revision (12..64) written back; four arrays of
        // prog_cnt (at 24) u32s.
        sub(nr, 16, "BPF_PROG_QUERY",
            {bpf_attr(), bpf_written(12, 52), bpf_pointed(16, out_field_sized(1, 1, 24, 4)),
             bpf_pointed(32, out_field_sized(1, 1, 24, 4)), bpf_pointed(40, out_field_sized(1, 1, 24, 4)),
             bpf_pointed(48, out_field_sized(1, 1, 24, 4))}),
        sub(nr, 17, "BPF_RAW_TRACEPOINT_OPEN", {bpf_attr(), bpf_pointed(0, in_str(1))}, kNewFd),
        // The BTF at 0 (btf_size at 16), its log at 8 (btf_log_size at 20),
        // btf_log_true_size at 28.
        sub(nr, 18, "BPF_BTF_LOAD",
            {bpf_attr(), bpf_pointed(0, in_field_sized(1, 1, 16)), bpf_log(8, 20),
             within(2, at(28, out_fixed_always(1, 4)))},
            kNewFd),
        sub(nr, 19, "BPF_BTF_GET_FD_BY_ID", {bpf_attr()}, kNewFd),
        sub(nr, 21, "BPF_MAP_LOOKUP_AND_DELETE_ELEM",
            {bpf_attr(), bpf_map_data(kIn, 8, RW_STATE_BPF_KEY), bpf_map_data(kOut, 16, RW_STATE_BPF_VALUE)}),
        sub(nr, 22, "BPF_MAP_FREEZE", {bpf_attr()}),
        sub(nr, 23, "BPF_BTF_GET_NEXT_ID", {bpf_attr(), bpf_written(4, 4)}),
        sub(nr, 28, "BPF_LINK_CREATE", {bpf_attr()}, kNewFd),
        sub(nr, 29, "BPF_LINK_UPDATE", {bpf_attr()}),
        sub(nr, 30, "BPF_LINK_GET_FD_BY_ID", {bpf_attr()}, kNewFd),
        sub(nr, 31, "BPF_LINK_GET_NEXT_ID", {bpf_attr(), bpf_written(4, 4)}),
        sub(nr, 32, "BPF_ENABLE_STATS", {bpf_attr()}, kNewFd),
        sub(nr, 33, "BPF_ITER_CREATE", {bpf_attr()}, kNewFd),
        sub(nr, 34, "BPF_LINK_DETACH", {bpf_attr()}),
        sub(nr, 35, "BPF_PROG_BIND_MAP", {bpf_attr()}),
        sub(nr, 36, "BPF_TOKEN_CREATE", {bpf_attr()}, kNewFd),
    };
}

// Subcommands, but bpf's (below).
std::vector<SubcommandInfo> listed_subcommands()
{
    return {
        // Terminal ioctls predate the size encoding in the request number.
        // TUNSETIFF and TUNGETIFF take a struct ifreq (40 bytes), not the int
        // their numbers say; TUNSETIFF writes the interface's name back.
        sub(SYS_ioctl, 0x400454ca, "TUNSETIFF", {in_fixed(2, 40), out_fixed(2, 40)}),
        sub(SYS_ioctl, 0x800454d2, "TUNGETIFF", {out_fixed(2, 40)}),
        // struct fiemap (32 bytes) and the fm_mapped_extents (u32 at 20)
        // struct fiemap_extent (56 bytes each) the kernel wrote after it.
        sub(SYS_ioctl, 0xc020660b, "FS_IOC_FIEMAP", {out_fixed(2, 32), at(32, out_field_sized(2, 2, 20, 56))}),
        sub(SYS_ioctl, 0x5401, "TCGETS", {out_fixed(2, kTermios)}),
        sub(SYS_ioctl, 0x5402, "TCSETS", {in_fixed(2, kTermios)}),
        sub(SYS_ioctl, 0x5403, "TCSETSW", {in_fixed(2, kTermios)}),
        sub(SYS_ioctl, 0x5404, "TCSETSF", {in_fixed(2, kTermios)}),
        sub(SYS_ioctl, 0x5409, "TCSBRK"),
        sub(SYS_ioctl, 0x540A, "TCXONC"),
        sub(SYS_ioctl, 0x540B, "TCFLSH"),
        sub(SYS_ioctl, 0x540C, "TIOCEXCL"),
        sub(SYS_ioctl, 0x540D, "TIOCNXCL"),
        sub(SYS_ioctl, 0x540E, "TIOCSCTTY"),
        sub(SYS_ioctl, 0x540F, "TIOCGPGRP", {out_fixed(2, 4)}),
        sub(SYS_ioctl, 0x5410, "TIOCSPGRP", {in_fixed(2, 4)}),
        sub(SYS_ioctl, 0x5411, "TIOCOUTQ", {out_fixed(2, 4)}),
        sub(SYS_ioctl, 0x5412, "TIOCSTI", {in_fixed(2, 1)}),
        sub(SYS_ioctl, 0x5413, "TIOCGWINSZ", {out_fixed(2, kWinsize)}),
        sub(SYS_ioctl, 0x5414, "TIOCSWINSZ", {in_fixed(2, kWinsize)}),
        sub(SYS_ioctl, 0x5415, "TIOCMGET", {out_fixed(2, 4)}),
        sub(SYS_ioctl, 0x5416, "TIOCMBIS", {in_fixed(2, 4)}),
        sub(SYS_ioctl, 0x5417, "TIOCMBIC", {in_fixed(2, 4)}),
        sub(SYS_ioctl, 0x5418, "TIOCMSET", {in_fixed(2, 4)}),
        sub(SYS_ioctl, 0x541B, "FIONREAD", {out_fixed(2, 4)}),
        sub(SYS_ioctl, 0x5420, "TIOCPKT", {in_fixed(2, 4)}),
        sub(SYS_ioctl, 0x5421, "FIONBIO", {in_fixed(2, 4)}),
        sub(SYS_ioctl, 0x5422, "TIOCNOTTY"),
        sub(SYS_ioctl, 0x5423, "TIOCSETD", {in_fixed(2, 4)}),
        sub(SYS_ioctl, 0x5424, "TIOCGETD", {out_fixed(2, 4)}),
        sub(SYS_ioctl, 0x5429, "TIOCGSID", {out_fixed(2, 4)}),
        sub(SYS_ioctl, 0x5441, "TIOCGPTPEER", {}, kNewFd),
        sub(SYS_ioctl, 0x5450, "FIONCLEX"),
        sub(SYS_ioctl, 0x5451, "FIOCLEX"),
        sub(SYS_ioctl, 0x5452, "FIOASYNC", {in_fixed(2, 4)}),
        sub(SYS_ioctl, 0x5600, "VT_OPENQRY", {out_fixed(2, 4)}),
        sub(SYS_ioctl, 0x5603, "VT_GETSTATE", {out_fixed(2, 6)}),
        sub(SYS_ioctl, 0x4B44, "KDGKBMODE", {out_fixed(2, 4)}),
        sub(SYS_ioctl, 0x8910, "SIOCGIFNAME", {out_fixed(2, kIfreq)}),
        sub(SYS_ioctl, 0x8912, "SIOCGIFCONF", {out_fixed(2, 16)}),
        sub(SYS_ioctl, 0x8913, "SIOCGIFFLAGS", {out_fixed(2, kIfreq)}),
        sub(SYS_ioctl, 0x8914, "SIOCSIFFLAGS", {in_fixed(2, kIfreq)}),
        sub(SYS_ioctl, 0x8915, "SIOCGIFADDR", {out_fixed(2, kIfreq)}),
        sub(SYS_ioctl, 0x8916, "SIOCSIFADDR", {in_fixed(2, kIfreq)}),
        sub(SYS_ioctl, 0x8921, "SIOCGIFMTU", {out_fixed(2, kIfreq)}),
        sub(SYS_ioctl, 0x8927, "SIOCGIFHWADDR", {out_fixed(2, kIfreq)}),
        sub(SYS_ioctl, 0x8933, "SIOCGIFINDEX", {out_fixed(2, kIfreq)}),
        sub(SYS_ioctl, 0x890B, "SIOCADDRT", {in_fixed(2, kRtentry)}),
        sub(SYS_ioctl, 0x890C, "SIOCDELRT", {in_fixed(2, kRtentry)}),
        sub(SYS_ioctl, 0x891C, "SIOCSIFNETMASK", {in_fixed(2, kIfreq)}),
        // The old bridge call: three longs, a command and its operands.
        // GET_BRIDGES (1) fills an array of interface indexes (as many as it
        // returns), ADD_BRIDGE (2) and DEL_BRIDGE (3) name one.
        sub(SYS_ioctl, 0x8940, "SIOCGIFBR",
            {in_fixed(2, 24), when_field(2, 0, 1, via(8, out_ret(2, 4))), when_field(2, 0, 2, via(8, in_str(2))),
             when_field(2, 0, 3, via(8, in_str(2)))}),
        // Bridges: by name, and an interface into or out of one.
        sub(SYS_ioctl, 0x89A0, "SIOCBRADDBR", {in_str(2)}),
        sub(SYS_ioctl, 0x89A1, "SIOCBRDELBR", {in_str(2)}),
        sub(SYS_ioctl, 0x89A2, "SIOCBRADDIF", {in_fixed(2, kIfreq)}),
        sub(SYS_ioctl, 0x89A3, "SIOCBRDELIF", {in_fixed(2, kIfreq)}),

        // perf events (linux/perf_event.h). Several pass a value where they
        // declare a pointer.
        sub(SYS_ioctl, 0x2400, "PERF_EVENT_IOC_ENABLE"),
        sub(SYS_ioctl, 0x2401, "PERF_EVENT_IOC_DISABLE"),
        sub(SYS_ioctl, 0x2402, "PERF_EVENT_IOC_REFRESH"),
        sub(SYS_ioctl, 0x2403, "PERF_EVENT_IOC_RESET"),
        sub(SYS_ioctl, 0x40082404, "PERF_EVENT_IOC_PERIOD", {in_fixed(2, 8)}),
        sub(SYS_ioctl, 0x2405, "PERF_EVENT_IOC_SET_OUTPUT"),
        sub(SYS_ioctl, 0x40082406, "PERF_EVENT_IOC_SET_FILTER", {in_str(2)}),
        sub(SYS_ioctl, 0x80082407, "PERF_EVENT_IOC_ID", {out_fixed(2, 8)}),
        sub(SYS_ioctl, 0x40042408, "PERF_EVENT_IOC_SET_BPF"),
        sub(SYS_ioctl, 0x40042409, "PERF_EVENT_IOC_PAUSE_OUTPUT"),
        // struct perf_event_query_bpf: ids_len (read), prog_cnt (written),
        // then the ids.
        sub(SYS_ioctl, 0xC008240A, "PERF_EVENT_IOC_QUERY_BPF",
            {in_fixed(2, 4), at(4, out_fixed(2, 4)), at(8, out_field_sized(2, 2, 4, 4))}),
        sub(SYS_ioctl, 0x4008240B, "PERF_EVENT_IOC_MODIFY_ATTRIBUTES",
            {in_fixed(2, kPerfAttrVer0), capped(kPageSize, in_field_sized(2, 2, 4))}),

        sub(SYS_fcntl, 0, "F_DUPFD", {}, FdEffect::Dup),
        sub(SYS_fcntl, 1, "F_GETFD"),
        sub(SYS_fcntl, 2, "F_SETFD"),
        sub(SYS_fcntl, 3, "F_GETFL"),
        sub(SYS_fcntl, 4, "F_SETFL"),
        sub(SYS_fcntl, 5, "F_GETLK", {out_fixed(2, kFlock)}),
        sub(SYS_fcntl, 6, "F_SETLK", {in_fixed(2, kFlock)}),
        sub(SYS_fcntl, 7, "F_SETLKW", {in_fixed(2, kFlock)}),
        sub(SYS_fcntl, 8, "F_SETOWN"),
        sub(SYS_fcntl, 9, "F_GETOWN"),
        sub(SYS_fcntl, 10, "F_SETSIG"),
        sub(SYS_fcntl, 11, "F_GETSIG"),
        sub(SYS_fcntl, 15, "F_SETOWN_EX", {in_fixed(2, 8)}),
        sub(SYS_fcntl, 16, "F_GETOWN_EX", {out_fixed(2, 8)}),
        sub(SYS_fcntl, 17, "F_GETOWNER_UIDS", {out_fixed(2, 8)}),
        sub(SYS_fcntl, 36, "F_OFD_GETLK", {out_fixed(2, kFlock)}),
        sub(SYS_fcntl, 37, "F_OFD_SETLK", {in_fixed(2, kFlock)}),
        sub(SYS_fcntl, 38, "F_OFD_SETLKW", {in_fixed(2, kFlock)}),
        sub(SYS_fcntl, 1024, "F_SETLEASE"),
        sub(SYS_fcntl, 1025, "F_GETLEASE"),
        sub(SYS_fcntl, 1026, "F_NOTIFY"),
        sub(SYS_fcntl, 1030, "F_DUPFD_CLOEXEC", {}, FdEffect::Dup),
        sub(SYS_fcntl, 1031, "F_SETPIPE_SZ"),
        sub(SYS_fcntl, 1032, "F_GETPIPE_SZ"),
        sub(SYS_fcntl, 1033, "F_ADD_SEALS"),
        sub(SYS_fcntl, 1034, "F_GET_SEALS"),
        // Write-lifetime hints: a u64 the kernel reads or writes.
        sub(SYS_fcntl, 1035, "F_GET_RW_HINT", {out_fixed(2, 8)}),
        sub(SYS_fcntl, 1036, "F_SET_RW_HINT", {in_fixed(2, 8)}),
        sub(SYS_fcntl, 1037, "F_GET_FILE_RW_HINT", {out_fixed(2, 8)}),
        sub(SYS_fcntl, 1038, "F_SET_FILE_RW_HINT", {in_fixed(2, 8)}),

        sub(SYS_arch_prctl, 0x1001, "ARCH_SET_GS"),
        sub(SYS_arch_prctl, 0x1002, "ARCH_SET_FS"),
        sub(SYS_arch_prctl, 0x1003, "ARCH_GET_FS", {out_fixed(1, 8)}),
        sub(SYS_arch_prctl, 0x1004, "ARCH_GET_GS", {out_fixed(1, 8)}),
        sub(SYS_arch_prctl, 0x1011, "ARCH_GET_CPUID"),
        sub(SYS_arch_prctl, 0x1012, "ARCH_SET_CPUID"),
        sub(SYS_arch_prctl, 0x1021, "ARCH_GET_XCOMP_SUPP", {out_fixed(1, 8)}),
        sub(SYS_arch_prctl, 0x1022, "ARCH_GET_XCOMP_PERM", {out_fixed(1, 8)}),
        sub(SYS_arch_prctl, 0x1023, "ARCH_REQ_XCOMP_PERM"),
        sub(SYS_arch_prctl, 0x3001, "ARCH_CET_STATUS", {out_fixed(1, 24)}),
        sub(SYS_arch_prctl, 0x5001, "ARCH_SHSTK_ENABLE"),
        sub(SYS_arch_prctl, 0x5002, "ARCH_SHSTK_DISABLE"),
        sub(SYS_arch_prctl, 0x5003, "ARCH_SHSTK_LOCK"),
        sub(SYS_arch_prctl, 0x5005, "ARCH_SHSTK_STATUS", {out_fixed(1, 8)}),

        // Replay installs no filter of the program's: what its filters did
        // (an error, a SIGSYS, a kill) is in the trace.
        sub(SYS_seccomp, 0, "SECCOMP_SET_MODE_STRICT"),
        sub(SYS_seccomp, 1, "SECCOMP_SET_MODE_FILTER", {in_fixed(2, 16)}),
        sub(SYS_seccomp, 2, "SECCOMP_GET_ACTION_AVAIL", {in_fixed(2, 4)}),
        sub(SYS_seccomp, 3, "SECCOMP_GET_NOTIF_SIZES", {out_fixed(2, 6)}),

        sub(SYS_prctl, 1, "PR_SET_PDEATHSIG"),
        sub(SYS_prctl, 2, "PR_GET_PDEATHSIG", {out_fixed(1, 4)}),
        sub(SYS_prctl, 3, "PR_GET_DUMPABLE"),
        sub(SYS_prctl, 4, "PR_SET_DUMPABLE"),
        sub(SYS_prctl, 7, "PR_GET_KEEPCAPS"),
        sub(SYS_prctl, 8, "PR_SET_KEEPCAPS"),
        sub(SYS_prctl, 15, "PR_SET_NAME", {in_fixed(1, 16)}),
        sub(SYS_prctl, 16, "PR_GET_NAME", {out_fixed(1, 16)}),
        shows_recorder(RW_VIEW_SECCOMP_MODE, sub(SYS_prctl, 21, "PR_GET_SECCOMP")),
        sub(SYS_prctl, 22, "PR_SET_SECCOMP"),
        sub(SYS_prctl, 23, "PR_CAPBSET_READ"),
        sub(SYS_prctl, 24, "PR_CAPBSET_DROP"),
        shows_recorder(RW_VIEW_TSC_MODE, sub(SYS_prctl, 25, "PR_GET_TSC", {out_fixed(1, 4)})),
        sub(SYS_prctl, 27, "PR_GET_SECUREBITS"),
        sub(SYS_prctl, 28, "PR_SET_SECUREBITS"),
        sub(SYS_prctl, 29, "PR_SET_TIMERSLACK"),
        sub(SYS_prctl, 30, "PR_GET_TIMERSLACK"),
        sub(SYS_prctl, 33, "PR_MCE_KILL"),
        sub(SYS_prctl, 34, "PR_MCE_KILL_GET"),
        // PR_SET_MM_MAP_SIZE (15) writes the size of struct prctl_mm_map;
        // the others set fields of the process's memory description that
        // the kernel shows in /proc (whose reads replay serves from the trace).
        sub(SYS_prctl, 35, "PR_SET_MM", {when_equals(1, 15, out_fixed(2, 4))}),
        sub(SYS_prctl, 36, "PR_SET_CHILD_SUBREAPER"),
        sub(SYS_prctl, 37, "PR_GET_CHILD_SUBREAPER", {out_fixed(1, 4)}),
        sub(SYS_prctl, 38, "PR_SET_NO_NEW_PRIVS"),
        sub(SYS_prctl, 39, "PR_GET_NO_NEW_PRIVS"),
        sub(SYS_prctl, 40, "PR_GET_TID_ADDRESS", {out_fixed(1, 8)}),
        sub(SYS_prctl, 41, "PR_SET_THP_DISABLE"),
        sub(SYS_prctl, 42, "PR_GET_THP_DISABLE"),
        sub(SYS_prctl, 47, "PR_CAP_AMBIENT"),
        sub(SYS_prctl, 52, "PR_GET_SPECULATION_CTRL"),
        sub(SYS_prctl, 53, "PR_SET_SPECULATION_CTRL"),
        sub(SYS_prctl, 57, "PR_SET_IO_FLUSHER"),
        sub(SYS_prctl, 58, "PR_GET_IO_FLUSHER"),
        sub(SYS_prctl, 66, "PR_GET_MDWE"),
        sub(SYS_prctl, 0x53564d41, "PR_SET_VMA", {in_str(4)}),
        sub(SYS_prctl, 0x59616d61, "PR_SET_PTRACER"),

        // futex operations (the low 7 bits; private and clock flags masked).
        sub(SYS_futex, 0, "FUTEX_WAIT", {in_fixed(3, kTimespec)}),
        keeps(sub(SYS_futex, 1, "FUTEX_WAKE")),
        sub(SYS_futex, 2, "FUTEX_FD"),
        keeps(sub(SYS_futex, 3, "FUTEX_REQUEUE")),
        keeps(sub(SYS_futex, 4, "FUTEX_CMP_REQUEUE")),
        keeps(sub(SYS_futex, 5, "FUTEX_WAKE_OP", {out_fixed_always(4, 4)})),
        sub(SYS_futex, 6, "FUTEX_LOCK_PI", {out_fixed_always(0, 4)}),
        sub(SYS_futex, 7, "FUTEX_UNLOCK_PI", {out_fixed_always(0, 4)}),
        sub(SYS_futex, 8, "FUTEX_TRYLOCK_PI", {out_fixed_always(0, 4)}),
        sub(SYS_futex, 9, "FUTEX_WAIT_BITSET", {in_fixed(3, kTimespec)}),
        keeps(sub(SYS_futex, 10, "FUTEX_WAKE_BITSET")),
        sub(SYS_futex, 11, "FUTEX_WAIT_REQUEUE_PI", {out_fixed_always(0, 4), out_fixed_always(4, 4)}),
        sub(SYS_futex, 12, "FUTEX_CMP_REQUEUE_PI", {out_fixed_always(4, 4)}),
        sub(SYS_futex, 13, "FUTEX_LOCK_PI2", {out_fixed_always(0, 4)}),

        // sysfs(option, …): a filesystem type's index from its name, its
        // name from its index (a string the kernel writes), their count.
        // keyctl(operation, …): a key's description, payload or security
        // label is written only into a buffer large enough for all of it;
        // the call returns its whole size either way.
        sub(SYS_keyctl, 0, "KEYCTL_GET_KEYRING_ID"),
        sub(SYS_keyctl, 1, "KEYCTL_JOIN_SESSION_KEYRING", {in_str(1)}),
        sub(SYS_keyctl, 2, "KEYCTL_UPDATE", {in_arg(2, 3)}),
        sub(SYS_keyctl, 3, "KEYCTL_REVOKE"),
        sub(SYS_keyctl, 4, "KEYCTL_CHOWN"),
        sub(SYS_keyctl, 5, "KEYCTL_SETPERM"),
        sub(SYS_keyctl, 6, "KEYCTL_DESCRIBE", {buf(RW_SZ_RET_IF_FITS, 2, 3, kOut | kOk, 0)}),
        sub(SYS_keyctl, 7, "KEYCTL_CLEAR"),
        sub(SYS_keyctl, 8, "KEYCTL_LINK"),
        sub(SYS_keyctl, 9, "KEYCTL_UNLINK"),
        sub(SYS_keyctl, 10, "KEYCTL_SEARCH", {in_str(2), in_str(3)}),
        sub(SYS_keyctl, 11, "KEYCTL_READ", {buf(RW_SZ_RET_IF_FITS, 2, 3, kOut | kOk, 0)}),
        sub(SYS_keyctl, 14, "KEYCTL_SET_REQKEY_KEYRING"),
        sub(SYS_keyctl, 15, "KEYCTL_SET_TIMEOUT"),
        sub(SYS_keyctl, 17, "KEYCTL_GET_SECURITY", {buf(RW_SZ_RET_IF_FITS, 2, 3, kOut | kOk, 0)}),
        sub(SYS_keyctl, 21, "KEYCTL_INVALIDATE"),
        sub(SYS_keyctl, 22, "KEYCTL_GET_PERSISTENT"),
        // struct keyctl_dh_params (three key ids), the result, and the
        // optional key derivation's parameters.
        sub(SYS_keyctl, 23, "KEYCTL_DH_COMPUTE",
            {in_fixed(1, 12), buf(RW_SZ_RET_IF_FITS, 2, 3, kOut | kOk, 0), in_fixed(4, kKeyctlKdfParams)}),

        sub(SYS_sysfs, 1, "GETFSIND", {in_str(1)}),
        sub(SYS_sysfs, 2, "GETFSTYP", {buf(RW_SZ_CSTRING, 2, 0, kOut | kOk, 256)}),
        sub(SYS_sysfs, 3, "GETNFSTYP"),

        sub(SYS_shmctl, 0, "IPC_RMID"),
        sub(SYS_shmctl, 1, "IPC_SET", {in_fixed(2, kShmidDs)}),
        sub(SYS_shmctl, 2, "IPC_STAT", {out_fixed(2, kShmidDs)}),
        sub(SYS_shmctl, 3, "IPC_INFO", {out_fixed(2, kShminfo)}),
        sub(SYS_shmctl, 11, "SHM_LOCK"),
        sub(SYS_shmctl, 12, "SHM_UNLOCK"),
        sub(SYS_shmctl, 13, "SHM_STAT", {out_fixed(2, kShmidDs)}),
        sub(SYS_shmctl, 14, "SHM_INFO", {out_fixed(2, kShmInfo)}),
        sub(SYS_shmctl, 15, "SHM_STAT_ANY", {out_fixed(2, kShmidDs)}),

        sub(SYS_msgctl, 0, "IPC_RMID"),
        sub(SYS_msgctl, 1, "IPC_SET", {in_fixed(2, kMsqidDs)}),
        sub(SYS_msgctl, 2, "IPC_STAT", {out_fixed(2, kMsqidDs)}),
        sub(SYS_msgctl, 3, "IPC_INFO", {out_fixed(2, kMsginfo)}),
        sub(SYS_msgctl, 11, "MSG_STAT", {out_fixed(2, kMsqidDs)}),
        sub(SYS_msgctl, 12, "MSG_INFO", {out_fixed(2, kMsginfo)}),
        sub(SYS_msgctl, 13, "MSG_STAT_ANY", {out_fixed(2, kMsqidDs)}),

        // semctl's fourth argument is a union: a value, or a pointer.
        sub(SYS_semctl, 0, "IPC_RMID"),
        sub(SYS_semctl, 1, "IPC_SET", {in_fixed(3, kSemidDs)}),
        sub(SYS_semctl, 2, "IPC_STAT", {out_fixed(3, kSemidDs)}),
        sub(SYS_semctl, 3, "IPC_INFO", {out_fixed(3, kSeminfo)}),
        sub(SYS_semctl, 11, "GETPID"),
        sub(SYS_semctl, 12, "GETVAL"),
        // A u16 per semaphore of the set, a number the call does not carry.
        sub(SYS_semctl, 13, "GETALL", {state_sized(kOut, 3, RW_STATE_SEM_NSEMS, 0)}),
        sub(SYS_semctl, 14, "GETNCNT"),
        sub(SYS_semctl, 15, "GETZCNT"),
        sub(SYS_semctl, 16, "SETVAL"),
        sub(SYS_semctl, 17, "SETALL", {state_sized(kIn, 3, RW_STATE_SEM_NSEMS, 0)}),
        sub(SYS_semctl, 18, "SEM_STAT", {out_fixed(3, kSemidDs)}),
        sub(SYS_semctl, 19, "SEM_INFO", {out_fixed(3, kSeminfo)}),
        sub(SYS_semctl, 20, "SEM_STAT_ANY", {out_fixed(3, kSemidDs)}),
    };
}

} // namespace

const std::vector<SubcommandInfo>& subcommand_table()
{
    static const std::vector<SubcommandInfo> t = [] {
        std::vector<SubcommandInfo> all = listed_subcommands();
        auto bpf = bpf_commands();
        all.insert(all.end(), bpf.begin(), bpf.end());
        return all;
    }();
    return t;
}

} // namespace rw::detail
