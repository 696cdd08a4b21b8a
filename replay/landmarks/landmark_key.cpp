#include "landmark_key.h"

#include <fcntl.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <pwd.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <system_error>
#include <vector>

#include "unique_fd.h"

namespace rw::replay {
namespace fs = std::filesystem;

namespace {

constexpr size_t kKeyBytes = 32;

std::string hex(const unsigned char* p, size_t n)
{
    static const char* digits = "0123456789abcdef";
    std::string out;
    out.reserve(2 * n);
    for (size_t i = 0; i < n; i++) {
        out.push_back(digits[p[i] >> 4]);
        out.push_back(digits[p[i] & 15]);
    }
    return out;
}

// Reads the key at `file`: a regular file of exactly kKeyBytes, owned by
// the effective user and readable by nobody else. Empty, with *why, if not.
std::string read_key(const fs::path& file, std::string* why)
{
    UniqueFd fd(::open(file.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK));
    if (!fd) {
        *why = errno == ENOENT ? "this user has no landmark key (" + file.string() + ")"
                               : "cannot open the landmark key " + file.string() + ": " + std::strerror(errno);
        return "";
    }
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
        *why = "the landmark key " + file.string() + " is not a regular file";
        return "";
    }
    if (st.st_uid != ::geteuid() || (st.st_mode & 077) != 0) {
        *why = "the landmark key " + file.string() + " is not private to this user (owner and mode 0600)";
        return "";
    }
    std::string bytes(kKeyBytes + 1, '\0');
    ssize_t n = ::read(fd.get(), bytes.data(), bytes.size());
    if (n != static_cast<ssize_t>(kKeyBytes)) {
        *why = "the landmark key " + file.string() + " is damaged (" + std::to_string(n < 0 ? 0 : n) + " bytes, not " +
               std::to_string(kKeyBytes) + ")";
        return "";
    }
    bytes.resize(kKeyBytes);
    return bytes;
}

} // namespace

fs::path LandmarkKey::path()
{
    const char* xdg = std::getenv("XDG_CONFIG_HOME");
    fs::path config;
    if (xdg && xdg[0] == '/') {
        config = xdg;
    } else {
        // The effective user's home, not $HOME: under sudo that may be
        // another user's.
        struct passwd* pw = ::getpwuid(::geteuid());
        config = fs::path(pw && pw->pw_dir ? pw->pw_dir : "/") / ".config";
    }
    return config / "rewind" / "landmark.key";
}

std::optional<LandmarkKey> LandmarkKey::mine(std::string* why)
{
    std::string ignored;
    std::string bytes = read_key(path(), why ? why : &ignored);
    if (bytes.empty())
        return std::nullopt;
    return LandmarkKey(std::move(bytes));
}

LandmarkKey LandmarkKey::mine_or_new()
{
    fs::path file = path();
    std::string why;
    if (auto key = mine(&why))
        return *key;
    if (fs::exists(fs::symlink_status(file)))
        throw std::runtime_error(why + ": rewind signs the landmarks it makes with it; remove it to make a new one");
    std::error_code ec;
    fs::create_directories(file.parent_path(), ec);
    if (ec)
        throw std::runtime_error("cannot make " + file.parent_path().string() + ": " + ec.message());
    fs::permissions(file.parent_path(), fs::perms::owner_all, ec);
    unsigned char bytes[kKeyBytes];
    if (::getrandom(bytes, sizeof bytes, 0) != static_cast<ssize_t>(sizeof bytes))
        throw std::runtime_error(std::string("getrandom: ") + std::strerror(errno));
    // Written whole under a temporary name, then linked: another rewind
    // making its key at the same moment keeps the first one made.
    fs::path tmp = file.parent_path() / (".landmark.key." + std::to_string(::getpid()));
    UniqueFd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!fd || ::write(fd.get(), bytes, sizeof bytes) != static_cast<ssize_t>(sizeof bytes) || ::fsync(fd.get()) != 0) {
        int err = errno;
        ::unlink(tmp.c_str());
        throw std::runtime_error("cannot write the landmark key " + file.string() + ": " + std::strerror(err));
    }
    fd.reset();
    int linked = ::link(tmp.c_str(), file.c_str());
    int err = errno;
    ::unlink(tmp.c_str());
    if (linked != 0 && err != EEXIST)
        throw std::runtime_error("cannot make the landmark key " + file.string() + ": " + std::strerror(err));
    if (auto key = mine(&why))
        return *key;
    throw std::runtime_error(why);
}

std::string LandmarkKey::sign(std::string_view text) const
{
    unsigned char mac[EVP_MAX_MD_SIZE];
    size_t n = 0;
    if (!EVP_Q_mac(nullptr, "HMAC", nullptr, "SHA256", nullptr, bytes_.data(), bytes_.size(),
                   reinterpret_cast<const unsigned char*>(text.data()), text.size(), mac, sizeof mac, &n))
        throw std::runtime_error("HMAC-SHA256 is not available (OpenSSL)");
    return hex(mac, n);
}

bool LandmarkKey::verifies(std::string_view text, std::string_view mac) const
{
    std::string want = sign(text);
    return mac.size() == want.size() && CRYPTO_memcmp(mac.data(), want.data(), want.size()) == 0;
}

std::string sha256_of_fd(int fd, const std::function<void(const char*, size_t)>& also)
{
    std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> sha(EVP_MD_CTX_new(), EVP_MD_CTX_free);
    if (!sha || !EVP_DigestInit_ex(sha.get(), EVP_sha256(), nullptr))
        throw std::system_error(ENOMEM, std::generic_category(), "hashing");
    std::vector<char> buf(1 << 20);
    for (;;) {
        ssize_t n = ::read(fd, buf.data(), buf.size());
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            throw std::system_error(errno, std::generic_category(), "read");
        if (n == 0)
            break;
        EVP_DigestUpdate(sha.get(), buf.data(), static_cast<size_t>(n));
        if (also)
            also(buf.data(), static_cast<size_t>(n));
    }
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    EVP_DigestFinal_ex(sha.get(), digest, &len);
    return hex(digest, len);
}

} // namespace rw::replay
