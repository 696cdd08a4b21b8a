// Strings that are bytes, not text (command lines, environments, paths),
// in JSON: a JSON string when they are valid UTF-8, otherwise {"hex": …},
// so that nothing a program was given is lost or refused on the way to
// meta.json. Readers accept both forms.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace rw {

bool is_valid_utf8(const std::string& s);

nlohmann::json bytes_to_json(const std::string& s);
std::string bytes_from_json(const nlohmann::json& j);

nlohmann::json bytes_list_to_json(const std::vector<std::string>& list);
std::vector<std::string> bytes_list_from_json(const nlohmann::json& j);

// For text shown to people (dump, info --json): invalid bytes become U+FFFD.
std::string dump_for_display(const nlohmann::json& j, int indent = -1);

} // namespace rw
