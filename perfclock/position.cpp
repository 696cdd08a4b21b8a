#include "position.h"

#include <cstdio>

namespace rw::perfclock {

bool Position::at_or_before(const Position& other) const
{
    if (event != other.event)
        return event < other.event;
    if (path.size() > other.path.size())
        return false;
    for (size_t i = 0; i < path.size(); i++) {
        if (i + 1 == path.size() && path[i].kind == Segment::Kind::Step && other.path[i].kind == Segment::Kind::Step)
            return path[i].count <= other.path[i].count;
        // Fewer executions of the same instruction, or writes to the same place.
        if (i + 1 == path.size() && path[i].kind == other.path[i].kind &&
            (path[i].kind == Segment::Kind::Break || path[i].kind == Segment::Kind::Watch) &&
            path[i].addr == other.path[i].addr && path[i].len == other.path[i].len &&
            path[i].access == other.path[i].access)
            return path[i].count <= other.path[i].count;
        if (i + 1 == path.size() && path[i].kind == Segment::Kind::Anchor &&
            other.path[i].kind == Segment::Kind::Anchor && path[i].len == other.path[i].len)
            return path[i].count <= other.path[i].count;
        if (!(path[i] == other.path[i]))
            return false;
    }
    return true;
}

void Position::extend(const Segment& s)
{
    if (s.kind == Segment::Kind::Step && s.count == 0)
        return;
    if (s.kind == Segment::Kind::Step && !path.empty() && path.back().kind == Segment::Kind::Step)
        path.back().count += s.count;
    else
        path.push_back(s);
}

Position Position::parent() const
{
    Position p = *this;
    if (!p.path.empty())
        p.path.pop_back();
    return p;
}

std::string Position::serialize() const
{
    std::string out = std::to_string(event);
    char sep = ':';
    for (const auto& s : path) {
        char buf[96];
        switch (s.kind) {
        case Segment::Kind::Break:
            std::snprintf(buf, sizeof(buf), "b%llxx%llu", static_cast<unsigned long long>(s.addr),
                          static_cast<unsigned long long>(s.count));
            break;
        case Segment::Kind::Step:
            std::snprintf(buf, sizeof(buf), "s%llu", static_cast<unsigned long long>(s.count));
            break;
        case Segment::Kind::Watch:
            std::snprintf(buf, sizeof(buf), "w%llx.%u.%ux%llu", static_cast<unsigned long long>(s.addr), s.len,
                          static_cast<unsigned>(s.access), static_cast<unsigned long long>(s.count));
            break;
        case Segment::Kind::ToEvent:
            std::snprintf(buf, sizeof(buf), "e");
            break;
        case Segment::Kind::Anchor:
            std::snprintf(buf, sizeof(buf), "a%llu.%u.%llu", static_cast<unsigned long long>(s.addr), s.len,
                          static_cast<unsigned long long>(s.count));
            break;
        }
        out += sep;
        out += buf;
        sep = '/';
    }
    return out;
}

std::optional<Position> Position::parse(const std::string& text)
{
    Position p;
    size_t colon = text.find(':');
    std::string head = text.substr(0, colon);
    if (head.empty() || head.find_first_not_of("0123456789") != std::string::npos)
        return std::nullopt;
    p.event = std::stoull(head);
    if (colon == std::string::npos)
        return p;
    std::string rest = text.substr(colon + 1);
    size_t start = 0;
    while (start <= rest.size()) {
        size_t end = rest.find('/', start);
        std::string seg = rest.substr(start, end == std::string::npos ? std::string::npos : end - start);
        unsigned long long addr = 0, count = 0;
        unsigned len = 0, access = 0;
        int used = 0;
        Segment s;
        if (seg == "e")
            s = Segment::to_event();
        else if (std::sscanf(seg.c_str(), "a%llu.%u.%llu%n", &addr, &len, &count, &used) == 3 &&
                 used == int(seg.size()) && p.path.empty())
            s = Segment::anchor(addr, len, count);
        else if (std::sscanf(seg.c_str(), "b%llxx%llu%n", &addr, &count, &used) == 2 && used == int(seg.size()))
            s = Segment::brk(addr, count);
        else if (std::sscanf(seg.c_str(), "s%llu%n", &count, &used) == 1 && used == int(seg.size()))
            s = Segment::step(count);
        else if (std::sscanf(seg.c_str(), "w%llx.%u.%ux%llu%n", &addr, &len, &access, &count, &used) == 4 &&
                 used == int(seg.size()) && (access == 1 || access == 2))
            s = Segment::watch(addr, len, static_cast<uint8_t>(access), count);
        else
            return std::nullopt;
        if (s.kind != Segment::Kind::ToEvent && s.count == 0)
            return std::nullopt;
        p.path.push_back(s);
        if (end == std::string::npos)
            break;
        start = end + 1;
    }
    return p;
}

std::string Position::describe() const
{
    std::string out = "event " + std::to_string(event);
    for (const auto& s : path) {
        char buf[96];
        switch (s.kind) {
        case Segment::Kind::Break:
            std::snprintf(buf, sizeof(buf), " > %llu x %#llx", static_cast<unsigned long long>(s.count),
                          static_cast<unsigned long long>(s.addr));
            break;
        case Segment::Kind::Step:
            std::snprintf(buf, sizeof(buf), " > %llu steps", static_cast<unsigned long long>(s.count));
            break;
        case Segment::Kind::Watch:
            std::snprintf(buf, sizeof(buf), " > %llu writes to %#llx", static_cast<unsigned long long>(s.count),
                          static_cast<unsigned long long>(s.addr));
            break;
        case Segment::Kind::ToEvent:
            std::snprintf(buf, sizeof(buf), " > signal");
            break;
        case Segment::Kind::Anchor:
            std::snprintf(buf, sizeof(buf), " @ snapshot %llu", static_cast<unsigned long long>(s.addr));
            break;
        }
        out += buf;
    }
    return out;
}

} // namespace rw::perfclock
