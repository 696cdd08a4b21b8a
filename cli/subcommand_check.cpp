#include <algorithm>
#include <cstring>

#include "commands.h"

namespace rw::cli {

namespace {

size_t edit_distance(const std::string& a, const std::string& b)
{
    std::vector<size_t> row(b.size() + 1);
    for (size_t j = 0; j <= b.size(); j++)
        row[j] = j;
    for (size_t i = 1; i <= a.size(); i++) {
        size_t diagonal = row[0];
        row[0] = i;
        for (size_t j = 1; j <= b.size(); j++) {
            size_t above = row[j];
            row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
            diagonal = above;
        }
    }
    return row[b.size()];
}

} // namespace

std::string check_subcommand(const CLI::App& app, const std::vector<char*>& args)
{
    std::vector<std::string> names;
    for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
        names.push_back(sub->get_name());
    std::string list;
    for (const auto& n : names)
        list += (list.empty() ? "" : ", ") + n;
    if (args.size() < 2)
        return "which command? one of: " + list + " (rewind --help)";
    std::string word = args[1];
    if (word.empty() || word[0] == '-' || std::find(names.begin(), names.end(), word) != names.end())
        return "";
    auto nearest = std::min_element(names.begin(), names.end(), [&](const std::string& x, const std::string& y) {
        return edit_distance(word, x) < edit_distance(word, y);
    });
    std::string out = "unknown command '" + word + "'";
    if (nearest != names.end() && edit_distance(word, *nearest) <= std::max<size_t>(2, word.size() / 3))
        out += "; did you mean '" + *nearest + "'?";
    return out + " (commands: " + list + ")";
}

} // namespace rw::cli
