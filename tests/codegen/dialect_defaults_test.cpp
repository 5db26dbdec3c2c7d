/// The C-like layer's spellings with defaults: what a dialect gets without overriding (C++ type
/// names, C's f32 functions from the op table, pointer parameters), and where CUDA and MSL
/// differ from them.
#include <gtest/gtest.h>

#include <string>

#include "../../src/codegen/c_like/dialect.hpp"
#include "../../src/codegen/c_like/kernel_abi.hpp"
#include "../../src/codegen/cuda/cuda_dialect.hpp"
#include "../../src/codegen/msl/msl_dialect.hpp"
#include "iron/core/error.hpp"

namespace iron::codegen {
namespace {

using c_like::Access;
using c_like::Needs;
using ir::OpKind;

/// A dialect that defines only what C++ cannot spell: everything else is the layer's default.
class MinimalDialect final : public c_like::Dialect {
 public:
  std::string half_type(DType t) const override { return t == DType::F16 ? "f16_t" : "bf16_t"; }
  std::string_view reserved_words() const override { return "builtin_x"; }
  std::string float_bits(std::uint32_t) const override { return "bits"; }
  std::string convert_number(const std::string& expr, DType, DType to, Needs&) const override {
    return "(" + type(to) + ")" + expr;
  }
  std::string bitcast(const std::string& expr, DType, DType) const override { return expr; }
  std::string builtin(ir::Builtin, int, Needs&) const override { return "0u"; }
  std::string simd_reduce(OpKind, DType, const std::string& v, Needs&) const override { return v; }
  std::string simd_move(OpKind, DType, const std::string& v, int, Needs&) const override {
    return v;
  }
  std::string atomic(OpKind, const Access&, const std::string& v, Needs&) const override {
    return v;
  }
  std::string barrier() const override { return "sync();"; }
  std::string simdgroup_barrier() const override { return "sync_simdgroup();"; }
  std::vector<std::string> shared_declaration(const ir::Kernel&, std::size_t, bool) const override {
    return {};
  }
  std::vector<std::string> async_copy(const Access&, const Access&, const std::string&,
                                      Needs&) const override {
    return {};
  }
  std::string async_commit(Needs&) const override { return ""; }
  std::string async_wait(int, Needs&) const override { return ""; }
  std::vector<std::string> fragment_declaration(const std::string&, const ir::FragmentShape&, DType,
                                                const std::string&, Needs&) const override {
    return {};
  }
  std::string fragment_access(const c_like::FragmentAccess&, Needs&) const override { return ""; }
  std::string fragment_product(const c_like::FragmentProduct&, Needs&) const override { return ""; }
  std::string fragment_element(const std::string&, const ir::FragmentShape&, DType,
                               std::uint32_t) const override {
    return "";
  }
  std::string fragment_coord(const std::string&, const ir::FragmentShape&, std::uint32_t, bool,
                             Needs&) const override {
    return "";
  }
  std::string fragment_row_value(const std::string&, const ir::FragmentShape&,
                                 std::uint32_t) const override {
    return "";
  }
  std::string fragment_row_reduce(const std::string&, const std::string&, ir::RowReduction,
                                  Needs&) const override {
    return "";
  }
  std::string fragment_convert(const std::string&, const std::string&, Needs&) const override {
    return "";
  }
  std::string vector_type(DType t, int, Needs&) const override { return type(t); }
  std::string vector_load(const Access& a, Needs&) const override { return a.base; }
  std::vector<std::string> vector_store(const Access&, const std::vector<std::string>&,
                                        Needs&) const override {
    return {};
  }
  std::string extract(const std::string& v, int, int) const override { return v; }
  std::string launch_comment(const ir::Kernel&) const override { return "Launch."; }
};

/// Every op kind with a C math function in the op table.
std::vector<OpKind> math_ops() {
  std::vector<OpKind> kinds;
  for (std::size_t i = 0; i < ir::kOpTable.size(); ++i) {
    if (!ir::kOpTable[i].c_function.empty()) kinds.push_back(static_cast<OpKind>(i));
  }
  return kinds;
}

TEST(DialectDefaults, AreCppSpellings) {
  const MinimalDialect d;
  EXPECT_EQ(d.type(DType::F32), "float");
  EXPECT_EQ(d.type(DType::F16), "f16_t");
  EXPECT_EQ(d.type(DType::BF16), "bf16_t");
  EXPECT_EQ(d.type(DType::U32), "unsigned int");
  EXPECT_EQ(d.type(DType::I8), "signed char");
  EXPECT_EQ(d.type(DType::U16), "unsigned short");
  EXPECT_EQ(d.float_arithmetic("a + b", DType::F16), "a + b");
  EXPECT_EQ(d.pointer_param(DType::F32, false), "const float*");
  EXPECT_EQ(d.pointer_param(DType::U8, true), "unsigned char*");
  EXPECT_EQ(d.value_param(DType::I32), "int");
  EXPECT_EQ(d.param_binding(3), "");
  EXPECT_EQ(d.parameters_heading(), "Arguments");
  Needs needs;
  EXPECT_EQ(d.simd_read(DType::F32, "v1", "v2", needs), "iron_simd_read(v1, v2)");
  EXPECT_TRUE(needs.helpers.contains("iron_simd_read"));
}

TEST(DialectDefaults, FloatFunctionsAreTheOpTablesWithCsSuffix) {
  const MinimalDialect d;
  const cuda::CudaDialect cuda;
  for (const OpKind k : math_ops()) {
    const std::string c(ir::op_info(k).c_function);
    EXPECT_EQ(d.float_function(k), c + "f") << ir::op_name(k);
    EXPECT_EQ(cuda.float_function(k), c + "f") << ir::op_name(k);
  }
  EXPECT_EQ(cuda.float_function(OpKind::Abs), "fabsf");
  EXPECT_EQ(cuda.float_function(OpKind::Rsqrt), "rsqrtf");
  EXPECT_THROW(cuda.float_function(OpKind::Add), InternalError);
}

TEST(DialectDefaults, MslUsesTheCNamesAndItsOwnErf) {
  const msl::MslDialect msl;
  for (const OpKind k : math_ops()) {
    const std::string c(ir::op_info(k).c_function);
    EXPECT_EQ(msl.float_function(k), k == OpKind::Erf ? "iron_erf" : c) << ir::op_name(k);
  }
  EXPECT_THROW(msl.float_function(OpKind::Neg), InternalError);
}

TEST(DialectDefaults, ConversionToBoolComparesWithZeroInF32) {
  const MinimalDialect d;
  const cuda::CudaDialect cuda;
  const msl::MslDialect msl;
  Needs needs;
  EXPECT_EQ(d.convert("x", DType::F32, DType::Bool, needs), "x != 0.0f");
  EXPECT_EQ(d.convert("x", DType::I8, DType::Bool, needs), "x != 0");
  EXPECT_EQ(d.convert("x", DType::U16, DType::Bool, needs), "x != 0u");
  EXPECT_EQ(d.convert("x", DType::F16, DType::Bool, needs), "(float)x != 0.0f");
  EXPECT_EQ(cuda.convert("x", DType::BF16, DType::Bool, needs), "iron_to_f32(x) != 0.0f");
  EXPECT_EQ(msl.convert("x", DType::F16, DType::Bool, needs), "float(x) != 0.0f");
  EXPECT_EQ(d.convert("x", DType::F32, DType::I32, needs), "(int)x");
}

TEST(DialectDefaults, ReservedNamesAreTheDialectsWordsAndFloatFunctions) {
  const MinimalDialect d;
  const std::string reserved = " " + c_like::reserved_names(d) + " ";
  EXPECT_NE(reserved.find(" builtin_x "), std::string::npos);
  for (const OpKind k : math_ops()) {
    EXPECT_NE(reserved.find(" " + d.float_function(k) + " "), std::string::npos) << ir::op_name(k);
  }
  const std::string msl = " " + c_like::reserved_names(msl::MslDialect()) + " ";
  EXPECT_NE(msl.find(" exp2 "), std::string::npos);
  EXPECT_NE(msl.find(" threadgroup "), std::string::npos);
  EXPECT_EQ(msl.find(" exp2f "), std::string::npos);
}

TEST(DialectDefaults, SignatureAndAbiCommentComeFromTheDialect) {
  ir::Kernel k;
  k.name = "k";
  k.params = {{"x", ir::ParamKind::Input, DType::F16},
              {"y", ir::ParamKind::Output, DType::F32},
              {"n", ir::ParamKind::Constexpr, DType::U16}};
  const MinimalDialect d;
  EXPECT_EQ(c_like::param_declarations(k, d),
            (std::vector<std::string>{"const f16_t* x", "float* y", "unsigned int n"}));
  EXPECT_EQ(c_like::abi_comment(k, d),
            (std::vector<std::string>{
                "Launch.", "Arguments, in parameter order (see include/iron/codegen/emit.hpp):",
                "  x: input f16 tensor, as const f16_t*", "  y: output f32 tensor, as float*",
                "  n: constexpr u16 (converted in the kernel), as unsigned int"}));
  const msl::MslDialect msl;
  EXPECT_EQ(c_like::param_declarations(k, msl),
            (std::vector<std::string>{"device const half* x [[buffer(0)]]",
                                      "device float* y [[buffer(1)]]",
                                      "constant uint& n [[buffer(2)]]"}));
  EXPECT_EQ(c_like::abi_comment(k, msl)[4],
            "  [[buffer(2)]] n: constexpr u16 (converted in the kernel), as constant uint&");
  const cuda::CudaDialect cuda;
  EXPECT_EQ(c_like::param_declarations(k, cuda)[0], "const iron_f16* __restrict__ x");
}

}  // namespace
}  // namespace iron::codegen
