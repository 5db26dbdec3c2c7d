/// The disk side of the module cache (folder, key, checked entries, atomic writes) and the
/// process's record of cache events.
#include "iron/runtime/module_cache.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <random>
#include <system_error>
#include <variant>

#include "iron/core/error.hpp"

namespace iron::runtime {
namespace {

namespace fs = std::filesystem;

constexpr std::array<char, 8> kMagic = {'I', 'R', 'O', 'N', 'B', 'L', 'O', 'B'};
constexpr std::uint32_t kFormatVersion = 1;
constexpr std::size_t kHeaderBytes = 32;  // magic, version, 4 zero bytes, size, checksum
constexpr std::string_view kTempSuffix = ".tmp";

const char* env(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? value : nullptr;
}

std::span<const std::byte> bytes_of(std::string_view text) {
  return std::as_bytes(std::span(text.data(), text.size()));
}

void put_u64(std::byte* out, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) out[i] = static_cast<std::byte>(v >> (8 * i));
}

std::uint64_t get_u64(const std::byte* in, int bytes = 8) {
  std::uint64_t v = 0;
  for (int i = 0; i < bytes; ++i)
    v |= std::uint64_t{std::to_integer<std::uint8_t>(in[i])} << (8 * i);
  return v;
}

/// Mixes the length, then the bytes, so that no two field lists hash alike by concatenation.
std::uint64_t mix(std::uint64_t h, std::string_view field) {
  std::array<std::byte, 8> length{};
  put_u64(length.data(), field.size());
  return fnv1a64(bytes_of(field), fnv1a64(length, h));
}

bool is_key(std::string_view key) {
  return !key.empty() && std::all_of(key.begin(), key.end(), [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-' ||
           c == '_';
  });
}

/// The payload when `file` is a whole, undamaged entry; else why not.
std::variant<std::vector<std::byte>, std::string> parse_entry(std::vector<std::byte> file) {
  if (file.size() < kHeaderBytes) {
    return fmt::format("truncated: {} bytes, shorter than the {}-byte header", file.size(),
                       kHeaderBytes);
  }
  if (std::memcmp(file.data(), kMagic.data(), kMagic.size()) != 0)
    return std::string("wrong magic");
  const auto version = static_cast<std::uint32_t>(get_u64(file.data() + 8, 4));
  if (version != kFormatVersion) {
    return fmt::format("format version {}, expected {}", version, kFormatVersion);
  }
  const std::uint64_t size = get_u64(file.data() + 16);
  if (size != file.size() - kHeaderBytes) {
    return fmt::format("the header says {} payload bytes, the file holds {}", size,
                       file.size() - kHeaderBytes);
  }
  const std::span<const std::byte> payload(file.data() + kHeaderBytes, size);
  if (fnv1a64(payload) != get_u64(file.data() + 24)) return std::string("checksum mismatch");
  file.erase(file.begin(), file.begin() + kHeaderBytes);
  return file;
}

/// Why a file of this type and size is no entry, or "" when it may be one.
std::string entry_file_problem(const fs::file_status& status, std::uintmax_t size) {
  if (fs::is_directory(status)) return "not a regular file (a directory)";
  if (!fs::is_regular_file(status)) return "not a regular file";
  if (size > kMaxEntryBytes) {
    return fmt::format("{} bytes, larger than the {} an entry may have", size, kMaxEntryBytes);
  }
  return "";
}

/// A file's bytes, or why they were not read; `keep` when the path is no regular file, which
/// the cache must leave in place (a folder or device there is the user's, not a damaged entry).
struct FileRead {
  std::vector<std::byte> bytes;
  std::string why;
  bool keep = false;
};

/// Reads the whole file through one descriptor, checked to be a regular file of at most
/// kMaxEntryBytes (what the path names may change between a check by name and the read).
FileRead read_file(const fs::path& path) {
  FileRead out;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    out.why = fmt::format("could not be opened: {}", std::strerror(errno));
    return out;
  }
  struct ::stat st {};
  if (::fstat(fd, &st) != 0) {
    out.why = fmt::format("could not be examined: {}", std::strerror(errno));
  } else if (!S_ISREG(st.st_mode)) {
    std::error_code error;
    out.why = entry_file_problem(fs::status(path, error), 0);
    out.keep = true;
  } else if (static_cast<std::uintmax_t>(st.st_size) > kMaxEntryBytes) {
    out.why = entry_file_problem(fs::file_status(fs::file_type::regular),
                                 static_cast<std::uintmax_t>(st.st_size));
  } else {
    out.bytes.resize(static_cast<std::size_t>(st.st_size));
    std::size_t done = 0;
    while (done < out.bytes.size()) {
      const ssize_t got = ::read(fd, out.bytes.data() + done, out.bytes.size() - done);
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) out.why = fmt::format("could not be read: {}", std::strerror(errno));
      if (got <= 0) break;
      done += static_cast<std::size_t>(got);
    }
    out.bytes.resize(done);  // a file shrunk meanwhile fails parse_entry's size check
  }
  ::close(fd);
  return out;
}

