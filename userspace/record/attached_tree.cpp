#include "attached_tree.h"

#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <stdexcept>
#include <tuple>

#include "usage_error.h"

namespace rw {

std::vector<pid_t> descendants_of(pid_t pid)
{
    std::vector<pid_t> out;
    std::vector<pid_t> pending{pid};
    std::set<pid_t> seen{pid};
    while (!pending.empty()) {
        pid_t p = pending.back();
        pending.pop_back();
        for (pid_t tid : task_ids(p)) {
            std::ifstream in("/proc/" + std::to_string(p) + "/task/" + std::to_string(tid) + "/children");
            for (pid_t child; in >> child;)
                if (seen.insert(child).second) {
                    out.push_back(child);
                    pending.push_back(child);
                }
        }
    }
    return out;
}

bool ending(pid_t pid)
{
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    if (!std::getline(in, line))
        return true;
    // The state follows the command's closing parenthesis.
    auto paren = line.rfind(')');
    char state = paren != std::string::npos && paren + 2 < line.size() ? line[paren + 2] : 'X';
    if (state == 'Z' || state == 'X' || state == 'x')
        return true;
    std::error_code ec;
    return std::filesystem::read_symlink("/proc/" + std::to_string(pid) + "/exe", ec).empty();
}

AttachedTree::AttachedTree(pid_t root, bool descendants, long ptrace_options)
{
    processes_.push_back(std::make_unique<Attachment>(root, ptrace_options));
    parents_[root] = 0;
    if (!descendants)
        return;
    // Attached from the top down: a process forks only while it runs, so
    // once every process listed is stopped, listing again finds all.
    for (bool added = true; added;) {
        added = false;
        for (pid_t child : descendants_of(root)) {
            if (parents_.contains(child))
                continue;
            auto parent = static_cast<pid_t>(proc_status_number(child, "PPid").value_or(0));
            if (!parents_.contains(parent))
                continue; // its parent is not attached yet: the next round
            std::unique_ptr<Attachment> a;
            try {
                a = std::make_unique<Attachment>(child, ptrace_options);
            } catch (const UsageError&) {
                if (ending(child) || proc_status_number(child, "PPid").value_or(0) != parent)
                    continue; // it ended meanwhile
                throw;
            }
            processes_.push_back(std::move(a));
            parents_[child] = parent;
            added = true;
        }
    }
    // Each process followed by the processes below it, as a tree is shown.
    std::vector<std::unique_ptr<Attachment>> ordered;
    std::function<void(pid_t)> visit = [&](pid_t parent) {
        for (auto& a : processes_)
            if (a && parents_.at(a->pid()) == parent && a->pid() != root) {
                pid_t pid = a->pid();
                ordered.push_back(std::move(a));
                visit(pid);
            }
    };
    ordered.push_back(std::move(processes_.front()));
    visit(root);
    processes_ = std::move(ordered);
}

AttachedTree::~AttachedTree()
{
    while (!processes_.empty())
        processes_.pop_back();
}

Attachment& AttachedTree::owner_of(pid_t tgid)
{
    for (pid_t p = tgid; p > 1;) {
        for (auto& a : processes_)
            if (a->pid() == p)
                return *a;
        auto parent = static_cast<pid_t>(proc_status_number(p, "PPid").value_or(0));
        if (parent == p)
            break;
        p = parent;
    }
    return root();
}

void AttachedTree::prepare()
{
    for (auto& a : processes_)
        a->prepare();
}

std::vector<ImagePoint> AttachedTree::image_points() const
{
    std::vector<ImagePoint> out;
    for (const auto& a : processes_)
        out.push_back(a->image_point());
    return out;
}

std::vector<pid_t> AttachedTree::park_copies(const std::vector<ImagePoint>& at)
{
    std::vector<pid_t> copies;
    try {
        for (size_t i = 0; i < processes_.size(); i++) {
            copies.push_back(processes_[i]->fork_copy(at[i]));
            processes_[i]->park_copy(copies.back());
        }
    } catch (...) {
        discard_copies(copies);
        throw;
    }
    return copies;
}

void AttachedTree::discard_copies(const std::vector<pid_t>& copies)
{
    for (size_t i = 0; i < copies.size() && i < processes_.size(); i++)
        processes_[i]->discard_copy(copies[i]);
}

namespace {

bool is_sysv(const std::string& path)
{
    return path.rfind("/SYSV", 0) == 0;
}

} // namespace

std::vector<std::pair<pid_t, FileIdentity>> AttachedTree::shared_objects() const
{
    // (As the recorder names what a shmat maps: no device, the segment's id.)
    constexpr uint64_t kSysvSegments = ~uint64_t(0);
    std::vector<std::pair<pid_t, FileIdentity>> out;
    for (const auto& a : processes_)
        for (const auto& s : read_shared_writable_mappings(a->pid()))
            out.push_back(
                {a->pid(), is_sysv(s.mapping.path) ? FileIdentity{kSysvSegments, s.ino} : FileIdentity{s.dev, s.ino}});
    return out;
}

std::vector<SharedRegion> AttachedTree::shared_regions() const
{
    std::vector<SharedRegion> all;
    for (const auto& a : processes_)
        for (const auto& s : read_shared_writable_mappings(a->pid())) {
            const Mapping& m = s.mapping;
            uint64_t length = m.end - m.start;
            auto same = std::find_if(all.begin(), all.end(), [&](const SharedRegion& r) {
                return r.dev == s.dev && r.ino == s.ino && r.offset == m.offset && r.length == length;
            });
            if (same != all.end()) {
                same->mapped_at.push_back({a->pid(), m.start});
                continue;
            }
            all.push_back({s.dev, s.ino, m.offset, length, m.perms, m.path, {{a->pid(), m.start}}});
        }
    std::vector<SharedRegion> shared;
    for (auto& r : all) {
        std::set<pid_t> processes;
        for (auto [pid, addr] : r.mapped_at)
            processes.insert(pid);
        if (processes.size() > 1)
            shared.push_back(std::move(r));
    }
    // Parts of one object that overlap without being the same part would
    // each be made again on their own: their writes would not meet.
    for (const auto& r : shared)
        for (const auto& o : all)
            if (o.dev == r.dev && o.ino == r.ino && (o.offset != r.offset || o.length != r.length) &&
                o.offset < r.offset + r.length && r.offset < o.offset + o.length)
                throw std::runtime_error("processes " + std::to_string(r.mapped_at.front().first) + " and " +
                                         std::to_string(o.mapped_at.front().first) + " map overlapping parts of " +
                                         r.path + " shared: the start image cannot share such parts again");
    return shared;
}

void AttachedTree::rseq_registered(pid_t tid, uint64_t addr, uint32_t len, uint32_t sig)
{
    for (auto& a : processes_)
        a->rseq_registered(tid, addr, len, sig);
}

std::vector<std::string> AttachedTree::undo(const std::vector<pid_t>& tids)
{
    std::map<Attachment*, std::vector<pid_t>> by_owner;
    for (pid_t tid : tids) {
        auto tgid = static_cast<pid_t>(proc_status_number(tid, "Tgid").value_or(tid));
        by_owner[&owner_of(tgid)].push_back(tid);
    }
    std::vector<std::string> problems;
    for (auto& [a, threads] : by_owner)
        for (auto& p : a->undo(threads))
            problems.push_back(std::move(p));
    return problems;
}

AttachGuardian& AttachedTree::guardian_of(pid_t tgid)
{
    return owner_of(tgid).guardian();
}

std::vector<std::tuple<pid_t, pid_t, int>> AttachedTree::held_signals() const
{
    std::vector<std::tuple<pid_t, pid_t, int>> out;
    for (const auto& a : processes_)
        for (auto [tid, sig] : a->held_signals())
            out.push_back({a->pid(), tid, sig});
    return out;
}

void AttachedTree::release()
{
    for (auto& a : processes_)
        a->release();
}

} // namespace rw
