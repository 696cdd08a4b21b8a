#include "position.h"

#include <cstdio>

namespace rw::replay {

bool Position::at_or_before(const Position& other) const
{
    if (event != other.event)
        return event < other.event;
    if (path.size() > other.path.size())
        return false;
    for (size_t i = 0; i < path.size(); i++) {
        if (i + 1 == path.size() && path[i].kind == Segment::Kind::Step && other.path[i].kind == Segment::Kind::Step)
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
        }
        out += buf;
    }
    return out;
}

} // namespace rw::replay
