// Changes one register of a landmark's first process in its manifest and
// writes the manifest back with a valid checksum: a landmark that is intact
// by its checksums but wrong, whose replay must then diverge (and say so).
//   landmark_tamper LANDMARK_DIR REGISTER_INDEX VALUE
#include <cstdio>
#include <cstdlib>
#include <exception>

#include "landmark_manifest.h"

int main(int argc, char** argv)
{
    if (argc != 4) {
        std::fprintf(stderr, "usage: landmark_tamper LANDMARK_DIR REGISTER_INDEX VALUE\n");
        return 2;
    }
    try {
        auto m = rw::replay::read_manifest(argv[1]);
        auto& regs = m.state.at("tasks").at(0).at("regs");
        size_t index = std::strtoul(argv[2], nullptr, 0);
        if (index >= regs.size()) {
            std::fprintf(stderr, "landmark_tamper: no register %zu\n", index);
            return 2;
        }
        regs[index] = std::strtoull(argv[3], nullptr, 0);
        rw::replay::write_manifest(argv[1], m);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "landmark_tamper: %s\n", e.what());
        return 1;
    }
    return 0;
}