/// Writes the parts to a new file at `path` and closes it; "" on success, else the system's error.
std::string write_file(const fs::path& path,
                       std::initializer_list<std::span<const std::byte>> parts) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return std::strerror(errno);
  for (std::span<const std::byte> part : parts) {
    while (!part.empty()) {
      const ssize_t written = ::write(fd, part.data(), part.size());
      if (written < 0 && errno == EINTR) continue;
      if (written <= 0) {
        std::string why = written < 0 ? std::strerror(errno) : "nothing written";
        ::close(fd);
        return why;
      }
      part = part.subspan(static_cast<std::size_t>(written));
    }
  }
  if (::close(fd) != 0) return std::strerror(errno);
  return "";
}

std::string temp_name(std::string_view key) {
  thread_local std::mt19937_64 random{std::random_device{}()};
  return fmt::format(".{}.{}.{:016x}{}", key, getpid(), random(), kTempSuffix);
}

/// Whether `name` is one temp_name() makes: ".KEY.PID.RANDOM.tmp" (a key has no dots).
bool is_temp_name(std::string_view name) {
  if (!name.starts_with('.') || !name.ends_with(kTempSuffix)) return false;
  name = name.substr(1, name.size() - 1 - kTempSuffix.size());
  std::vector<std::string_view> parts;
  for (std::size_t dot = name.find('.'); dot != std::string_view::npos; dot = name.find('.')) {
    parts.push_back(name.substr(0, dot));
    name.remove_prefix(dot + 1);
  }
  parts.push_back(name);
  auto made_of = [](std::string_view text, const char* chars) {
    return !text.empty() && text.find_first_not_of(chars) == std::string_view::npos;
  };
  return parts.size() == 3 && is_key(parts[0]) && made_of(parts[1], "0123456789") &&
         parts[2].size() == 16 && made_of(parts[2], "0123456789abcdef");
}

/// Whether `name` is an entry's file name: KEY + extension.
bool is_entry_name(std::string_view name, std::string_view extension) {
  return name.ends_with(extension) && is_key(name.substr(0, name.size() - extension.size()));
}

std::mutex& events_mutex() {
  static std::mutex mutex;
  return mutex;
}

std::vector<CacheEvent>& recorded_events() {
  static std::vector<CacheEvent> recorded;
  return recorded;
}

}  // namespace

std::optional<CacheDir> cache_dir() {
  if (const char* dir = env("IRON_CACHE_DIR")) return CacheDir{dir, "$IRON_CACHE_DIR"};
  if (const char* xdg = env("XDG_CACHE_HOME"); xdg != nullptr && fs::path(xdg).is_absolute()) {
    return CacheDir{fs::path(xdg) / "iron", "$XDG_CACHE_HOME"};
  }
  if (const char* home = env("HOME")) return CacheDir{fs::path(home) / ".cache" / "iron", "$HOME"};
  return std::nullopt;
}

