// The GEMMs' staged epilogues after the compiler: each thread's run of 8 sums read from shared
// memory as two 16-byte reads (8 scalar reads put 8 lanes on one bank, bench/NOTES.md §68) and
// written to out as one 16-byte store. Both are vectorize's merges, which an index written
// another way silently undoes; the emitted code's speed rests on them.
#include <gtest/gtest.h>

#include <string>

#include "iron/codegen/pipeline.hpp"
#include "iron/core/printer.hpp"
#include "iron/dsl/tuning.hpp"
#include "iron/iron.hpp"

namespace {
namespace ir = iron::ir;
namespace codegen = iron::codegen;

struct Accesses {
  int shared_reads_of_4 = 0;  ///< 16-byte f32 reads of shared memory
  int scalar_shared_f32_reads = 0;
  int tensor_stores_of_8 = 0;  ///< 16-byte bf16 stores
  /// 16-byte shared reads walked after the first 16-byte store: a thread's runs read first, then
  /// handed on (hand_on_runs's TOGETHER), leave none.
  int shared_reads_of_4_after_a_store = 0;
};

Accesses accesses_of(const std::string& kernel, const iron::dsl::TuningConfig& config,
                     const codegen::TargetProfile& target, std::string& printed) {
  const codegen::PipelineResult r =
      codegen::run_pipeline(iron::dsl::kernel_ir_for(kernel, iron::DType::BF16, config), target);
  printed = ir::print_kernel(r.kernel);
  Accesses a;
  ir::walk(r.kernel.body, [&](const ir::Op& op) {
    const bool f32 = op.type == iron::DType::F32;
    if (op.kind == ir::OpKind::SharedLoad && f32) {
      a.shared_reads_of_4 += op.lanes == 4;
      a.shared_reads_of_4_after_a_store += op.lanes == 4 && a.tensor_stores_of_8 > 0;
      a.scalar_shared_f32_reads += op.lanes == 1;
    }
    a.tensor_stores_of_8 += op.kind == ir::OpKind::Store && op.lanes == 8;
  });
  return a;
}

TEST(StagedEpilogueAccesses, WarpgroupProductReadsRunsIn16BytesAndStoresThemIn16Bytes) {
  for (const iron::dsl::TuningConfig& config :
       {iron::dsl::TuningConfig{}, iron::dsl::TuningConfig{{"persistent", 1}}}) {
    std::string printed;
    const Accesses a =
        accesses_of("iron_gemm_warpgroup_nk", config,
                    codegen::TargetProfile::cuda(90, codegen::MmaStrategy::Wgmma), printed);
    SCOPED_TRACE(config.empty() ? "one tile a group" : "persistent");
    // A lane's two runs of a band, each read as two halves, all four before either store.
    EXPECT_EQ(a.shared_reads_of_4, 4) << printed;
    EXPECT_EQ(a.tensor_stores_of_8, 2) << printed;
    EXPECT_EQ(a.shared_reads_of_4_after_a_store, 0) << printed;
    // The checked path (tiles at out's edges) reads one sum at a time.
    EXPECT_EQ(a.scalar_shared_f32_reads, 1) << printed;
  }
}

TEST(StagedEpilogueAccesses, FragmentProductReadsRunsIn16BytesAndStoresThemIn16Bytes) {
  std::string printed;
  const Accesses a = accesses_of("iron_gemm_nk", {}, codegen::TargetProfile::cuda(90), printed);
  EXPECT_GE(a.shared_reads_of_4, 2) << printed;
  EXPECT_EQ(a.shared_reads_of_4 % 2, 0) << printed;
  EXPECT_GE(a.tensor_stores_of_8, 1) << printed;
  EXPECT_EQ(a.shared_reads_of_4, 2 * a.tensor_stores_of_8) << printed;
}

}  // namespace
