/// warm_module_cache: kernels compiled into the disk cache once, found there the second time,
/// a failure kept to its kernel, and the refusal without a cache folder. Needs NVRTC, no GPU.
#include "iron/runtime/warmup.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "cuda_test_support.hpp"
#include "iron/core/error.hpp"
#include "iron/core/specialization.hpp"
#include "iron/dsl/kernel.hpp"
#include "iron/runtime/compile_records.hpp"
#include "iron/runtime/module_cache.hpp"
#include "iron/runtime/nvrtc.hpp"

namespace iron::runtime {
namespace {

using cuda_test::Contains;
using cuda_test::ScopedEnv;
using cuda_test::TempDir;

TEST(Warmup, CompilesOnceThenFindsTheCache) {
  if (!nvrtc_status().available) GTEST_SKIP() << "no NVRTC: " << nvrtc_status().reason;
  const TempDir dir;
  const ScopedEnv cache("IRON_CACHE_DIR", dir.path().string());
  const std::vector<ir::Kernel> kernels = {dsl::kernel_ir_for("iron_scale", DType::F32),
                                           dsl::kernel_ir_for("iron_scale", DType::BF16)};
  const auto first = warm_module_cache(kernels, 90, 2);
  ASSERT_EQ(first.size(), 2u);
  EXPECT_EQ(first[0].symbol, "iron_scale_f32");
  EXPECT_EQ(first[1].symbol, "iron_scale_bf16");
  for (const WarmupResult& r : first) {
    EXPECT_TRUE(r.compiled) << r.symbol;
    EXPECT_EQ(r.error, "") << r.symbol;
  }
  EXPECT_EQ(module_store()->summary().entries, 2u);
  for (const WarmupResult& r : warm_module_cache(kernels, 90, 1)) {
    EXPECT_FALSE(r.compiled) << r.symbol << " was compiled again";
  }
  EXPECT_EQ(module_store()->summary().entries, 2u);
  // Another architecture is another entry.
  EXPECT_TRUE(warm_module_cache({kernels[0]}, 80, 1)[0].compiled);
  EXPECT_EQ(module_store()->summary().entries, 3u);
  // Each entry has the record of its cold compile, which `iron cache info` reads.
  const BlobStore records = *compile_record_store();
  std::vector<std::string> recorded;
  for (const std::string& key : module_store()->keys()) {
    const std::optional<CompileRecord> record = load_compile_record(records, key);
    ASSERT_TRUE(record.has_value()) << key;
    EXPECT_GT(record->compile_ms, 0.0) << key;
    recorded.push_back(record->symbol + " " + record->arch);
  }
  std::sort(recorded.begin(), recorded.end());
  EXPECT_EQ(recorded, (std::vector<std::string>{"iron_scale_bf16 sm_90", "iron_scale_f32 sm_80",
                                                "iron_scale_f32 sm_90"}));
}

// A form's class is the module it compiles: the quantized GEMV's usual (few-row) module has no
// products, its many-row module multiplies bf16 fragments on the tensor cores, and an f32 GEMM's
// fragments multiply on the CUDA cores.
TEST(Warmup, ProductsAreTheCompiledModules) {
  if (!nvrtc_status().available) GTEST_SKIP() << "no NVRTC: " << nvrtc_status().reason;
  const TempDir dir;
  const ScopedEnv cache("IRON_CACHE_DIR", dir.path().string());
  const ir::Kernel gemv = dsl::kernel_ir_for("iron_gemv_affine_b4_g32", DType::BF16);
  const ir::Kernel scale = dsl::kernel_ir_for("iron_scale", DType::BF16);
  const ir::Kernel gemm = dsl::kernel_ir_for("iron_gemm_nk", DType::F32);
  const std::vector<bool> many_rows =
      ir::specialization_for(gemv, {{"m", 64.0}, {"n", 4096.0}, {"k", 4096.0}});
  ASSERT_EQ(many_rows, std::vector<bool>{false});
  const auto results =
      warm_module_cache(std::vector<WarmupForm>{{gemv, ir::usual_specialization(gemv)},
                                                {gemv, many_rows},
                                                {scale, ir::usual_specialization(scale)},
                                                {gemm, ir::usual_specialization(gemm)}},
                        90, 2);
  ASSERT_EQ(results.size(), 4u);
  for (const WarmupResult& r : results) EXPECT_EQ(r.error, "") << r.symbol;
  EXPECT_EQ(results[0].products, Products::None);
  EXPECT_EQ(results[1].products, Products::TensorCores);
  EXPECT_EQ(results[2].products, Products::None);
  EXPECT_EQ(results[3].products, Products::CudaCores);
}

TEST(CompileRecords, RoundTripAndADamagedRecordIsNone) {
  const TempDir dir;
  const ScopedEnv cache("IRON_CACHE_DIR", dir.path().string());
  store_compile_record("k1", {"iron_softmax_bf16", "sm_90", 61.25});
  const BlobStore records = *compile_record_store();
  const std::optional<CompileRecord> got = load_compile_record(records, "k1");
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->symbol, "iron_softmax_bf16");
  EXPECT_EQ(got->arch, "sm_90");
  EXPECT_DOUBLE_EQ(got->compile_ms, 61.25);
  EXPECT_FALSE(load_compile_record(records, "k2").has_value());
  const std::string two_lines = "iron_softmax_bf16\nsm_90\n";
  records.store("k3", std::as_bytes(std::span(two_lines.data(), two_lines.size())));
  EXPECT_FALSE(load_compile_record(records, "k3").has_value());
  EXPECT_EQ(records.keys(), (std::vector<std::string>{"k1", "k3"}));
}

TEST(Warmup, RefusesWithoutACacheFolder) {
  const ScopedEnv cache("IRON_CACHE_DIR", std::nullopt);
  const ScopedEnv xdg("XDG_CACHE_HOME", std::nullopt);
  const ScopedEnv home("HOME", std::nullopt);
  try {
    warm_module_cache({dsl::kernel_ir_for("iron_scale", DType::F32)}, 90, 1);
    FAIL() << "expected iron::Error";
  } catch (const Error& e) {
    EXPECT_TRUE(Contains(e.what(), "no kernel cache folder to warm"));
  }
}

}  // namespace
}  // namespace iron::runtime
