#include "origin_svg.h"

#include <fmt/core.h>

#include <map>

#include "timeline_svg.h"

namespace rw::cli {

std::string origin_svg(const std::string& expr, const OriginChain& chain, uint64_t total_events)
{
    // Lanes in the order threads first appear going back; an event's hop
    // takes the lane of the hop after it (the thread that asked).
    std::map<int64_t, size_t> lanes;
    std::vector<std::string> names;
    std::vector<size_t> lane_of_hop;
    int64_t last = 0;
    for (const OriginHop& h : chain.hops) {
        int64_t t = h.thread ? h.thread : last;
        if (!lanes.count(t)) {
            lanes.emplace(t, names.size());
            names.push_back(fmt::format("thread {}", t));
        }
        lane_of_hop.push_back(lanes[t]);
        last = t;
    }
    TimelineSvg svg(fmt::format("where {} came from: {} hops, {}", expr, chain.hops.size(), chain.ends), total_events,
                    names);
    // The earliest hop first: the dots are joined in time order.
    for (size_t k = chain.hops.size(); k-- > 0;) {
        const OriginHop& h = chain.hops[k];
        std::string colour = h.kind == "event" || h.kind == "constant" || h.kind == "start" ? "#c0392b"
                             : h.kind == "unfollowed"                                       ? "#888"
                                                                                            : "#2c6fbb";
        std::string file = h.place.file.substr(h.place.file.rfind('/') + 1);
        std::string where = !file.empty() ? fmt::format("{}:{}", file, h.place.line) : h.place.function;
        svg.dot(lane_of_hop[k], h.position, colour, fmt::format("{}. {} {}: {}", k + 1, h.kind, where, h.what));
    }
    svg.connect("#2c6fbb");
    return svg.str();
}

} // namespace rw::cli
