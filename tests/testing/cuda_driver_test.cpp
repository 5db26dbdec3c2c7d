/// Tests of the libcuda loader that need no GPU: the search list, and a plain reason for a
/// missing file, a library that is not a driver, the toolkit's stub and a machine without one.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <link.h>

#include <filesystem>
#include <string>
#include <vector>

#include "../../src/runtime/cuda/driver.hpp"
#include "cuda_test_support.hpp"
#include "iron/core/error.hpp"

namespace iron::runtime::cuda {
namespace {

using cuda_test::Contains;
using cuda_test::ScopedEnv;

/// The file the dynamic loader opens for `soname`, e.g. /lib/x86_64-linux-gnu/libm.so.6.
std::string resolved_path(const char* soname) {
  void* handle = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) return "";
  link_map* map = nullptr;
  std::string path =
      dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr ? map->l_name : "";
  dlclose(handle);
  return path;
}

std::vector<std::string> paths_of(const std::vector<LibraryCandidate>& candidates) {
  std::vector<std::string> paths;
  paths.reserve(candidates.size());
  for (const auto& c : candidates) paths.push_back(c.path);
  return paths;
}

TEST(CudaDriver, SearchListWithoutOverride) {
  const ScopedEnv unset("IRON_LIBCUDA", std::nullopt);
  EXPECT_EQ(paths_of(driver_search_list()),
            (std::vector<std::string>{
                "libcuda.so.1", "libcuda.so", "/usr/lib/x86_64-linux-gnu/libcuda.so.1",
                "/usr/lib64/libcuda.so.1", "/usr/local/nvidia/lib64/libcuda.so.1"}));
}

TEST(CudaDriver, OverrideIsTheOnlyCandidate) {
  const ScopedEnv set("IRON_LIBCUDA", "/opt/driver/libcuda.so.1");
  const auto candidates = driver_search_list();
  ASSERT_EQ(candidates.size(), 1u);
  EXPECT_EQ(candidates[0].path, "/opt/driver/libcuda.so.1");
  EXPECT_EQ(candidates[0].why_skipped, "");
}

TEST(CudaDriver, MissingFileIsNamed) {
  const ScopedEnv set("IRON_LIBCUDA", "/nonexistent/libcuda.so.1");
  const Driver d = Driver::load();
  EXPECT_FALSE(d.available());
  EXPECT_EQ(d.reason(),
            "no NVIDIA driver: $IRON_LIBCUDA=/nonexistent/libcuda.so.1 did not open "
            "(/nonexistent/libcuda.so.1: no such file)");
}

TEST(CudaDriver, LibraryWithoutTheDriverApiIsRefused) {
  const std::string libm = resolved_path("libm.so.6");
  ASSERT_FALSE(libm.empty());
  const ScopedEnv set("IRON_LIBCUDA", libm);
  const Driver d = Driver::load();
  EXPECT_FALSE(d.available());
  EXPECT_EQ(d.library_path(), libm);
  EXPECT_EQ(d.reason(), libm +
                            " is not a usable CUDA driver: it lacks cuInit, cuDriverGetVersion, "
                            "cuDeviceGetCount and 37 more");
}

TEST(CudaDriver, ToolkitStubIsNeverOpened) {
  const ScopedEnv set("IRON_LIBCUDA", "/usr/local/cuda/lib64/stubs/libcuda.so");
  const Driver d = Driver::load();
  EXPECT_FALSE(d.available());
  EXPECT_TRUE(d.library_path().empty());
  EXPECT_TRUE(Contains(d.reason(),
                       "/usr/local/cuda/lib64/stubs/libcuda.so: the CUDA toolkit's "
                       "link-time stub, which cannot run kernels: not opened"));
}

TEST(CudaDriver, NoDriverHereSaysWhy) {
  const ScopedEnv unset("IRON_LIBCUDA", std::nullopt);
  const Driver d = Driver::load();
  if (d.available()) GTEST_SKIP() << "a CUDA driver is here: " << d.library_path();
  EXPECT_FALSE(d.reason().empty());
  if (d.library_path().empty()) {
    EXPECT_TRUE(Contains(d.reason(),
                         "no NVIDIA driver: libcuda.so.1 not found (tried: "
                         "libcuda.so.1: dlopen failed: "));
    EXPECT_TRUE(Contains(d.reason(), "/usr/local/nvidia/lib64/libcuda.so.1: no such file"));
    if (std::filesystem::exists("/usr/local/cuda/lib64/stubs/libcuda.so")) {
      EXPECT_TRUE(Contains(d.reason(), "; only the CUDA toolkit's stub "));
    }
  }
}

TEST(CudaDriver, ErrorsNameTheCallAndTheKernel) {
  const Driver unloaded;
  EXPECT_EQ(unloaded.describe(700), "CUresult 700");
  try {
    unloaded.check(700, "cuCtxSynchronize", "iron_scale_f16");
    FAIL() << "check passed an error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "cuCtxSynchronize failed for iron_scale_f16: CUresult 700");
  }
  EXPECT_NO_THROW(unloaded.check(kCudaSuccess, "cuInit", "x"));
}

TEST(CudaDriver, RealDriverNamesErrors) {
  const Driver& d = driver();
  if (!d.available()) GTEST_SKIP() << "no CUDA driver: " << d.reason();
  EXPECT_EQ(d.describe(700).rfind("CUDA_ERROR_ILLEGAL_ADDRESS (", 0), 0u) << d.describe(700);
  EXPECT_GT(d.version(), 0);
  EXPECT_GT(d.device_count(), 0);
}

}  // namespace
}  // namespace iron::runtime::cuda
