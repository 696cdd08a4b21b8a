#include "query_replay.h"

#include "query_gdb.h"
#include "trace_dir.h"
#include "usage_error.h"

namespace rw::cli {
namespace {

std::string trace_of(const QueryArgs& a)
{
    return resolve_trace(a.positional.size() == 2 ? std::optional(a.positional[0]) : std::nullopt).string();
}

} // namespace

void QueryArgs::add_options(CLI::App* cmd, const std::string& what, bool with_most)
{
    cmd->add_option("trace_what", positional, "[TRACE] " + what + ": a trace (default: latest) and " + what)
        ->required()
        ->expected(1, 2);
    process.add_options(cmd);
    cmd->add_flag("--json", json, "Print the result as JSON");
    if (with_most)
        cmd->add_option("--most", most, "Stop after this many (default 10000)")->check(CLI::PositiveNumber);
    cmd->add_option("--gdb", gdb, "The gdb that reads the debug information (default: /usr/bin/gdb)");
}

QueryReplay::QueryReplay(const QueryArgs& a)
    : what_(a.positional.back()), trace_(trace_of(a)), start_(std::chrono::steady_clock::now())
{
    if (what_.empty())
        throw UsageError("nothing to look for: the last argument is empty");
    check_gdb(a.gdb);
    // (The program's output would come through gdb as console text.)
    std::vector<std::string> serve_options{"--quiet"};
    if (Tid pid = a.process.resolve(trace_)) {
        serve_options.push_back("--pid");
        serve_options.push_back(std::to_string(pid));
    }
    support_ = std::make_unique<GdbSupport>(trace_, serve_options);
    support_->take_long_replies_in_files();
    gdb_ = std::make_unique<GdbMi>(a.gdb, std::vector<std::string>{});
}

void QueryReplay::run(const std::function<void(GdbMi&)>& resolve, const std::function<void(GdbMi&)>& query)
{
    try {
        for (const std::string& setup : {std::string("set remotetimeout 100000"), support_->target_command()}) {
            MiResult r = gdb_->console(setup);
            if (!r.ok())
                throw std::runtime_error("gdb: " + r.error());
        }
        // Where the program starts, its own functions and globals have their
        // addresses already: no replay to the end first.
        try {
            resolve(*gdb_);
        } catch (const QueryInputError&) {
            go_to_end(*gdb_, support_->sysroot());
            resolve(*gdb_);
        }
        query(*gdb_);
    } catch (const QueryInputError& e) {
        throw UsageError(e.what());
    } catch (const std::exception& e) {
        rethrow_with_server_error(*support_, e);
    }
}

double QueryReplay::seconds() const
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

} // namespace rw::cli
