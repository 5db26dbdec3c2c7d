/// Tests of the module cache's disk side, which needs no GPU: round trips, misses, damaged
/// entries rejected and removed, concurrent writers (threads and processes), the folder chosen
/// from the environment, the key, and the summary line.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <thread>

#include "cuda_test_support.hpp"
#include "iron/core/error.hpp"
#include "iron/runtime/module_cache.hpp"

namespace iron::runtime {
namespace {

namespace fs = std::filesystem;
using cuda_test::Contains;
using cuda_test::ScopedEnv;
using cuda_test::TempDir;
using Outcome = BlobStore::Loaded::Outcome;

constexpr std::size_t kHeaderBytes = 32;

std::vector<std::byte> blob_of(std::size_t size, std::uint8_t seed) {
  std::vector<std::byte> blob(size);
  for (std::size_t i = 0; i < size; ++i) blob[i] = static_cast<std::byte>(seed + i * 7);
  return blob;
}

std::vector<char> read_all(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_all(const fs::path& path, const std::vector<char>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::vector<std::string> names_in(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) {
    names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

/// Stores an entry, lets `damage` change the file's bytes, and loads it back.
BlobStore::Loaded load_damaged(const std::function<void(std::vector<char>&)>& damage) {
  const TempDir dir;
  const BlobStore store(dir.path(), ".cubin");
  store.store("k1", blob_of(100, 1));
  std::vector<char> file = read_all(store.entry_path("k1"));
  damage(file);
  write_all(store.entry_path("k1"), file);
  BlobStore::Loaded loaded = store.load("k1");
  EXPECT_FALSE(fs::exists(store.entry_path("k1"))) << "a rejected entry must be removed";
  EXPECT_TRUE(loaded.blob.empty());
  return loaded;
}

TEST(ModuleCacheStore, RoundTrip) {
  const TempDir dir;
  const BlobStore store(dir.path() / "nested" / "iron", ".cubin");
  const auto blob = blob_of(1000, 3);
  store.store("0123abcd", blob);
  EXPECT_EQ(store.entry_path("0123abcd"), dir.path() / "nested" / "iron" / "0123abcd.cubin");
  EXPECT_EQ(fs::file_size(store.entry_path("0123abcd")), kHeaderBytes + blob.size());
  const BlobStore::Loaded loaded = store.load("0123abcd");
  EXPECT_EQ(loaded.outcome, Outcome::Hit);
  EXPECT_EQ(loaded.blob, blob);
  EXPECT_EQ(names_in(store.dir()), std::vector<std::string>{"0123abcd.cubin"});  // no temp left
}

TEST(ModuleCacheStore, EmptyBlobRoundTrips) {
  const TempDir dir;
  const BlobStore store(dir.path(), ".cubin");
  store.store("empty", {});
  const BlobStore::Loaded loaded = store.load("empty");
  EXPECT_EQ(loaded.outcome, Outcome::Hit);
  EXPECT_TRUE(loaded.blob.empty());
}

TEST(ModuleCacheStore, StoreReplacesAnEntry) {
  const TempDir dir;
  const BlobStore store(dir.path(), ".cubin");
  store.store("k", blob_of(50, 1));
  store.store("k", blob_of(70, 2));
  EXPECT_EQ(store.load("k").blob, blob_of(70, 2));
}

TEST(ModuleCacheStore, MissingFileIsAMiss) {
  const TempDir dir;
  const BlobStore store(dir.path() / "not-created", ".cubin");
  const BlobStore::Loaded loaded = store.load("abc");
  EXPECT_EQ(loaded.outcome, Outcome::Miss);
  EXPECT_TRUE(loaded.why.empty());
}

TEST(ModuleCacheStore, TruncatedPayloadIsRejectedAndRemoved) {
  const auto loaded = load_damaged([](std::vector<char>& f) { f.resize(f.size() - 1); });
  EXPECT_EQ(loaded.outcome, Outcome::Rejected);
  EXPECT_EQ(loaded.why, "the header says 100 payload bytes, the file holds 99");
}

TEST(ModuleCacheStore, TruncatedHeaderIsRejectedAndRemoved) {
  const auto loaded = load_damaged([](std::vector<char>& f) { f.resize(20); });
  EXPECT_EQ(loaded.outcome, Outcome::Rejected);
  EXPECT_EQ(loaded.why, "truncated: 20 bytes, shorter than the 32-byte header");
}

TEST(ModuleCacheStore, EmptyFileIsRejected) {
  const auto loaded = load_damaged([](std::vector<char>& f) { f.clear(); });
  EXPECT_EQ(loaded.outcome, Outcome::Rejected);
}

TEST(ModuleCacheStore, ExtraBytesAreRejected) {
  const auto loaded = load_damaged([](std::vector<char>& f) { f.push_back('x'); });
  EXPECT_EQ(loaded.outcome, Outcome::Rejected);
  EXPECT_EQ(loaded.why, "the header says 100 payload bytes, the file holds 101");
}

TEST(ModuleCacheStore, BitFlipInThePayloadIsRejected) {
  const auto loaded = load_damaged([](std::vector<char>& f) { f[kHeaderBytes + 57] ^= 0x10; });
  EXPECT_EQ(loaded.outcome, Outcome::Rejected);
  EXPECT_EQ(loaded.why, "checksum mismatch");
}

TEST(ModuleCacheStore, BitFlipInTheChecksumIsRejected) {
  const auto loaded = load_damaged([](std::vector<char>& f) { f[24] ^= 0x01; });
  EXPECT_EQ(loaded.outcome, Outcome::Rejected);
  EXPECT_EQ(loaded.why, "checksum mismatch");
}

TEST(ModuleCacheStore, WrongMagicIsRejected) {
  const auto loaded = load_damaged([](std::vector<char>& f) { f[0] = 'X'; });
  EXPECT_EQ(loaded.outcome, Outcome::Rejected);
  EXPECT_EQ(loaded.why, "wrong magic");
}

TEST(ModuleCacheStore, OtherFormatVersionIsRejected) {
  const auto loaded = load_damaged([](std::vector<char>& f) { f[8] = 2; });
  EXPECT_EQ(loaded.outcome, Outcome::Rejected);
  EXPECT_EQ(loaded.why, "format version 2, expected 1");
}

TEST(ModuleCacheStore, HeaderLayout) {
  const TempDir dir;
  const BlobStore store(dir.path(), ".cubin");
  const auto blob = blob_of(3, 9);
  store.store("k", blob);
  const std::vector<char> file = read_all(store.entry_path("k"));
  ASSERT_EQ(file.size(), kHeaderBytes + 3);
  EXPECT_EQ(std::string(file.begin(), file.begin() + 8), "IRONBLOB");
  EXPECT_EQ(file[8], 1);   // format version, little-endian
  EXPECT_EQ(file[16], 3);  // payload size
  std::uint64_t checksum = 0;
  for (int i = 0; i < 8; ++i) {
    checksum |= std::uint64_t{static_cast<std::uint8_t>(file[24 + i])} << (8 * i);
  }
  EXPECT_EQ(checksum, fnv1a64(blob));
}

TEST(ModuleCacheStore, UnwritableFolderThrowsWithThePath) {
  const TempDir dir;
  write_all(dir.path() / "file", {'x'});
  const BlobStore store(dir.path() / "file" / "iron", ".cubin");
  try {
    store.store("k", blob_of(4, 0));
    FAIL() << "a store under a regular file succeeded";
  } catch (const Error& e) {
    EXPECT_TRUE(Contains(e.what(), "cannot create the cache folder " +
                                       (dir.path() / "file" / "iron").string() + ": "));
  }
}

TEST(ModuleCacheStore, ConcurrentThreadsLeaveOneValidEntry) {
  const TempDir dir;
  const BlobStore store(dir.path(), ".cubin");
  constexpr int kWriters = 6;
  constexpr int kRounds = 40;
  std::atomic<bool> writing{true};
  std::atomic<int> rejected{0};
  std::thread reader([&] {
    while (writing) {
      if (store.load("shared").outcome == Outcome::Rejected) ++rejected;
    }
  });
  {
    std::vector<std::jthread> writers;
    writers.reserve(kWriters);
    for (int w = 0; w < kWriters; ++w) {
      writers.emplace_back([&, w] {
        for (int r = 0; r < kRounds; ++r) store.store("shared", blob_of(4096 + w, w));
      });
    }
  }
  writing = false;
  reader.join();
  EXPECT_EQ(rejected, 0) << "a reader saw a partly written entry";
  const BlobStore::Loaded loaded = store.load("shared");
  ASSERT_EQ(loaded.outcome, Outcome::Hit);
  const auto w = static_cast<std::uint8_t>(loaded.blob.size() - 4096);
  EXPECT_EQ(loaded.blob, blob_of(4096 + w, w));
  EXPECT_EQ(names_in(dir.path()), std::vector<std::string>{"shared.cubin"});
}

TEST(ModuleCacheStore, ConcurrentProcessesLeaveOneValidEntry) {
  const TempDir dir;
  const BlobStore store(dir.path(), ".cubin");
  constexpr int kChildren = 4;
  std::vector<pid_t> children;
  for (int c = 0; c < kChildren; ++c) {
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      int status = 0;
      try {
        for (int r = 0; r < 40; ++r) store.store("shared", blob_of(8192 + c, c));
      } catch (...) {
        status = 1;
      }
      _exit(status);
    }
    children.push_back(pid);
  }
  for (int r = 0; r < 40; ++r) {
    EXPECT_NE(store.load("shared").outcome, Outcome::Rejected);
  }
  for (const pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  const BlobStore::Loaded loaded = store.load("shared");
  ASSERT_EQ(loaded.outcome, Outcome::Hit);
  const auto c = static_cast<std::uint8_t>(loaded.blob.size() - 8192);
  EXPECT_EQ(loaded.blob, blob_of(8192 + c, c));
  EXPECT_EQ(names_in(dir.path()), std::vector<std::string>{"shared.cubin"});
}

TEST(ModuleCacheStore, SummaryAndClear) {
  const TempDir dir;
  const BlobStore store(dir.path(), ".cubin");
  store.store("a", blob_of(10, 0));
  store.store("b", blob_of(20, 0));
  write_all(dir.path() / ".a.123.00000000000000ff.tmp", {'x'});  // left by a crashed writer
  write_all(dir.path() / "notes.txt", {'x'});                    // not the cache's
  write_all(dir.path() / ".notes.tmp", {'x'});                   // nor this
  write_all(dir.path() / "a.b.cubin", {'x'});                    // nor this: no key has a dot
  const BlobStore::Summary summary = store.summary();
  EXPECT_EQ(summary.entries, 2u);
  EXPECT_EQ(summary.bytes, 2 * kHeaderBytes + 30);
  const BlobStore::Summary removed = store.clear();
  EXPECT_EQ(removed.entries, 2u);
  EXPECT_EQ(removed.bytes, 2 * kHeaderBytes + 30);
  EXPECT_EQ(names_in(dir.path()),
            (std::vector<std::string>{".notes.tmp", "a.b.cubin", "notes.txt"}));
  EXPECT_EQ(store.summary().entries, 0u);
}

TEST(ModuleCacheStore, SummaryOfAMissingFolderIsEmpty) {
  const BlobStore store("/nonexistent/iron-cache", ".cubin");
  EXPECT_EQ(store.summary().entries, 0u);
  EXPECT_EQ(store.clear().entries, 0u);
}

TEST(ModuleCacheDir, ChosenFromTheEnvironment) {
  ScopedEnv iron("IRON_CACHE_DIR", "/tmp/explicit");
  ScopedEnv xdg("XDG_CACHE_HOME", "/xdg");
  ScopedEnv home("HOME", "/home/someone");
  ASSERT_TRUE(cache_dir());
  EXPECT_EQ(cache_dir()->path, "/tmp/explicit");
  EXPECT_EQ(cache_dir()->chosen_by, "$IRON_CACHE_DIR");
  {
    const ScopedEnv unset("IRON_CACHE_DIR", std::nullopt);
    EXPECT_EQ(cache_dir()->path, "/xdg/iron");
    EXPECT_EQ(cache_dir()->chosen_by, "$XDG_CACHE_HOME");
    {
      const ScopedEnv relative("XDG_CACHE_HOME", "relative/cache");  // ignored: not absolute
      EXPECT_EQ(cache_dir()->path, "/home/someone/.cache/iron");
      EXPECT_EQ(cache_dir()->chosen_by, "$HOME");
    }
    const ScopedEnv empty("XDG_CACHE_HOME", "");
    EXPECT_EQ(cache_dir()->path, "/home/someone/.cache/iron");
    const ScopedEnv no_home("HOME", std::nullopt);
    EXPECT_FALSE(cache_dir());
    EXPECT_FALSE(module_store());
  }
  ASSERT_TRUE(module_store());
  EXPECT_EQ(module_store()->entry_path("ab12"), "/tmp/explicit/ab12.cubin");
}

TEST(ModuleCacheKey, DependsOnEveryPart) {
  const std::string key = module_cache_key(42, "sm_90", "0.1.0", 13, 0, "source");
  EXPECT_EQ(key.size(), 16u);
  EXPECT_EQ(key.find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_EQ(key, module_cache_key(42, "sm_90", "0.1.0", 13, 0, "source"));
  const std::vector<std::string> others = {
      module_cache_key(43, "sm_90", "0.1.0", 13, 0, "source"),
      module_cache_key(42, "sm_80", "0.1.0", 13, 0, "source"),
      module_cache_key(42, "sm_90", "0.1.1", 13, 0, "source"),
      module_cache_key(42, "sm_90", "0.1.0", 12, 0, "source"),
      module_cache_key(42, "sm_90", "0.1.0", 13, 1, "source"),
      module_cache_key(42, "sm_90", "0.1.0", 13, 0, "source "),
      module_cache_key(42, "sm_9", "00.1.0", 13, 0, "source"),  // same bytes, other split
  };
  for (const std::string& other : others) EXPECT_NE(key, other);
}

TEST(ModuleCacheKey, Fnv1aMatchesTheReference) {
  EXPECT_EQ(fnv1a64({}), 0xcbf29ce484222325ull);
  const std::string a = "a";
  EXPECT_EQ(fnv1a64(std::as_bytes(std::span(a.data(), a.size()))), 0xaf63dc4c8601ec8cull);
}

TEST(ModuleCacheEvents, SummaryLine) {
  EXPECT_EQ(cache_summary({}), "");
  const std::vector<CacheEvent> events = {
      {CacheEventKind::Compiled, "a_f32", "k1", 400.4, ""},
      {CacheEventKind::Compiled, "b_f32", "k2", 300.0, ""},
      {CacheEventKind::DiskHit, "c_f32", "k3", 2.5, ""},
      {CacheEventKind::MemoryHit, "a_f32", "k1", 0.0, ""},
      {CacheEventKind::Rejected, "b_f32", "k2", 0.0, "checksum mismatch"},
      {CacheEventKind::StoreFailed, "b_f32", "k2", 0.0, "read-only"},
  };
  EXPECT_EQ(cache_summary(events),
            "kernel cache: 2 compiled (700 ms), 1 loaded from disk (2 ms), 1 reused in memory, "
            "1 damaged entry rebuilt, 1 not stored");
  EXPECT_EQ(cache_summary({events[3], events[3]}), "kernel cache: 2 reused in memory");
}

TEST(ModuleCacheEvents, RecordedInOrder) {
  const std::size_t before = cache_events().size();
  record_cache_event({CacheEventKind::MemoryHit, "test_symbol_f32", "k", 0.0, ""});
  const std::vector<CacheEvent> after = cache_events();
  ASSERT_EQ(after.size(), before + 1);
  EXPECT_EQ(after.back().symbol, "test_symbol_f32");
}

}  // namespace
}  // namespace iron::runtime
