#include "json_bytes.h"

#include <cstdio>

namespace rw {

bool is_valid_utf8(const std::string& s)
{
    size_t i = 0;
    while (i < s.size()) {
        auto c = static_cast<unsigned char>(s[i]);
        size_t extra = c < 0x80 ? 0 : (c >> 5) == 0x6 ? 1 : (c >> 4) == 0xe ? 2 : (c >> 3) == 0x1e ? 3 : 4;
        if (extra == 4 || i + extra >= s.size() + (extra == 0 ? 1 : 0))
            return false;
        uint32_t cp = extra == 0 ? c : c & (0x3f >> extra);
        for (size_t k = 1; k <= extra; k++) {
            auto d = static_cast<unsigned char>(s[i + k]);
            if ((d & 0xc0) != 0x80)
                return false;
            cp = (cp << 6) | (d & 0x3f);
        }
        // No overlong forms, surrogates or code points past U+10FFFF.
        static const uint32_t smallest[] = {0, 0x80, 0x800, 0x10000};
        if (cp < smallest[extra] || (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
            return false;
        i += extra + 1;
    }
    return true;
}

nlohmann::json bytes_to_json(const std::string& s)
{
    if (is_valid_utf8(s))
        return s;
    std::string hex;
    char buf[3];
    for (unsigned char c : s) {
        std::snprintf(buf, sizeof buf, "%02x", c);
        hex += buf;
    }
    return nlohmann::json{{"hex", hex}};
}

std::string bytes_from_json(const nlohmann::json& j)
{
    if (j.is_string())
        return j.get<std::string>();
    std::string hex = j.at("hex").get<std::string>();
    if (hex.size() % 2)
        throw nlohmann::json::other_error::create(501, "odd hex string", &j);
    std::string out;
    for (size_t i = 0; i < hex.size(); i += 2) {
        auto digit = [&](char c) -> int {
            if (c >= '0' && c <= '9')
                return c - '0';
            if (c >= 'a' && c <= 'f')
                return c - 'a' + 10;
            throw nlohmann::json::other_error::create(501, "not a hex digit", &j);
        };
        out.push_back(static_cast<char>(digit(hex[i]) * 16 + digit(hex[i + 1])));
    }
    return out;
}

nlohmann::json bytes_list_to_json(const std::vector<std::string>& list)
{
    nlohmann::json out = nlohmann::json::array();
    for (const auto& s : list)
        out.push_back(bytes_to_json(s));
    return out;
}

std::vector<std::string> bytes_list_from_json(const nlohmann::json& j)
{
    std::vector<std::string> out;
    for (const auto& item : j)
        out.push_back(bytes_from_json(item));
    return out;
}

std::string dump_for_display(const nlohmann::json& j, int indent)
{
    return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

} // namespace rw
