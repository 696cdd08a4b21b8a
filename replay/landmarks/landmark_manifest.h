// The description of a persistent landmark (TRACE/landmarks/<n>/manifest.json):
// where in the replay it was taken, the replayer's bookkeeping at that
// moment (what an in-memory snapshot keeps beside its process copies), the
// trace files the replay had mounted, and the size and xxh3-128 of every
// file of the landmark. The manifest carries a checksum of itself, so a
// damaged or edited manifest is refused like a damaged image, and a MAC
// with this user's landmark key (landmark_key.h), so a landmark made
// anywhere else is known as such.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "mount_view.h"
#include "position.h"
#include "snapshot.h"

namespace rw::replay {

inline constexpr const char* kLandmarksDir = "landmarks";
inline constexpr const char* kManifestName = "manifest.json";

struct LandmarkFile {
    std::string path; // relative to the landmark's directory
    uint64_t size = 0;
    std::string xxh3;   // of the content, hex: damage
    std::string sha256; // of the content, hex: what the MAC covers
    bool operator==(const LandmarkFile&) const = default;
};

struct LandmarkManifest {
    static constexpr int kFormat = 1;

    perfclock::Position position; // exactly where the landmark stands (an event boundary)
    uint64_t trace_events = 0;    // how many events the trace has (a landmark of another trace is refused)
    std::string trace_id;         // the trace's recording identity, from meta.json
    std::vector<MountedFile> mounts;
    // One CRIU image directory per process copy, in the order of the
    // snapshot's tasks that have a copy (TaskCopy::pid != 0).
    std::vector<std::string> processes;
    std::vector<LandmarkFile> files;
    nlohmann::json state; // the replayer's bookkeeping: snapshot_state_to_json
    double dump_seconds = 0;
    uint64_t image_bytes = 0;

    // Read from a manifest: whether this user's landmark key signed it
    // (rewind made it on this machine for this user); if not, why not.
    bool authentic = false;
    std::string not_authentic;

    // Signed with `key` if given.
    nlohmann::json to_json(const class LandmarkKey* key = nullptr) const;
    // Throws std::runtime_error naming what is wrong (and the checksum).
    // Checks the MAC with this user's key (authentic, not_authentic).
    static LandmarkManifest from_json(const nlohmann::json& j);
};

// One thread and one process of a snapshot, as snapshot_state_to_json
// writes them (`copy`: the index of its process copy, or -1 for a thread
// made again by clone).
nlohmann::json task_copy_to_json(const ReplaySnapshot::TaskCopy& t, int copy);
nlohmann::json group_copy_to_json(const ReplaySnapshot::GroupCopy& g);

// The bookkeeping of a snapshot as JSON: everything but the process copies,
// which are named by their index among the tasks that have one.
nlohmann::json snapshot_state_to_json(const ReplaySnapshot& snap);
// Fills `snap` from the JSON; `copies` are the processes that stand for the
// copies, in the same order. Throws std::runtime_error on malformed input.
void snapshot_state_from_json(const nlohmann::json& j, const std::vector<pid_t>& copies, ReplaySnapshot& snap);

// The size and content hash of a file. Throws std::system_error.
LandmarkFile describe_file(const std::filesystem::path& dir, const std::string& relative);

// Writes the manifest (with its checksum, signed with this user's landmark
// key, made if there is none) atomically into `dir`.
void write_manifest(const std::filesystem::path& dir, const LandmarkManifest& m);
// Reads and checks the manifest of `dir` (its own checksum, not the files').
// Throws std::runtime_error saying what is wrong.
LandmarkManifest read_manifest(const std::filesystem::path& dir);
// Checks every file the manifest lists: present, same size, same hashes.
// Returns what is wrong, one entry per problem (empty: intact).
std::vector<std::string> verify_files(const std::filesystem::path& dir, const LandmarkManifest& m);

} // namespace rw::replay
