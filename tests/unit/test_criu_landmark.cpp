#include <doctest/doctest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include "criu_landmark.h"

using namespace rw::replay;

TEST_CASE("CRIU versions: landmarks need 4.1")
{
    CHECK(version_at_least("4.1.1", 4, 1));
    CHECK(version_at_least("4.2", 4, 1));
    CHECK(version_at_least("5.0", 4, 1));
    CHECK_FALSE(version_at_least("4.0", 4, 1));
    CHECK_FALSE(version_at_least("3.17.1", 4, 1));
    CHECK_FALSE(version_at_least("", 4, 1));
}

TEST_CASE("a landmark's description: pid, threads and descriptors")
{
    char tmpl[] = "/tmp/rewind-landmark-XXXXXX";
    std::filesystem::path dir = mkdtemp(tmpl);
    CHECK_THROWS_WITH_AS(read_landmark(dir), doctest::Contains("holds no landmark"), std::runtime_error);
    {
        std::ofstream out(dir / "landmark.txt");
        out << "pid 4242\ntid 4242\ntid 4250\nfd 0 /dev/null\nfd 1 pipe:[123]\nfd 3 /tmp/a file\n";
    }
    std::ofstream(dir / "pages-1.img") << "0123456789";
    LandmarkImage image = read_landmark(dir);
    CHECK(image.pid == 4242);
    CHECK(image.tids == std::vector<pid_t>{4242, 4250});
    CHECK(image.fds.at(1) == "pipe:[123]");
    CHECK(image.fds.at(3) == "/tmp/a file");
    CHECK(image.bytes == 10);
    std::filesystem::remove_all(dir);
}

TEST_CASE("restoring from a directory without a landmark says so")
{
    char tmpl[] = "/tmp/rewind-landmark-XXXXXX";
    std::filesystem::path dir = mkdtemp(tmpl);
    CHECK_THROWS_WITH_AS(RestoredLandmark::restore("/bin/true", dir, {}, 0), doctest::Contains("holds no landmark"),
                         std::runtime_error);
    std::filesystem::remove_all(dir);
}
