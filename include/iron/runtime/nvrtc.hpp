/// NVRTC, loaded at run time with dlopen (never linked): whether it is here, and CUDA C++ to an
/// sm_XX cubin with any warning treated as an error and ptxas's resource report alongside.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "iron/runtime/ptxas_report.hpp"

namespace iron::runtime {

/// Whether NVRTC could be loaded, from where, and its version.
struct NvrtcStatus {
  bool available = false;
  std::string library_path;  ///< the file that was opened
  std::string include_path;  ///< folder with cuda_fp16.h passed to every compile; empty if none
  std::string reason;        ///< when unavailable: every place searched and why each failed
  int major = 0;
  int minor = 0;
};

/// Searches once per process, in order, and keeps the first library that opens:
///   1. $IRON_NVRTC (a full path to the library file);
///   2. lib64/ then lib/ of each CUDA toolkit root: $CUDA_HOME, $CUDA_PATH, /usr/local/cuda,
///      /usr/local/cuda-X.Y (newest first);
///   3. /usr/lib/x86_64-linux-gnu;
///   4. pip wheels (nvidia-cuda-nvrtc-cu12: nvidia/cuda_nvrtc/lib; nvidia-cuda-nvrtc for CUDA 13:
///      nvidia/cu13/lib) in each python3.* site-packages or dist-packages folder under
///      /usr/lib, /usr/local/lib, ~/.local/lib and $VIRTUAL_ENV/lib;
///   5. the bare sonames libnvrtc.so.13, libnvrtc.so.12, libnvrtc.so, which the dynamic loader
///      looks up itself (LD_LIBRARY_PATH, ld.so.cache).
/// In each folder the file names are tried in the order of step 5, and a folder is tried once.
/// A library that opens but lacks a function Iron calls makes NVRTC unavailable. Thread-safe.
const NvrtcStatus& nvrtc_status();

struct CubinResult {
  std::vector<std::byte> cubin;  ///< an ELF image for sm_XX, never PTX
  std::string log;  ///< the front end's messages: always empty, since any fails the compile
  /// ptxas's registers, shared memory, stack and spills per function; its warnings list is
  /// always empty, since any warning fails the compile.
  ResourceReport resources;
};

/// Compiles `source` (named `name` in messages) for the real architecture sm_`sm` (sm_`sm`a when
/// `arch_specific`: Hopper's wgmma, which plain sm_90 rejects) with
/// -std=c++17, the include path of nvrtc_status() and ptxas's verbose report (-v, which changes
/// no machine code). Throws iron::Error when NVRTC is unavailable (with the search list), when
/// the compile fails (NVRTC's error and log), or when it succeeds with a message from the front
/// end or a ptxas warning, numbered notes such as "(C7514) Potential Performance Loss" included
/// ("NVRTC compiled NAME with warnings: ..."). A stack frame or a spill is no error: it is in
/// `resources`. NVRTC allows concurrent compiles of separate programs, so this is thread-safe.
CubinResult compile_cubin(const std::string& source, const std::string& name, int sm = 90,
                          bool arch_specific = false);

}  // namespace iron::runtime
