/// Metal Shading Language spellings for the C-like emitter core (Metal 3.0 and newer): where
/// Metal differs from the C++ defaults, and what C++ has no spelling for.
#pragma once

#include "../c_like/dialect.hpp"

namespace iron::codegen::msl {

class MslDialect final : public c_like::Dialect {
 public:
  std::string type(DType t) const override;
  std::string half_type(DType t) const override;
  std::string float_function(ir::OpKind k) const override;
  std::string_view reserved_words() const override;
  std::string float_bits(std::uint32_t bits) const override;
  std::string convert_number(const std::string& expr, DType from, DType to,
                             c_like::Needs& needs) const override;
  std::string float_arithmetic(const std::string& expr, DType t) const override;
  std::string bitcast(const std::string& expr, DType from, DType to) const override;
  std::string builtin(ir::Builtin b, int axis, c_like::Needs& needs) const override;
  std::string simd_reduce(ir::OpKind k, DType t, const std::string& v,
                          c_like::Needs& needs) const override;
  std::string simd_move(ir::OpKind k, DType t, const std::string& v, int operand,
                        c_like::Needs& needs) const override;
  std::string atomic(ir::OpKind k, const c_like::Access& a, const std::string& v,
                     c_like::Needs& needs) const override;
  std::string barrier() const override;
  std::string simdgroup_barrier() const override;
  std::vector<std::string> shared_declaration(const ir::Kernel& kernel, std::size_t index,
                                              bool vector_access) const override;
  std::vector<std::string> async_copy(const c_like::Access& dst, const c_like::Access& src,
                                      const std::string& valid,
                                      c_like::Needs& needs) const override;
  std::string async_commit(c_like::Needs& needs) const override;
  std::string async_wait(int pending, c_like::Needs& needs) const override;
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
  std::string value_param(DType carrier) const override;
  std::string param_binding(std::size_t index) const override;
  std::string launch_comment(const ir::Kernel& kernel) const override;
  std::string_view parameters_heading() const override;

  /// Metal's own vector type of up to 4 lanes ("half4"), or the struct of 4-lane parts that
  /// holds 8 or 16 ("iron_f16x8").
  std::string vector_name(DType t, int lanes) const;
};

}  // namespace iron::codegen::msl
