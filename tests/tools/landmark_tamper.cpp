// Changes one value of a landmark's replayer state (manifest.json's
// "state", by JSON pointer) and writes the manifest back with a valid
// checksum: a landmark intact by its checksums but wrong, whose restore
// must fail or whose replay must diverge, and say so.
//   landmark_tamper LANDMARK_DIR POINTER VALUE
//   e.g. landmark_tamper TRACE/landmarks/1 /tasks/0/regs/16 0x1000
#include <cstdio>
#include <cstdlib>
#include <exception>

#include "landmark_manifest.h"

int main(int argc, char** argv)
{
    if (argc != 4) {
        std::fprintf(stderr, "usage: landmark_tamper LANDMARK_DIR POINTER VALUE\n");
        return 2;
    }
    try {
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
