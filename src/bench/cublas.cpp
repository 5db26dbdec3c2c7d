/// cuBLAS through dlopen: the search and the function table.
#include "cublas.hpp"

#include <dlfcn.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdlib>
#include <filesystem>
#include <vector>

#include "../runtime/cuda/library_loader.hpp"

namespace iron::bench {
namespace {

using runtime::cuda::cuda_toolkit_roots;
using runtime::cuda::LibraryCandidate;
using runtime::cuda::LibrarySearch;
using runtime::cuda::open_first;
using runtime::cuda::python_site_dirs;

namespace fs = std::filesystem;

constexpr const char* kNames[] = {"libcublas.so.13", "libcublas.so.12", "libcublas.so"};

std::vector<LibraryCandidate> candidates() {
  std::vector<LibraryCandidate> list;
  if (const char* path = std::getenv("IRON_LIBCUBLAS"); path != nullptr && *path != '\0') {
    return {{path, ""}};
  }
  std::vector<fs::path> folders;
  for (const fs::path& root : cuda_toolkit_roots()) folders.push_back(root / "lib64");
  for (const fs::path& site : python_site_dirs()) {
    folders.push_back(site / "nvidia" / "cu13" / "lib");
    folders.push_back(site / "nvidia" / "cublas" / "lib");
  }
  for (const fs::path& folder : folders) {
    for (const char* name : kNames) {
      std::error_code error;
      if (fs::exists(folder / name, error)) list.push_back({(folder / name).string(), ""});
    }
  }
  for (const char* name : kNames) list.push_back({name, ""});
  return list;
}

/// cuBLAS needs cuBLASLt from its own folder; wheels find it through their RUNPATH, toolkit
/// folders may not, so it is opened first (globally) where it sits beside the candidate.
void open_sibling_lt(const std::string& path) {
  const fs::path folder = fs::path(path).parent_path();
  if (folder.empty()) return;
  for (const char* name : {"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so"}) {
    std::error_code error;
    if (fs::exists(folder / name, error)) {
      dlopen((folder / name).c_str(), RTLD_NOW | RTLD_GLOBAL);
      return;
    }
  }
}

template <class Fn>
bool resolve(void* handle, const char* symbol, Fn& fn) {
  fn = reinterpret_cast<Fn>(dlsym(handle, symbol));
  return fn != nullptr;
}

Cublas load() {
  Cublas found;
  LibrarySearch search;
  std::vector<std::string> tried;
  for (const LibraryCandidate& c : candidates()) {
    open_sibling_lt(c.path);
    search = open_first({c});
    if (search.handle != nullptr) break;
    tried.insert(tried.end(), search.tried.begin(), search.tried.end());
  }
  if (search.handle == nullptr) {
    found.reason = fmt::format("cuBLAS not found (tried: {})", fmt::join(tried, "; "));
    return found;
  }
  found.path = search.path;
  if (!resolve(search.handle, "cublasCreate_v2", found.api.create) ||
      !resolve(search.handle, "cublasDestroy_v2", found.api.destroy) ||
      !resolve(search.handle, "cublasGemmEx", found.api.gemm_ex)) {
    found.reason =
        fmt::format("{} lacks cublasCreate_v2, cublasDestroy_v2 or cublasGemmEx", search.path);
    return found;
  }
  found.available = true;
  return found;
}

}  // namespace

const Cublas& cublas() {
  static const Cublas loaded = load();
  return loaded;
}

}  // namespace iron::bench
