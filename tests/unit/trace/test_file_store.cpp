// The trace's copies of mapped files: a sparse file (a 100 GB mapping with
// two pages written) is copied and hashed by its data, its holes staying
// holes, under the same content hash as the bytes it reads as.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "file_store.h"

using namespace rw;
namespace fs = std::filesystem;

namespace {

struct TempDir {
    fs::path dir;
    TempDir()
    {
        char tmpl[] = "/tmp/rwtest-file-store-XXXXXX";
        dir = ::mkdtemp(tmpl);
    }
    ~TempDir() { fs::remove_all(dir); }
};

void write_at(const fs::path& path, const std::string& bytes, off_t at)
{
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT, 0600);
    REQUIRE(fd >= 0);
    REQUIRE(::pwrite(fd, bytes.data(), bytes.size(), at) == static_cast<ssize_t>(bytes.size()));
    ::close(fd);
}

} // namespace

TEST_CASE("a sparse file is stored with its holes, under the hash of the bytes it reads as")
{
    TempDir t;
    const off_t far = off_t(48) << 20;
    fs::path sparse = t.dir / "sparse", dense = t.dir / "dense";
    write_at(sparse, "head", 0);
    write_at(sparse, "tail", far);
    // The same bytes with every zero written out.
    std::string all(static_cast<size_t>(far) + 4, '\0');
    all.replace(0, 4, "head");
    all.replace(static_cast<size_t>(far), 4, "tail");
    write_at(dense, all, 0);

    std::string h = FileStore::hash_file(sparse);
    CHECK(h == FileStore::hash_file(dense));

    fs::create_directories(t.dir / "files");
    FileStore store(t.dir / "files");
    CHECK(store.store_path(sparse) == h);
    fs::path copy = store.path_of(h);
    struct stat st {};
    REQUIRE(::stat(copy.c_str(), &st) == 0);
    CHECK(st.st_size == far + 4);
    CHECK(st.st_blocks * 512 < (off_t(1) << 20)); // the hole is not written
    CHECK(FileStore::hash_file(copy) == h);
    CHECK(store.bytes_stored() < 1u << 20);
}