std::uint64_t fnv1a64(std::span<const std::byte> bytes, std::uint64_t seed) {
  std::uint64_t h = seed;
  for (const std::byte b : bytes) {
    h ^= std::to_integer<std::uint8_t>(b);
    h *= 0x100000001b3ull;
  }
  return h;
}

std::string module_cache_key(std::uint64_t lowered_hash, std::string_view arch,
                             std::string_view iron_version, int nvrtc_major, int nvrtc_minor,
                             std::string_view source) {
  std::uint64_t h = fnv1a64({});
  h = mix(h, fmt::format("{:016x}", lowered_hash));
  h = mix(h, arch);
  h = mix(h, iron_version);
  h = mix(h, fmt::format("{}.{}", nvrtc_major, nvrtc_minor));
  h = mix(h, source);
  return fmt::format("{:016x}", h);
}

BlobStore::BlobStore(fs::path dir, std::string extension)
    : dir_(std::move(dir)), extension_(std::move(extension)) {}

fs::path BlobStore::entry_path(std::string_view key) const {
  IRON_INTERNAL_ASSERT(is_key(key), "a cache key is letters, digits, '-' and '_'");
  return dir_ / (std::string(key) + extension_);
}

BlobStore::Loaded BlobStore::load(std::string_view key) const {
  const fs::path path = entry_path(key);
  Loaded loaded;
  std::error_code error;
  const fs::file_status status = fs::status(path, error);
  if (!fs::exists(status)) return loaded;
  FileRead file;
  if (!fs::is_regular_file(status)) {
    file.why = entry_file_problem(status, 0);
    file.keep = true;
  } else {
    file = read_file(path);
  }
  if (file.why.empty()) {
    auto parsed = parse_entry(std::move(file.bytes));
    if (auto* blob = std::get_if<std::vector<std::byte>>(&parsed)) {
      loaded.outcome = Loaded::Outcome::Hit;
      loaded.blob = std::move(*blob);
      return loaded;
    }
    loaded.why = std::get<std::string>(parsed);
  } else if (!fs::exists(path, error)) {
    return loaded;  // gone between the check and the read (another process cleared it)
  } else {
    loaded.why = file.why;
  }
  loaded.outcome = Loaded::Outcome::Rejected;
  if (file.keep) {
    loaded.why += "; left in place";
    return loaded;
  }
  if (fs::remove(path, error); error) {
    loaded.why += fmt::format(" (and it could not be removed: {})", error.message());
  }
  return loaded;
}

void BlobStore::store(std::string_view key, std::span<const std::byte> blob) const {
  const fs::path path = entry_path(key);
  std::error_code error;
  fs::create_directories(dir_, error);
  if (error) {
    throw Error(
        fmt::format("cannot create the cache folder {}: {}", dir_.string(), error.message()));
  }
  std::array<std::byte, kHeaderBytes> header{};
  std::memcpy(header.data(), kMagic.data(), kMagic.size());
  put_u64(header.data() + 8, kFormatVersion);  // the 4 bytes after it stay zero
  put_u64(header.data() + 16, blob.size());
  put_u64(header.data() + 24, fnv1a64(blob));

  const fs::path temp = dir_ / temp_name(key);
  if (const std::string why = write_file(temp, {header, blob}); !why.empty()) {
    fs::remove(temp, error);
    throw Error(fmt::format("cannot write the cache entry {}: {}", temp.string(), why));
  }
  fs::rename(temp, path, error);  // rename(2): atomic, replaces any entry already there
  if (error) {
    const std::string why = error.message();
    fs::remove(temp, error);
    throw Error(fmt::format("cannot rename {} to {}: {}", temp.string(), path.string(), why));
  }
}

