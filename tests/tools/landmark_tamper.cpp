// Landmarks that are wrong in ways a replay must catch.
//
//   landmark_tamper LANDMARK_DIR POINTER VALUE
//     Changes one value of a landmark's replayer state (manifest.json's
//     "state", by JSON pointer) and writes the manifest back with a valid
//     checksum: intact by its checksums but wrong, so its restore must
//     fail or its replay diverge, and say so.
//     e.g. landmark_tamper TRACE/landmarks/1 /tasks/0/regs/16 0x1000
//
//   landmark_tamper --forge TRACE_DIR NAME EVENT
//     Makes TRACE/landmarks/NAME at EVENT out of nothing: one process
//     whose "image" is random bytes, a manifest consistent in every
//     checksum and naming the trace, signed with the landmark key of
//     whoever runs this (run it with another XDG_CONFIG_HOME: a landmark
//     from another machine).
#include <sys/random.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <string>

#include "landmark_manifest.h"
#include "landmarks.h"
#include "trace.h"

namespace {

int forge(const std::filesystem::path& trace_dir, const std::string& name, uint64_t event)
{
    namespace fs = std::filesystem;
    rw::Trace trace(trace_dir);
    fs::path dir = trace_dir / rw::replay::kLandmarksDir / name;
    fs::create_directories(dir / "p0");
    std::string bytes(4096, '\0');
    if (getrandom(bytes.data(), bytes.size(), 0) != static_cast<ssize_t>(bytes.size()))
        return 1;
    std::ofstream(dir / "p0" / "core-1.img", std::ios::binary) << bytes;
    rw::replay::LandmarkManifest m;
    m.position = rw::perfclock::Position{event, {}};
    m.trace_events = trace.end() ? trace.end()->events : 0;
    m.trace_id = rw::replay::trace_identity(trace);
    m.processes = {"p0"};
    m.files = {rw::replay::describe_file(dir, "p0/core-1.img")};
    m.state = nlohmann::json::object();
    m.image_bytes = bytes.size();
    rw::replay::write_manifest(dir, m);
    return 0;
}

} // namespace

int main(int argc, char** argv)
{
    try {
        if (argc == 5 && std::string(argv[1]) == "--forge")
            return forge(argv[2], argv[3], std::strtoull(argv[4], nullptr, 0));
        if (argc != 4) {
            std::fprintf(stderr, "usage: landmark_tamper LANDMARK_DIR POINTER VALUE\n"
                                 "       landmark_tamper --forge TRACE_DIR NAME EVENT\n");
            return 2;
        }
        auto m = rw::replay::read_manifest(argv[1]);
        nlohmann::json::json_pointer at(argv[2]);
        if (!m.state.contains(at) || !m.state[at].is_number_unsigned()) {
            std::fprintf(stderr, "landmark_tamper: the state has no number at %s\n", argv[2]);
            return 2;
        }
        m.state[at] = std::strtoull(argv[3], nullptr, 0);
        rw::replay::write_manifest(argv[1], m);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "landmark_tamper: %s\n", e.what());
        return 1;
    }
    return 0;
}
