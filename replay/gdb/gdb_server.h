// The gdb remote-protocol server: parses packets, dispatches them through
// a table keyed by packet name, and maps them onto the debugging session.
// gdb sees the recorded thread ids, so what the program printed about
// itself (pids, tids) matches what gdb shows.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "breakpoint_capture.h"
#include "debug_session.h"
#include "gdb_connection.h"
#include "gdb_host_files.h"

namespace rw::replay {

class ReverseWatch;

class GdbServer : public DebugFrontend {
public:
    GdbServer(GdbConnection& connection, DebugSession& session, HostFiles& files);
    ~GdbServer() override;
    // A tool's long reply (rw-query) goes to a file in `dir` and the reply
    // names it: through gdb, console text costs about a microsecond a byte.
    void set_reply_dir(std::string dir) { reply_dir_ = std::move(dir); }

    ResumeRequest on_stop(const StopReport& report) override;
    bool interrupt_requested() override { return connection_.interrupted(); }
    bool gone() override { return connection_.gone(); }

    // gdb's numbering of signals, and back.
    static int to_gdb_signal(int host);
    static int from_gdb_signal(int gdb);

private:
    // A handler replies itself; a resume packet returns what to do.
    using Handler = std::function<std::optional<ResumeRequest>(const std::string& packet)>;
    void add(std::string prefix, Handler handler);
    std::optional<ResumeRequest> dispatch(const std::string& packet);

    std::string stop_reply(const StopReport& report);
    void reply(const std::string& payload) { connection_.send(payload); }
    std::optional<ResumeRequest> resume_packet(ResumeRequest::Kind kind, int signal = 0);
    std::optional<ResumeRequest> on_vcont(const std::string& packet);
    std::optional<ResumeRequest> on_vrun(const std::string& packet);
    std::optional<ResumeRequest> on_monitor(const std::string& packet);
    void on_qxfer(const std::string& packet);
    void on_breakpoint(const std::string& packet, bool insert);
    void on_read_memory(const std::string& packet);
    void on_write_memory(const std::string& packet, bool binary);
    Tid thread_arg(const std::string& s);
    Tid general_thread();

    GdbConnection& connection_;
    DebugSession& session_;
    HostFiles& files_;
    std::vector<std::pair<std::string, Handler>> handlers_;
    StopReport last_stop_;
    bool reply_pending_ = false;  // a resume packet awaits its stop reply
    bool pending_is_run_ = false; // the pending reply answers vRun
    bool killed_ = false;         // gdb killed the process (vKill); a vRun brings it back
    Tid general_tid_ = 0;
    Tid continue_tid_ = 0; // Hc: the thread `s` and `bs` move
    std::optional<ResumeRequest> pending_monitor_travel_;
    std::string reply_dir_;
    std::string machine_reply(std::string json) const; // json, or a file's name in reply_dir_
    bool pending_monitor_machine_ = false;
    std::unique_ptr<ReverseWatch> reverse_watch_; // rewind watch, driving the replay for `monitor reverse-watch`
    bool told_no_reverse_ = false;
    BreakpointCapture capture_; // `monitor rw-capture-watch`
};

} // namespace rw::replay
