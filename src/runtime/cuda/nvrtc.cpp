/// NVRTC through dlopen: the library search, the function table, and compile_cubin with
/// ptxas's resource report.
#include "iron/runtime/nvrtc.hpp"

#include <dlfcn.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <set>
#include <system_error>

#include "iron/core/error.hpp"
#include "library_loader.hpp"

namespace iron::runtime {
namespace {

namespace fs = std::filesystem;

// NVRTC's C ABI, declared here so that building Iron needs no CUDA headers.
using NvrtcResult = int;  // nvrtcResult; NVRTC_SUCCESS is 0
using NvrtcProgram = struct NvrtcProgramOpaque*;
constexpr NvrtcResult kNvrtcSuccess = 0;

/// The NVRTC functions Iron calls, resolved from the opened library.
struct NvrtcApi {
  NvrtcResult (*create_program)(NvrtcProgram*, const char*, const char*, int, const char* const*,
                                const char* const*) = nullptr;
  NvrtcResult (*compile_program)(NvrtcProgram, int, const char* const*) = nullptr;
  NvrtcResult (*get_program_log_size)(NvrtcProgram, std::size_t*) = nullptr;
  NvrtcResult (*get_program_log)(NvrtcProgram, char*) = nullptr;
  NvrtcResult (*get_cubin_size)(NvrtcProgram, std::size_t*) = nullptr;
  NvrtcResult (*get_cubin)(NvrtcProgram, char*) = nullptr;
  NvrtcResult (*version)(int*, int*) = nullptr;
  const char* (*get_error_string)(NvrtcResult) = nullptr;
  NvrtcResult (*destroy_program)(NvrtcProgram*) = nullptr;
};

struct Nvrtc {
  NvrtcStatus status;
  NvrtcApi api;
};

constexpr const char* kSonames[] = {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"};
constexpr const char* kNoLibraryHere = "no libnvrtc.so.13, libnvrtc.so.12 or libnvrtc.so";

std::vector<cuda::LibraryCandidate> search_list() {
  std::vector<cuda::LibraryCandidate> candidates;
  const char* explicit_path = std::getenv("IRON_NVRTC");
  if (explicit_path != nullptr && *explicit_path != '\0') {
    candidates.push_back({explicit_path, ""});
  } else {
    candidates.push_back({"$IRON_NVRTC", "not set"});
  }
  std::vector<fs::path> folders;
  for (const auto& root : cuda::cuda_toolkit_roots()) {
    folders.push_back(root / "lib64");
    folders.push_back(root / "lib");
  }
  folders.emplace_back("/usr/lib/x86_64-linux-gnu");
  for (const auto& site : cuda::python_site_dirs()) {
    folders.push_back(site / "nvidia" / "cuda_nvrtc" / "lib");
    folders.push_back(site / "nvidia" / "cu13" / "lib");
  }
  std::set<fs::path> seen;
  for (const auto& folder : folders) {
    if (!seen.insert(folder.lexically_normal()).second) continue;
    bool any = false;
    for (const char* soname : kSonames) {
      std::error_code error;
      if (!fs::exists(folder / soname, error)) continue;
      candidates.push_back({(folder / soname).string(), ""});
      any = true;
    }
    if (!any) candidates.push_back({folder.string(), kNoLibraryHere});
  }
  for (const char* soname : kSonames) candidates.push_back({soname, ""});
  return candidates;
}

bool has_fp16_header(const fs::path& folder) {
  std::error_code error;
  return fs::exists(folder / "cuda_fp16.h", error);
}

/// The folder with cuda_fp16.h, preferring the one beside the library so headers and library
/// come from the same CUDA release.
std::optional<fs::path> find_include_dir(const fs::path& library) {
  const fs::path lib_dir = library.parent_path();
  std::vector<fs::path> folders = {
      lib_dir.parent_path() / "include",                                 // toolkit, pip cu13
      lib_dir.parent_path().parent_path() / "cuda_runtime" / "include",  // pip cu12
      lib_dir.parent_path().parent_path() / "include",  // /usr/lib/<triple> -> /usr
  };
  for (const auto& root : cuda::cuda_toolkit_roots()) folders.push_back(root / "include");
  for (const auto& site : cuda::python_site_dirs()) {
    folders.push_back(site / "nvidia" / "cuda_runtime" / "include");
    folders.push_back(site / "nvidia" / "cu13" / "include");
  }
  for (const auto& folder : folders) {
    if (has_fp16_header(folder)) return fs::weakly_canonical(folder);
  }
  return std::nullopt;
}

template <class Fn>
bool resolve(void* handle, const char* symbol, Fn& fn, std::string& missing) {
  fn = reinterpret_cast<Fn>(dlsym(handle, symbol));
  if (fn == nullptr) missing += missing.empty() ? symbol : fmt::format(", {}", symbol);
  return fn != nullptr;
}

Nvrtc load_nvrtc() {
  Nvrtc nvrtc;
  const cuda::LibrarySearch search = cuda::open_first(search_list());
  if (search.handle == nullptr) {
    nvrtc.status.reason = fmt::format("NVRTC was not found; searched, in order:\n  {}",
                                      fmt::join(search.tried, "\n  "));
    return nvrtc;
  }
  nvrtc.status.library_path = search.path;
  NvrtcApi& api = nvrtc.api;
  std::string missing;
  resolve(search.handle, "nvrtcCreateProgram", api.create_program, missing);
  resolve(search.handle, "nvrtcCompileProgram", api.compile_program, missing);
  resolve(search.handle, "nvrtcGetProgramLogSize", api.get_program_log_size, missing);
  resolve(search.handle, "nvrtcGetProgramLog", api.get_program_log, missing);
  resolve(search.handle, "nvrtcGetCUBINSize", api.get_cubin_size, missing);
  resolve(search.handle, "nvrtcGetCUBIN", api.get_cubin, missing);
  resolve(search.handle, "nvrtcVersion", api.version, missing);
  resolve(search.handle, "nvrtcGetErrorString", api.get_error_string, missing);
  resolve(search.handle, "nvrtcDestroyProgram", api.destroy_program, missing);
  if (!missing.empty()) {
    nvrtc.status.reason = fmt::format("{} lacks {}", search.path, missing);
    return nvrtc;
  }
  const NvrtcResult version = api.version(&nvrtc.status.major, &nvrtc.status.minor);
  if (version != kNvrtcSuccess) {
    nvrtc.status.reason =
        fmt::format("nvrtcVersion failed in {}: {}", search.path, api.get_error_string(version));
    return nvrtc;
  }
  if (const auto include = find_include_dir(search.path)) {
    nvrtc.status.include_path = include->string();
  }
  nvrtc.status.available = true;
  return nvrtc;
}

const Nvrtc& nvrtc() {
  static const Nvrtc loaded = load_nvrtc();  // initialised once, thread-safe
  return loaded;
}

/// Destroys the program on every path out of compile_cubin.
class ProgramGuard {
 public:
  ProgramGuard(const NvrtcApi& api, NvrtcProgram program) : api_(api), program_(program) {}
  ProgramGuard(const ProgramGuard&) = delete;
  ProgramGuard& operator=(const ProgramGuard&) = delete;
  ~ProgramGuard() { api_.destroy_program(&program_); }

 private:
  const NvrtcApi& api_;
  NvrtcProgram program_;
};

void check(const NvrtcApi& api, NvrtcResult result, const char* call, const std::string& name) {
  if (result != kNvrtcSuccess) {
    throw Error(fmt::format("{} failed for {}: {}", call, name, api.get_error_string(result)));
  }
}

std::string program_log(const NvrtcApi& api, NvrtcProgram program, const std::string& name) {
  std::size_t size = 0;
  check(api, api.get_program_log_size(program, &size), "nvrtcGetProgramLogSize", name);
  std::string log(size, '\0');
  if (size > 0) check(api, api.get_program_log(program, log.data()), "nvrtcGetProgramLog", name);
  // The size counts the terminating NUL; drop it and any trailing blank lines.
  while (!log.empty() &&
         (log.back() == '\0' || std::isspace(static_cast<unsigned char>(log.back())))) {
    log.pop_back();
  }
  return log;
}

}  // namespace

const NvrtcStatus& nvrtc_status() { return nvrtc().status; }

CubinResult compile_cubin(const std::string& source, const std::string& name, int sm,
                          bool arch_specific) {
  const Nvrtc& loaded = nvrtc();
  if (!loaded.status.available) {
    throw Error(fmt::format("cannot compile {}: {}", name, loaded.status.reason));
  }
  const NvrtcApi& api = loaded.api;
  NvrtcProgram program = nullptr;
  const std::string file = name + ".cu";
  check(api, api.create_program(&program, source.c_str(), file.c_str(), 0, nullptr, nullptr),
        "nvrtcCreateProgram", name);
  const ProgramGuard guard(api, program);

  const std::string arch = fmt::format("--gpu-architecture=sm_{}{}", sm, arch_specific ? "a" : "");
  const std::string include = "--include-path=" + loaded.status.include_path;
  std::vector<const char*> options = {arch.c_str(), "-std=c++17", "--ptxas-options=-v"};
  if (!loaded.status.include_path.empty()) options.push_back(include.c_str());
  // --minimal (NVRTC 12.4+) leaves out textures, surfaces, device-side launches and the runtime
  // API's declarations, none of which emitted kernels use: a shorter front end for every module.
  const NvrtcStatus& v = loaded.status;
  if (v.major > 12 || (v.major == 12 && v.minor >= 4)) options.push_back("--minimal");

  const NvrtcResult compiled =
      api.compile_program(program, static_cast<int>(options.size()), options.data());
  const std::string log = program_log(api, program, name);
  if (compiled != kNvrtcSuccess) {
    throw Error(fmt::format("NVRTC failed to compile {} ({}):\n{}", name,
                            api.get_error_string(compiled), log));
  }
  const SplitProgramLog split = split_program_log(log);
  CubinResult result;
  result.resources = parse_ptxas_log(split.ptxas);
  if (!split.front_end.empty() || !result.resources.warnings.empty()) {
    std::string messages = split.front_end;
    for (const std::string& warning : result.resources.warnings) {
      messages += fmt::format("{}ptxas: {}", messages.empty() ? "" : "\n", warning);
    }
    throw CompileWarningError(fmt::format("NVRTC compiled {} with warnings:\n{}", name, messages));
  }

  std::size_t size = 0;
  check(api, api.get_cubin_size(program, &size), "nvrtcGetCUBINSize", name);
  if (size == 0) throw Error(fmt::format("NVRTC produced an empty cubin for {}", name));
  result.cubin.resize(size);
  check(api, api.get_cubin(program, reinterpret_cast<char*>(result.cubin.data())), "nvrtcGetCUBIN",
        name);
  return result;
}

}  // namespace iron::runtime
