// The key that says a landmark was made by rewind on this machine for this
// user. A landmark is a set of CRIU images that a replay restores as root:
// one crafted elsewhere could restore anything CRIU can (mounts,
// credentials, files), and the checksums of its manifest only prove that
// it is self-consistent. So rewind signs every manifest it writes with a
// per-user key kept outside traces, and uses only landmarks it can verify
// (unless told --trust-landmarks).
//
// The key: 32 random bytes in $XDG_CONFIG_HOME/rewind/landmark.key (else
// ~/.config/… of the effective user), mode 0600, owned by that user.
#pragma once

#include <cstddef>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace rw::replay {

class LandmarkKey {
public:
    // Where this user's key is (it may not exist).
    static std::filesystem::path path();
    // This user's key, made now if there is none. Throws std::runtime_error.
    static LandmarkKey mine_or_new();
    // This user's key; nullopt if there is none or it cannot be trusted,
    // with the reason in *why.
    static std::optional<LandmarkKey> mine(std::string* why);

    // HMAC-SHA256 of `text`, in hex.
    std::string sign(std::string_view text) const;
    // Whether `mac` is sign(text) (compared in constant time).
    bool verifies(std::string_view text, std::string_view mac) const;

private:
    explicit LandmarkKey(std::string bytes) : bytes_(std::move(bytes)) {}
    std::string bytes_;
};

// SHA-256 of everything `fd` holds from its current offset, in hex. Each
// piece read is also handed to `also` (another hash of the same single
// read). Throws std::system_error.
std::string sha256_of_fd(int fd, const std::function<void(const char*, size_t)>& also = {});

} // namespace rw::replay
