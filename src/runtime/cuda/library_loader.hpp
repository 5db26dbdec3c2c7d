/// Opening a shared library with dlopen from an ordered list of candidates, and the folders
/// where CUDA toolkits and pip's NVIDIA wheels put their libraries.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace iron::runtime::cuda {

/// CUDA toolkit roots in search order: $CUDA_HOME, $CUDA_PATH, /usr/local/cuda, then every
/// /usr/local/cuda-X.Y, newest version first. Unset variables are left out; folders may not exist.
std::vector<std::filesystem::path> cuda_toolkit_roots();

/// The Python site folders pip installs wheels into, in search order: every python3* folder under
/// /usr/lib, /usr/local/lib, ~/.local/lib and $VIRTUAL_ENV/lib, each with site-packages and then
/// dist-packages. Only folders that exist.
std::vector<std::filesystem::path> python_site_dirs();

/// One place to try: a full path to a library file, or a bare soname that the dynamic loader
/// looks up on its own search path.
struct LibraryCandidate {
  std::string path;
  std::string why_skipped;  ///< non-empty: not tried, and why (e.g. "$CUDA_HOME is not set")
};

/// The first candidate that opened, and what happened with every one before it.
struct LibrarySearch {
  void* handle = nullptr;  ///< dlopen handle, the caller's to keep or close; null if none opened
  std::string path;        ///< the file that was opened, as the dynamic loader resolved it
  /// "candidate: why it did not open": exactly one entry per candidate before the one that
  /// opened (so tried.size() is its index), or per candidate when none did.
  std::vector<std::string> tried;
};

/// dlopen's the candidates in order (RTLD_NOW | RTLD_LOCAL) and stops at the first that opens.
/// A full path that does not exist is reported as such without calling dlopen.
LibrarySearch open_first(const std::vector<LibraryCandidate>& candidates);

}  // namespace iron::runtime::cuda
