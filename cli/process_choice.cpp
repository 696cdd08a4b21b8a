#include "process_choice.h"

#include "process_tree.h"
#include "usage_error.h"
#include "trace.h"

namespace rw::cli {

void ProcessChoice::add_options(CLI::App* cmd)
{
    auto* pid_option = cmd->add_option("--pid", pid, "Debug this recorded process (see `rewind ps`)");
    cmd->add_option("--exec", exec, "Debug the first process that ran a program of this name")->excludes(pid_option);
}

Tid ProcessChoice::resolve(const Trace& trace) const
{
    if (pid == 0 && exec.empty())
        return 0;
    auto tree = process_tree(trace);
    const RecordedProcess* p = pid ? find_process(tree, pid) : find_process_by_exec(tree, exec);
    if (!p)
        throw UsageError(
            (pid ? "the recording has no process " + std::to_string(pid) : "no process of the recording ran " + exec) +
            "; it has " + list_processes(tree) + " (rewind ps)");
    // A recording that started at an attach begins from its start image,
    // which has only the processes that ran then.
    if (trace.meta().attached && !p->attached)
        throw UsageError("process " + std::to_string(p->pid) +
                         " started after rewind attached: gdb debugs the processes that ran then (rewind ps marks "
                         "them attached)");
    return p->pid;
}

} // namespace rw::cli
