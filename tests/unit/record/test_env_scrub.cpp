#include <doctest/doctest.h>

#include "env_scrub.h"

using rw::EnvScrub;

TEST_CASE("a scrubbed variable keeps its length, others are untouched")
{
    EnvScrub scrub({"TOKEN", "EMPTY"});
    CHECK(scrub.apply("TOKEN=s3cr3t") == "TOKEN=******");
    CHECK(scrub.apply("EMPTY=") == "EMPTY=");
    CHECK(scrub.apply("TOKENS=abc") == "TOKENS=abc"); // a name, not a prefix
    CHECK(scrub.apply("PATH=/usr/bin") == "PATH=/usr/bin");
    CHECK(scrub.apply("TOKEN") == "TOKEN"); // no '=': not a variable
    CHECK(scrub.apply("TOKEN=a=b") == "TOKEN=***");
    std::vector<std::string> envp = {"HOME=/root", "TOKEN=xyz"};
    scrub.apply(envp);
    CHECK(envp == std::vector<std::string>{"HOME=/root", "TOKEN=***"});
    CHECK(EnvScrub().empty());
}
