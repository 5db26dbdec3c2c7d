/// dlopen over an ordered candidate list, and the toolkit and pip folders it is given.
#include "library_loader.hpp"

#include <dlfcn.h>
#include <link.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <string_view>
#include <system_error>
#include <utility>

namespace iron::runtime::cuda {
namespace {

namespace fs = std::filesystem;

/// "13.0" -> {13, 0}; empty when the text is not dot-separated numbers.
std::vector<int> parse_version(std::string_view text) {
  std::vector<int> parts;
  while (!text.empty()) {
    int part = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), part);
    if (error != std::errc{}) return {};
    parts.push_back(part);
    text.remove_prefix(static_cast<std::size_t>(end - text.data()));
    if (text.empty()) break;
    if (text.front() != '.') return {};
    text.remove_prefix(1);
  }
  return parts;
}

/// Subfolders of `parent` named `prefix` + a version ("cuda-12.4", "python3.11"), newest first.
std::vector<fs::path> versioned_subdirs(const fs::path& parent, std::string_view prefix) {
  std::vector<std::pair<std::vector<int>, fs::path>> found;
  std::error_code error;
  for (fs::directory_iterator it(parent, error), end; !error && it != end; it.increment(error)) {
    const std::string name = it->path().filename().string();
    if (name.rfind(prefix, 0) != 0) continue;
    auto version = parse_version(std::string_view(name).substr(prefix.size()));
    if (!version.empty()) found.emplace_back(std::move(version), it->path());
  }
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a > b; });
  std::vector<fs::path> dirs;
  dirs.reserve(found.size());
  for (auto& entry : found) dirs.push_back(std::move(entry.second));
  return dirs;
}

bool is_dir(const fs::path& path) {
  std::error_code error;
  return fs::is_directory(path, error);
}

}  // namespace

std::vector<fs::path> cuda_toolkit_roots() {
  std::vector<fs::path> roots;
  for (const char* variable : {"CUDA_HOME", "CUDA_PATH"}) {
    const char* value = std::getenv(variable);
    if (value != nullptr && *value != '\0') roots.emplace_back(value);
  }
  roots.emplace_back("/usr/local/cuda");
  for (auto& versioned : versioned_subdirs("/usr/local", "cuda-")) roots.push_back(versioned);
  return roots;
}

std::vector<fs::path> python_site_dirs() {
  std::vector<fs::path> bases = {"/usr/lib", "/usr/local/lib"};
  for (const auto& [variable, below] : {std::pair{"HOME", ".local/lib"}, {"VIRTUAL_ENV", "lib"}}) {
    const char* value = std::getenv(variable);
    if (value != nullptr && *value != '\0') bases.push_back(fs::path(value) / below);
  }
  std::vector<fs::path> sites;
  for (const auto& base : bases) {
    for (const auto& python : versioned_subdirs(base, "python3.")) {
      for (const char* site : {"site-packages", "dist-packages"}) {
        if (is_dir(python / site)) sites.push_back(python / site);
      }
    }
  }
  return sites;
}

LibrarySearch open_first(const std::vector<LibraryCandidate>& candidates) {
  LibrarySearch search;
  for (const auto& candidate : candidates) {
    if (!candidate.why_skipped.empty()) {
      search.tried.push_back(candidate.path + ": " + candidate.why_skipped);
      continue;
    }
    const bool full_path = candidate.path.find('/') != std::string::npos;
    std::error_code error;
    if (full_path && !fs::exists(candidate.path, error)) {
      search.tried.push_back(candidate.path + ": no such file");
      continue;
    }
    void* handle = dlopen(candidate.path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      const char* why = dlerror();
      search.tried.push_back(candidate.path +
                             ": dlopen failed: " + (why != nullptr ? why : "no reason given"));
      continue;
    }
    search.handle = handle;
    // The loader's own record names the file a bare soname resolved to.
    link_map* map = nullptr;
    const bool resolved = dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr &&
                          map->l_name != nullptr && *map->l_name != '\0';
    search.path = resolved ? map->l_name : candidate.path;
    return search;
  }
  return search;
}

}  // namespace iron::runtime::cuda
