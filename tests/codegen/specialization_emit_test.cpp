/// Specialized modules of library kernels: each binding of a kernel's specializations compiles
/// the branch it takes alone (with only its shared memory), and no binding compiles both.
#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "iron/codegen/compile.hpp"
#include "iron/core/specialization.hpp"
#include "iron/dsl/kernel.hpp"

namespace iron::codegen {
namespace {

std::size_t occurrences(std::string_view text, std::string_view what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string_view::npos;
       at = text.find(what, at + what.size())) {
    ++n;
  }
  return n;
}

CompiledKernel hopper_gemm(const std::vector<bool>& specialization) {
  TargetProfile target = TargetProfile::cuda(90, MmaStrategy::Wgmma);
  target.tensor_maps = true;
  target.specialization = specialization;
  return compile_kernel(dsl::kernel_ir_for("iron_gemm_warpgroup_nk", DType::BF16), target);
}

TEST(Specialization, TheWarpgroupGemmCompilesOnePathABinding) {
  // k % 8 == 0 on sm_90a's path, the operands' alignment on the others' (dropped here).
  const std::size_t count =
      ir::bindable_specializations(dsl::kernel_ir_for("iron_gemm_warpgroup_nk", DType::BF16))
          .size();
  ASSERT_GE(count, 1u);
  constexpr std::string_view kProduct = "iron_wgmma_bf16_n256<64, 0>(";
  const CompiledKernel both = hopper_gemm({});
  const CompiledKernel aligned = hopper_gemm(std::vector<bool>(count, true));
  const CompiledKernel any_k = hopper_gemm(std::vector<bool>(count, false));
  EXPECT_EQ(occurrences(both.source, kProduct), 2u) << "the TMA ring's and the fallback's";
  EXPECT_EQ(occurrences(aligned.source, kProduct), 1u);
  EXPECT_EQ(occurrences(any_k.source, kProduct), 1u);
  EXPECT_NE(aligned.source.find("iron_tensor_copy("), std::string::npos);
  EXPECT_EQ(any_k.source.find("iron_tensor_copy("), std::string::npos);
  EXPECT_EQ(any_k.source.find("iron_mbarrier_init("), std::string::npos);
  EXPECT_TRUE(any_k.lowered.tensor_maps.empty());
  EXPECT_LT(any_k.lowered.shared_bytes, aligned.lowered.shared_bytes)
      << "without the pipeline its ring is one stage";
  EXPECT_EQ(aligned.lowered.shared_bytes, both.lowered.shared_bytes);
}

TEST(Specialization, StaticToolsCompileTheUnboundKernel) {
  const ir::Kernel traced = dsl::kernel_ir_for("iron_gemv", DType::F16);
  TargetProfile target = TargetProfile::cuda(90);
  const CompiledKernel both = compile_kernel(traced, target);
  target.specialization = ir::usual_specialization(traced);
  const CompiledKernel usual = compile_kernel(traced, target);
  EXPECT_LT(usual.source.size() * 2, both.source.size())
      << "the general path for k % 8 != 0 is most of the unbound kernel";
  EXPECT_EQ(both.source.find("specialize"), std::string::npos);
}

}  // namespace
}  // namespace iron::codegen
