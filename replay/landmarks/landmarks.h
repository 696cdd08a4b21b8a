// Persistent landmarks of a trace: the replayed world saved at an event
// boundary into TRACE/landmarks/<n>/ (CRIU images of a copy of each
// replayed process, plus a manifest), so a later replay can start there
// instead of at the program's first instruction.
//
// A landmark is made from an in-memory snapshot: its fork copies are what
// CRIU dumps (single-threaded, so the other threads of a process come back
// as a snapshot restore makes them: by clone, from the saved registers and
// thread state). Loading restores the copies into a new pid and mount
// namespace (with the trace's files mounted as the replay had them) and
// gives back an ordinary ReplaySnapshot, which Replayer::restore uses.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "criu_landmark.h"
#include "landmark_manifest.h"
#include "position.h"
#include "replayer.h"
#include "snapshot_source.h"
#include "timeline.h"

namespace rw::replay {

// The identity a landmark records of its trace.
std::string trace_identity(const Trace& trace);
std::string trace_identity(const TraceMeta& meta);

struct LandmarkEntry {
    std::filesystem::path dir;
    std::string name; // its directory's name
    std::optional<LandmarkManifest> manifest;
    std::string problem; // why it cannot be used (then no manifest)
};

// The landmarks of a trace, by position (the unusable ones, with their
// problem, first). Reads the manifests only; the images are checked when
// loaded or by verify_landmark.
std::vector<LandmarkEntry> list_landmarks(const Trace& trace);

// Everything that is wrong with a landmark (empty: intact): its manifest,
// its trace, each image file's presence, size and checksum.
std::vector<std::string> verify_landmark(const Trace& trace, const LandmarkEntry& entry);

// Saves the replayed world at its current event boundary into `dir`
// (created, must not exist). The replayer must be able to snapshot
// (can_snapshot). Throws ReplayError or std::runtime_error; the replay
// goes on unchanged either way.
LandmarkManifest write_landmark(Replayer& replayer, const std::filesystem::path& dir, const std::string& criu);

// Completes a landmark written into `partial`: lists and hashes the image
// files of m.processes into the manifest, writes it (signed), makes the
// files private, and renames `partial` to `dir`.
void seal_landmark(const std::filesystem::path& partial, const std::filesystem::path& dir, LandmarkManifest& m);

struct LoadedLandmark {
    // The restored processes; they must outlive both the snapshot and every
    // replayed world made from it (killing one kills its namespace).
    std::vector<RestoredLandmark> copies;
    std::unique_ptr<ReplaySnapshot> snapshot;
    perfclock::Position position;
    std::chrono::duration<double> restore_time{};
};

// Checks a landmark and restores its processes. Throws std::runtime_error
// saying why it cannot be used; the replayer is not touched. A landmark
// this user's key did not sign is refused unless `trust_unsigned`.
LoadedLandmark load_landmark(Replayer& replayer, const LandmarkEntry& entry, const std::string& criu,
                             bool trust_unsigned = false);

// The landmarks a replay may start from, loaded when first needed. Owns
// what it loaded, so it must be destroyed after the replayer.
class LandmarkSet : public SnapshotSource {
public:
    // `say` receives the messages about landmarks skipped (one line each).
    // Landmarks this user's key did not sign are skipped, unless
    // `trust_unsigned` (rewind replay --trust-landmarks). Without
    // `use_landmarks` (--no-landmarks), only the start image of an attached
    // trace is used.
    LandmarkSet(const Trace& trace, std::function<void(const std::string&)> say, bool trust_unsigned = false,
                bool use_landmarks = true);
    bool empty() const { return entries_.empty(); }
    size_t size() const { return entries_.size(); }

    // A landmark that fails to load is skipped, with a message, for the
    // next earlier one.
    const Timeline::Entry* bring_in(const perfclock::Position& target, const perfclock::Position& after,
                                    Timeline& timeline, Replayer& replayer) override;
    void failed(const Timeline::Entry& entry, const std::string& why) override;
    bool owns(const Timeline::Entry& entry) const override;
    const Timeline::Entry& beginning(Timeline& timeline, Replayer& replayer) override;

private:
    struct Slot {
        LandmarkEntry entry;
        bool tried = false;
        const Timeline::Entry* loaded = nullptr;
        std::vector<RestoredLandmark> copies;
    };
    const Trace& trace_;
    std::function<void(const std::string&)> say_;
    std::string criu_;
    bool trust_unsigned_ = false;
    std::vector<Slot> entries_;           // usable ones, by position
    std::vector<RestoredLandmark> start_; // the start image's processes, once loaded
};

} // namespace rw::replay
