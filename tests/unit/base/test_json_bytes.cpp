#include <doctest/doctest.h>

#include "json_bytes.h"

using namespace rw;

TEST_CASE("byte strings survive JSON whatever their encoding")
{
    for (std::string s : {std::string("plain"), std::string("caf\xc3\xa9"), std::string("caf\xe9"),
                          std::string("\xff\xfe"), std::string("a\0b", 3), std::string(""), std::string("\xed\xa0\x80"),
                          std::string("\xc0\xaf"), std::string("\xf4\x90\x80\x80")}) {
        nlohmann::json j = bytes_to_json(s);
        CHECK(j.is_string() == is_valid_utf8(s));
        CHECK(bytes_from_json(nlohmann::json::parse(dump_for_display(j))) == s);
    }
    CHECK(is_valid_utf8("caf\xc3\xa9"));
    CHECK_FALSE(is_valid_utf8("\xed\xa0\x80")); // a surrogate
    CHECK_FALSE(is_valid_utf8("\xc0\xaf"));     // overlong
    CHECK_FALSE(is_valid_utf8("\xe2\x82"));     // cut short
    CHECK_THROWS(bytes_from_json(nlohmann::json{{"hex", "abc"}}));
    CHECK_THROWS(bytes_from_json(nlohmann::json{{"hex", "zz"}}));
    auto list = std::vector<std::string>{"x", "\xff"};
    CHECK(bytes_list_from_json(bytes_list_to_json(list)) == list);
}
