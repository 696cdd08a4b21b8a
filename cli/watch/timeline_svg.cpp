#include "timeline_svg.h"

#include <fmt/core.h>

#include <algorithm>
#include <cstdlib>

namespace rw::cli {
namespace {

constexpr int kTop = 60, kHeight = 640, kLaneWidth = 160, kLeft = 90, kLabelWidth = 560, kLineHeight = 14;
constexpr size_t kLongestLabel = 90;

} // namespace

std::string svg_escaped(const std::string& s)
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

TimelineSvg::TimelineSvg(std::string title, uint64_t total_events, std::vector<std::string> lanes)
    : title_(std::move(title)), total_(std::max<uint64_t>(total_events, 1)), lanes_(std::move(lanes))
{
    if (lanes_.empty())
        lanes_.push_back("");
}

int TimelineSvg::lane_x(size_t lane) const
{
    return kLeft + kLaneWidth * static_cast<int>(lane) + kLaneWidth / 2;
}

void TimelineSvg::dot(size_t lane, const std::string& position, const std::string& colour, const std::string& label)
{
    uint64_t event = std::min<uint64_t>(std::strtoull(position.c_str(), nullptr, 10), total_);
    auto it = std::find_if(per_event_.begin(), per_event_.end(), [&](auto& p) { return p.first == event; });
    if (it == per_event_.end())
        it = per_event_.insert(per_event_.end(), {event, 0});
    int y = kTop + static_cast<int>(kHeight * event / total_) + 3 * it->second++;
    dots_.push_back({std::min(lane, lanes_.size() - 1), position, colour, label, y});
}

std::string TimelineSvg::str() const
{
    int width = kLeft + kLaneWidth * static_cast<int>(lanes_.size()) + kLabelWidth;
    std::string body = fmt::format("<text x=\"10\" y=\"24\" font-size=\"15\">{}</text>\n", svg_escaped(title_));
    body += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"#888\"/>\n", kLeft - 20, kTop,
                        kTop + kHeight);
    for (int k = 0; k <= 4; k++) {
        uint64_t e = total_ * static_cast<uint64_t>(k) / 4;
        body += fmt::format("<text x=\"10\" y=\"{}\" fill=\"#666\">event {}</text>\n",
                            kTop + static_cast<int>(kHeight * e / total_) + 4, e);
    }
    for (size_t lane = 0; lane < lanes_.size(); lane++) {
        body += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"#ddd\"/>\n", lane_x(lane), kTop,
                            kTop + kHeight);
        body += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", lane_x(lane), kTop - 8,
                            svg_escaped(lanes_[lane]));
    }
    // Labels go down the right side in time order, each joined to its dot.
    std::vector<size_t> order(dots_.size());
    for (size_t i = 0; i < order.size(); i++)
        order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return dots_[a].y < dots_[b].y; });
    int label_x = kLeft + kLaneWidth * static_cast<int>(lanes_.size()) + 10, label_y = kTop;
    for (size_t i : order) {
        const Dot& d = dots_[i];
        int x = lane_x(d.lane);
        std::string label = d.label.size() > kLongestLabel ? d.label.substr(0, kLongestLabel - 3) + "..." : d.label;
        int ly = std::max(label_y, d.y + 4);
        label_y = ly + kLineHeight;
        body +=
            fmt::format("<circle class=\"dot\" cx=\"{}\" cy=\"{}\" r=\"5\" fill=\"{}\"><title>{}</title></circle>\n", x,
                        d.y, d.colour, svg_escaped(d.position));
        body += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#eee\"/>\n", x + 6, d.y,
                            label_x - 2, ly - 4);
        body += fmt::format("<text x=\"{}\" y=\"{}\">{}</text>\n", label_x, ly, svg_escaped(label));
    }
    if (!connect_.empty() && dots_.size() > 1) {
        std::string path;
        for (const Dot& d : dots_)
            path += fmt::format("{}{},{}", path.empty() ? "M" : " L", lane_x(d.lane), d.y);
        body += fmt::format("<path d=\"{}\" fill=\"none\" stroke=\"{}\" stroke-opacity=\"0.4\"/>\n", path, connect_);
    }
    // (As tall as the labels need: dots crowd where much happens at once.)
    int height = std::max(kTop + kHeight + 40, label_y + 20);
    return fmt::format("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" "
                       "font-family=\"monospace\" font-size=\"11\">\n",
                       width, height) +
           body + "</svg>\n";
}

} // namespace rw::cli
