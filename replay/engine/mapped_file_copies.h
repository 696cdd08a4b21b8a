// The files replayed processes map from copies of the replay's own, one per
// file (device and inode): every mapping of a file then shares its pages as
// in the recording (two processes, or two mappings in one, that see each
// other's stores), and the calls that wrote or resized the file through a
// descriptor while it was mapped (kSyscallMappedWrite), which replay
// otherwise emulates, change the copy as the kernel changed the file. The
// trace's own copies stay untouched.
//
// Shared mappings always map such a copy; private ones only for the files
// the recording changed while they were mapped (TraceEnd), whose pages a
// private mapping shows until it writes them.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "event.h"
#include "trace_meta.h"
#include "unique_fd.h"

namespace rw::replay {

class MappedFileCopies {
public:
    MappedFileCopies() = default;
    ~MappedFileCopies();
    MappedFileCopies(const MappedFileCopies&) = delete;
    MappedFileCopies& operator=(const MappedFileCopies&) = delete;

    // The path to map for `file`, whose content when the recording mapped
    // it is the trace's copy at `recorded`: the replay's copy, made from it
    // the first time, and brought to it again where it differs (the file
    // changed while nothing mapped it, through writes nobody saw mapped).
    // Throws std::runtime_error saying why it cannot be made.
    std::string path_for(const FileRef& file, const std::filesystem::path& recorded);

    // A call that wrote or resized a mapped file (kSyscallMappedWrite): the
    // replay's copy of that file, if it has one, changes as the file did.
    // Throws std::runtime_error if it cannot (the trace kept only a hash of
    // the bytes written).
    void apply(const SyscallEvent& e);

    bool empty() const { return copies_.empty(); }

    // The content of every copy, for a snapshot of the replayed world: its
    // processes' mappings of these files share their pages with the live
    // ones, so a restore puts the content back.
    using Contents = std::map<FileIdentity, std::vector<uint8_t>>;
    Contents save() const;
    void restore(const Contents& contents);

private:
    struct Copy {
        std::string path;
        UniqueFd fd;
    };
    std::filesystem::path dir_; // made at the first copy, removed with them
    std::map<FileIdentity, Copy> copies_;
};

} // namespace rw::replay
