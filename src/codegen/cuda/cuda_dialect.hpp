/// CUDA C++ spellings for the C-like emitter core (NVRTC, sm_80 and newer): where CUDA differs
/// from the C++ defaults, and what C++ has no spelling for.
#pragma once

#include "../c_like/dialect.hpp"
#include "iron/codegen/target.hpp"

namespace iron::codegen::cuda {

class CudaDialect final : public c_like::Dialect {
 public:
  /// `mma` is the strategy the kernel is lowered with: wmma only for a kernel wmma_fits, whose
  /// B tiles are row_major when `wmma_row_major_b` (see cuda_wmma.hpp).
  explicit CudaDialect(MmaStrategy mma = MmaStrategy::MmaSync, bool wmma_row_major_b = false)
      : mma_(mma), wmma_row_major_b_(wmma_row_major_b) {}

  /// Whether f16/bf16 are the toolkit headers' __half and __nv_bfloat16 (wmma needs them), not
  /// the prelude's iron_f16 and iron_bf16 (cuda_halves.hpp).
  bool header_halves() const { return mma_ == MmaStrategy::Wmma; }
  /// `expr` of the float type `from` as an f32 expression.
  std::string to_f32(const std::string& expr, DType from) const;
  /// The f32 expression `f` rounded once to the float type `to`.
  std::string from_f32(const std::string& f, DType to) const;

  std::string half_type(DType t) const override;
  std::string float_function(ir::OpKind k) const override;
  std::string_view reserved_words() const override;
  std::string float_bits(std::uint32_t bits) const override;
  std::string convert_number(const std::string& expr, DType from, DType to,
                             c_like::Needs& needs) const override;
  std::string bitcast(const std::string& expr, DType from, DType to) const override;
  std::string builtin(ir::Builtin b, int axis, c_like::Needs& needs) const override;
  std::string simd_reduce(ir::OpKind k, DType t, const std::string& v,
                          c_like::Needs& needs) const override;
  std::string simd_move(ir::OpKind k, DType t, const std::string& v, int operand,
                        c_like::Needs& needs) const override;
  std::string atomic(ir::OpKind k, const c_like::Access& a, const std::string& v,
                     c_like::Needs& needs) const override;
  std::string barrier() const override;
  std::string barrier_among(std::uint32_t threads) const override;
  std::string simdgroup_barrier() const override;
  std::string rolled_loop() const override;
  std::vector<std::string> shared_declaration(const ir::Kernel& kernel, std::size_t index,
                                              bool vector_access) const override;
  std::vector<std::string> async_copy(const c_like::Access& dst, const c_like::Access& src,
                                      const std::string& valid,
                                      c_like::Needs& needs) const override;
  std::string async_commit(c_like::Needs& needs) const override;
  std::string async_wait(int pending, c_like::Needs& needs) const override;
  std::string warpgroup_product(const c_like::WarpgroupProduct& p,
                                c_like::Needs& needs) const override;
  std::string warpgroup_commit(c_like::Needs& needs) const override;
  std::string warpgroup_wait(const std::string& d, std::uint32_t n, int pending,
                             c_like::Needs& needs) const override;
  std::string proxy_fence(c_like::Needs& needs) const override;
  std::string register_budget(std::int64_t count, bool raise, c_like::Needs& needs) const override;
  std::string turn(ir::TurnStep step, std::uint32_t warpgroups,
                   c_like::Needs& needs) const override;
  std::string tensor_map_param(std::size_t k) const override;
  std::string tensor_map_name(std::size_t k) const override;
  std::string tensor_copy(const std::string& dst, std::size_t map,
                          const std::vector<std::string>& coordinates, const std::string& bar,
                          c_like::Needs& needs) const override;
  std::string mbarrier(ir::OpKind kind, const std::string& bar, std::int64_t count,
                       const std::string& parity, c_like::Needs& needs) const override;
  std::vector<std::string> fragment_declaration(const std::string& name,
                                                const ir::FragmentShape& shape, DType t,
                                                const std::string& init,
                                                c_like::Needs& needs) const override;
  std::string fragment_access(const c_like::FragmentAccess& f, c_like::Needs& needs) const override;
  std::string fragment_product(const c_like::FragmentProduct& p,
                               c_like::Needs& needs) const override;
  std::string fragment_element(const std::string& name, const ir::FragmentShape& shape, DType t,
                               std::uint32_t slot) const override;
  std::string fragment_coord(const std::string& name, const ir::FragmentShape& shape,
                             std::uint32_t slot, bool column, c_like::Needs& needs) const override;
  std::string fragment_row_value(const std::string& rows, const ir::FragmentShape& shape,
                                 std::uint32_t slot) const override;
  std::string fragment_row_reduce(const std::string& rows, const std::string& source,
                                  ir::RowReduction reduction, c_like::Needs& needs) const override;
  std::string fragment_convert(const std::string& a, const std::string& source,
                               c_like::Needs& needs) const override;
  std::string vector_type(DType t, int lanes, c_like::Needs& needs) const override;
  std::string vector_load(const c_like::Access& a, c_like::Needs& needs) const override;
  std::vector<std::string> vector_store(const c_like::Access& a,
                                        const std::vector<std::string>& values,
                                        c_like::Needs& needs) const override;
  std::string extract(const std::string& v, int lanes, int lane) const override;
  std::string pointer_param(DType t, bool writes) const override;
  std::string launch_comment(const ir::Kernel& kernel) const override;

  /// The name of the struct of `lanes` elements of `t` ("iron_f16x8").
  static std::string vector_name(DType t, int lanes);

 private:
  /// Whether fragments go through mma.sync and ldmatrix (the mmasync and wgmma strategies).
  bool mma_sync() const { return mma_ == MmaStrategy::MmaSync || mma_ == MmaStrategy::Wgmma; }
  /// Whether the strategy is wmma and holds a fragment of `shape` as wmma tiles.
  bool wmma_holds(const ir::FragmentShape& shape) const;

  MmaStrategy mma_;
  bool wmma_row_major_b_;
};

}  // namespace iron::codegen::cuda
