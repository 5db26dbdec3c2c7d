/// The module cache's disk side on entries that are not what a cache entry can be: a folder, a
/// FIFO or an oversized file under an entry's name is rejected with the reason and never read
/// whole; a folder or FIFO is left in place, and storing over it fails with the system's reason.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <string>

#include "cuda_test_support.hpp"
#include "iron/core/error.hpp"
#include "iron/runtime/module_cache.hpp"

namespace iron::runtime {
namespace {

namespace fs = std::filesystem;
using cuda_test::TempDir;
using Outcome = BlobStore::Loaded::Outcome;

TEST(ModuleCacheEntries, AFolderUnderAnEntrysNameIsRejectedAndLeftAlone) {
  const TempDir dir;
  const BlobStore store(dir.path(), ".cubin");
  fs::create_directories(store.entry_path("k1") / "inside");
  const BlobStore::Loaded loaded = store.load("k1");
  EXPECT_EQ(loaded.outcome, Outcome::Rejected);
  EXPECT_EQ(loaded.why, "not a regular file (a directory); left in place");
  EXPECT_TRUE(fs::is_directory(store.entry_path("k1") / "inside"));
  try {
    store.store("k1", std::vector<std::byte>(8));
    FAIL() << "stored over a folder";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(store.entry_path("k1").string()), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(store.summary().entries, 0u);
  EXPECT_EQ(store.clear().entries, 0u);  // clear removes files only
  EXPECT_TRUE(fs::is_directory(store.entry_path("k1")));
}

TEST(ModuleCacheEntries, AFifoIsRejectedWithoutBlockingOnIt) {
  const TempDir dir;
  const BlobStore store(dir.path(), ".cubin");
  ASSERT_EQ(::mkfifo(store.entry_path("k1").c_str(), 0600), 0);
  const BlobStore::Loaded loaded = store.load("k1");
  EXPECT_EQ(loaded.outcome, Outcome::Rejected);
  EXPECT_EQ(loaded.why, "not a regular file; left in place");
  EXPECT_TRUE(fs::is_fifo(store.entry_path("k1")));
}

TEST(ModuleCacheEntries, AnOversizedEntryIsRejectedUnreadAndRemoved) {
  const TempDir dir;
  const BlobStore store(dir.path(), ".cubin");
  std::ofstream(store.entry_path("k1")) << "IRONBLOB";
  fs::resize_file(store.entry_path("k1"), kMaxEntryBytes + 1);  // sparse: no disk used
  const BlobStore::Loaded loaded = store.load("k1");
  EXPECT_EQ(loaded.outcome, Outcome::Rejected);
  EXPECT_EQ(loaded.why, fmt::format("{} bytes, larger than the {} an entry may have",
                                    kMaxEntryBytes + 1, kMaxEntryBytes));
  EXPECT_FALSE(fs::exists(store.entry_path("k1")));
  store.store("k1", std::vector<std::byte>(8));  // the key works again
  EXPECT_EQ(store.load("k1").outcome, Outcome::Hit);
}

}  // namespace
}  // namespace iron::runtime
