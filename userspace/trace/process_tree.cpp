#include "process_tree.h"

#include <sys/wait.h>

#include <cstring>
#include <filesystem>
#include <map>

#include "trace.h"

namespace rw {

std::string RecordedProcess::describe_exit() const
{
    if (!exit_status)
        return "running at the end";
    int s = *exit_status;
    if (WIFSIGNALED(s))
        return std::string("killed by ") + (sigabbrev_np(WTERMSIG(s)) ? std::string("SIG") + sigabbrev_np(WTERMSIG(s))
                                                                      : "signal " + std::to_string(WTERMSIG(s)));
    return "exit " + std::to_string(WEXITSTATUS(s));
}

std::vector<RecordedProcess> process_tree(const Trace& trace)
{
    std::vector<RecordedProcess> tree;
    std::map<Tid, size_t> by_pid; // the live process of each id (ids can be reused)
    auto own = [&](Tid tgid, uint64_t index) {
        auto it = by_pid.find(tgid);
        if (it == by_pid.end())
            return;
        RecordedProcess& p = tree[it->second];
        p.last_event = index;
        p.events++;
    };
    std::map<Tid, Tid> process_of; // thread id -> process id, for events that name only the thread
    // A process rewind attached to: there from the start, running its command.
    if (const auto& a = trace.meta().attached) {
        RecordedProcess p;
        p.pid = a->pid;
        p.inherited_argv = trace.meta().argv;
        p.threads = a->threads;
        p.attached = true;
        by_pid[p.pid] = tree.size();
        tree.push_back(std::move(p));
        for (const auto& d : a->descendants) {
            RecordedProcess c;
            c.pid = d.pid;
            c.parent = d.parent;
            c.inherited_argv = d.argv;
            c.threads = d.threads;
            c.attached = true;
            by_pid[c.pid] = tree.size();
            tree.push_back(std::move(c));
        }
    }
    // As stored: who ran what needs no bytes of reads recorded by
    // reference to a file copy (a pread each).
    EventStreamReader reader = trace.events_as_stored();
    Event event;
    for (uint64_t index = 0; reader.next(event); index++) {
        if (const auto* x = std::get_if<ExecEvent>(&event)) {
            if (!by_pid.count(x->tgid)) {
                // The recorded program itself.
                by_pid[x->tgid] = tree.size();
                RecordedProcess p;
                p.pid = x->tgid;
                p.first_event = index;
                tree.push_back(p);
            }
            process_of[x->tid] = x->tgid;
            tree[by_pid[x->tgid]].execs.push_back({index, x->filename, x->argv});
            own(x->tgid, index);
        } else if (const auto* f = std::get_if<ForkEvent>(&event)) {
            own(f->parent_tgid, index);
            process_of[f->child_tid] = f->child_tgid;
            if (f->is_thread()) {
                if (auto it = by_pid.find(f->parent_tgid); it != by_pid.end())
                    tree[it->second].threads++;
                continue;
            }
            RecordedProcess p;
            p.pid = f->child_tgid;
            p.parent = f->parent_tgid;
            p.first_event = p.last_event = index;
            if (auto it = by_pid.find(f->parent_tgid); it != by_pid.end())
                p.inherited_argv = tree[it->second].command();
            by_pid[p.pid] = tree.size();
            tree.push_back(std::move(p));
        } else if (const auto* e = std::get_if<ExitEvent>(&event)) {
            own(e->tgid, index);
            if (e->group_dead)
                if (auto it = by_pid.find(e->tgid); it != by_pid.end()) {
                    tree[it->second].exit_status = e->group_exit_code;
                    by_pid.erase(it);
                }
        } else {
            std::visit(
                [&](const auto& x) {
                    if constexpr (requires { x.tgid; })
                        own(x.tgid, index);
                    else if constexpr (requires { x.tid; })
                        if (auto it = process_of.find(x.tid); it != process_of.end())
                            own(it->second, index);
                },
                event);
        }
    }
    return tree;
}

const RecordedProcess* find_process(const std::vector<RecordedProcess>& tree, Tid pid)
{
    for (const auto& p : tree)
        if (p.pid == pid)
            return &p;
    return nullptr;
}

const RecordedProcess* find_process_by_exec(const std::vector<RecordedProcess>& tree, const std::string& name)
{
    auto matches = [&](const std::string& path) {
        return !path.empty() && (path == name || std::filesystem::path(path).filename() == name);
    };
    for (const auto& p : tree)
        for (const auto& x : p.execs)
            if (matches(x.filename) || (!x.argv.empty() && matches(x.argv[0])))
                return &p;
    return nullptr;
}

std::string list_processes(const std::vector<RecordedProcess>& tree)
{
    std::string out;
    for (const auto& p : tree) {
        // The program by its file name, as --exec takes it: a long path
        // would leave no room for the rest.
        const auto& argv = p.command();
        std::string cmd = argv.empty() ? "" : argv[0].substr(argv[0].rfind('/') + 1);
        for (size_t i = 1; i < argv.size(); i++)
            cmd += " " + argv[i];
        if (cmd.size() > 40)
            cmd = cmd.substr(0, 37) + "...";
        out += (out.empty() ? "" : ", ") + std::string("pid ") + std::to_string(p.pid) + " (" + cmd + ")";
    }
    return out;
}

} // namespace rw
