#include "origin_svg.h"

#include <fmt/core.h>

#include <algorithm>
#include <map>

namespace rw::cli {
namespace {

constexpr int kTop = 60, kHeight = 640, kLaneWidth = 160, kLeft = 90, kLabelWidth = 560;

std::string escaped(const std::string& s)
{
    std::string out;
    for (char c : s) {
        switch (c) {
        case '&':
            out += "&amp;";
            break;
        case '<':
            out += "&lt;";
            break;
        case '>':
            out += "&gt;";
            break;
        case '"':
            out += "&quot;";
            break;
        default:
            out += c;
        }
    }
    return out;
}

uint64_t event_of(const std::string& position)
{
    return std::strtoull(position.c_str(), nullptr, 10);
}

} // namespace

std::string origin_svg(const std::string& expr, const OriginChain& chain, uint64_t total_events)
{
    // Lanes in the order threads first appear going back; an event's hop
    // takes the lane of the hop after it (the thread that asked).
    std::map<int64_t, int> lanes;
    std::vector<int64_t> lane_of_hop;
    int64_t last = 0;
    for (const OriginHop& h : chain.hops) {
        int64_t t = h.thread ? h.thread : last;
        if (!lanes.count(t))
            lanes.emplace(t, static_cast<int>(lanes.size()));
        lane_of_hop.push_back(t);
        last = t;
    }
    int width = kLeft + kLaneWidth * std::max<int>(1, static_cast<int>(lanes.size())) + kLabelWidth;
    // Hops of one stretch share its y: spread them along it, in time order.
    uint64_t total = std::max<uint64_t>(total_events, 1);
    auto y_of_event = [&](uint64_t e) { return kTop + static_cast<int>(kHeight * std::min(e, total) / total); };
    std::string svg = fmt::format("<text x=\"10\" y=\"24\" font-size=\"15\">where {} came from: {} hops, {}</text>\n",
                                  escaped(expr), chain.hops.size(), escaped(chain.ends));
    // The time axis: events.
    svg += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"#888\"/>\n", kLeft - 20, kTop,
                       kTop + kHeight);
    for (int k = 0; k <= 4; k++) {
        uint64_t e = total * static_cast<uint64_t>(k) / 4;
        svg += fmt::format("<text x=\"10\" y=\"{}\" fill=\"#666\">event {}</text>\n", y_of_event(e) + 4, e);
    }
    for (const auto& [thread, lane] : lanes) {
        int x = kLeft + kLaneWidth * lane + kLaneWidth / 2;
        svg += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"#ddd\"/>\n", x, kTop,
                           kTop + kHeight);
        svg += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">thread {}</text>\n", x, kTop - 8, thread);
    }
    // Hops in one stretch are spread over a few pixels in time order (the
    // chain lists the latest first).
    std::map<uint64_t, int> in_stretch;
    int label_y = kTop;
    std::string path;
    for (size_t k = chain.hops.size(); k-- > 0;) {
        const OriginHop& h = chain.hops[k];
        uint64_t e = event_of(h.position);
        int y = y_of_event(e) + 3 * in_stretch[e]++;
        int x = kLeft + kLaneWidth * lanes[lane_of_hop[k]] + kLaneWidth / 2;
        path += fmt::format("{}{},{}", path.empty() ? "M" : " L", x, y);
        std::string colour = h.kind == "event" || h.kind == "constant" || h.kind == "start" ? "#c0392b"
                             : h.kind == "unfollowed"                                       ? "#888"
                                                                                            : "#2c6fbb";
        svg += fmt::format("<circle class=\"hop\" cx=\"{}\" cy=\"{}\" r=\"5\" fill=\"{}\"><title>{}</title></circle>\n",
                           x, y, colour, escaped(h.position));
        std::string file = h.place.file.substr(h.place.file.rfind('/') + 1);
        std::string where = !file.empty() ? fmt::format("{}:{}", file, h.place.line) : h.place.function;
        std::string label = fmt::format("{}. {} {}: {}", k + 1, h.kind, where, h.what);
        if (label.size() > 90)
            label = label.substr(0, 87) + "...";
        int ly = std::max(label_y, y + 4);
        label_y = ly + 14;
        int lx = kLeft + kLaneWidth * static_cast<int>(std::max<size_t>(1, lanes.size())) + 10;
        svg +=
            fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#eee\"/>\n", x + 6, y, lx - 2, ly - 4);
        svg += fmt::format("<text x=\"{}\" y=\"{}\">{}</text>\n", lx, ly, escaped(label));
    }
    svg += fmt::format("<path d=\"{}\" fill=\"none\" stroke=\"#2c6fbb\" stroke-opacity=\"0.4\"/>\n", path);
    // (As tall as the labels need: hops crowd where the value travelled fast.)
    int height = std::max(kTop + kHeight + 40, label_y + 20);
    return fmt::format("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" "
                       "font-family=\"monospace\" font-size=\"11\">\n",
                       width, height) +
           svg + "</svg>\n";
}

} // namespace rw::cli