BlobStore::Summary BlobStore::summary() const {
  Summary summary;
  std::error_code error;
  for (fs::directory_iterator it(dir_, error), end; !error && it != end; it.increment(error)) {
    const std::string name = it->path().filename().string();
    std::error_code type_error;
    if (!is_entry_name(name, extension_) || !it->is_regular_file(type_error)) continue;
    std::error_code size_error;
    const std::uintmax_t size = it->file_size(size_error);
    if (size_error) continue;  // removed meanwhile
    ++summary.entries;
    summary.bytes += size;
  }
  return summary;
}

std::vector<std::string> BlobStore::keys() const {
  std::vector<std::string> keys;
  std::error_code error;
  for (fs::directory_iterator it(dir_, error), end; !error && it != end; it.increment(error)) {
    const std::string name = it->path().filename().string();
    std::error_code type_error;
    if (!is_entry_name(name, extension_) || !it->is_regular_file(type_error)) continue;
    keys.push_back(name.substr(0, name.size() - extension_.size()));
  }
  std::sort(keys.begin(), keys.end());
  return keys;
}

BlobStore::Summary BlobStore::clear() const {
  Summary removed;
  std::error_code error;
  std::vector<fs::path> doomed;
  for (fs::directory_iterator it(dir_, error), end; !error && it != end; it.increment(error)) {
    const std::string name = it->path().filename().string();
    std::error_code type_error;
    if ((is_entry_name(name, extension_) || is_temp_name(name)) &&
        it->is_regular_file(type_error)) {
      doomed.push_back(it->path());
    }
  }
  for (const fs::path& path : doomed) {
    std::error_code size_error;
    const std::uintmax_t size = fs::file_size(path, size_error);
    std::error_code remove_error;
    const bool existed = fs::remove(path, remove_error);
    if (remove_error) {
      throw Error(fmt::format("cannot remove {}: {}", path.string(), remove_error.message()));
    }
    if (existed && !size_error && is_entry_name(path.filename().string(), extension_)) {
      ++removed.entries;
      removed.bytes += size;
    }
  }
  return removed;
}

std::optional<BlobStore> module_store() {
  const std::optional<CacheDir> dir = cache_dir();
  if (!dir) return std::nullopt;
  return BlobStore(dir->path, ".cubin");
}

void record_cache_event(CacheEvent event) {
  const std::lock_guard lock(events_mutex());
  recorded_events().push_back(std::move(event));
}

std::vector<CacheEvent> cache_events() {
  const std::lock_guard lock(events_mutex());
  return recorded_events();
}

std::string cache_summary(const std::vector<CacheEvent>& events) {
  struct Tally {
    std::size_t count = 0;
    double ms = 0.0;
  };
  std::array<Tally, 5> tallies{};
  for (const CacheEvent& e : events) {
    Tally& t = tallies.at(static_cast<std::size_t>(e.kind));
    ++t.count;
    t.ms += e.ms;
  }
  auto of = [&](CacheEventKind kind) { return tallies.at(static_cast<std::size_t>(kind)); };
  std::vector<std::string> parts;
  if (const Tally t = of(CacheEventKind::Compiled); t.count > 0) {
    parts.push_back(fmt::format("{} compiled ({:.0f} ms)", t.count, t.ms));
  }
  if (const Tally t = of(CacheEventKind::DiskHit); t.count > 0) {
    parts.push_back(fmt::format("{} loaded from disk ({:.0f} ms)", t.count, t.ms));
  }
  if (const Tally t = of(CacheEventKind::MemoryHit); t.count > 0) {
    parts.push_back(fmt::format("{} reused in memory", t.count));
  }
  if (const Tally t = of(CacheEventKind::Rejected); t.count > 0) {
    parts.push_back(
        fmt::format("{} damaged {} rebuilt", t.count, t.count == 1 ? "entry" : "entries"));
  }
  if (const Tally t = of(CacheEventKind::StoreFailed); t.count > 0) {
    parts.push_back(fmt::format("{} not stored", t.count));
  }
  if (parts.empty()) return "";
  std::string line = "kernel cache: " + parts.front();
  for (std::size_t i = 1; i < parts.size(); ++i) line += ", " + parts[i];
  return line;
}

}  // namespace iron::runtime
