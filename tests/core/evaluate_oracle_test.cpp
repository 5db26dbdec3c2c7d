/// ir::evaluate against results worked out by hand from each op's definition (IEEE round to
/// nearest even in f32, f16 and bf16, two's-complement wrap-around, C's truncating division,
/// saturating float-to-integer casts), never from the implementation, for a few values per op;
/// and the outcomes that keep a result out of constant folding.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <string>
#include <vector>

#include "iron/core/evaluate.hpp"

namespace iron::evaluate_test {
namespace {

using ir::OpKind;
using ir::Outcome;

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr std::int64_t kIntMin = -2147483648LL;

/// A float operand of type t (a value the type holds exactly).
ir::ScalarValue real(DType t, float v) { return {t, std::bit_cast<std::uint32_t>(v)}; }

/// An integer or bool operand of type t: the bits of `v` as the type holds them, by hand.
ir::ScalarValue whole(DType t, std::int64_t v) {
  const auto low32 = static_cast<std::uint32_t>(v);
  switch (t) {
    case DType::U8:
      return {t, low32 & 0xFFu};
    case DType::U16:
      return {t, low32 & 0xFFFFu};
    case DType::I8:
      return {t, static_cast<std::uint32_t>(static_cast<std::int32_t>(
                     static_cast<std::int8_t>(static_cast<std::uint8_t>(low32 & 0xFFu))))};
    default:
      return {t, low32};
  }
}

ir::Evaluation eval(OpKind k, DType t, std::initializer_list<ir::ScalarValue> operands) {
  const std::vector<ir::ScalarValue> v(operands);
  std::vector<DType> types(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) types[i] = v[i].type;
  EXPECT_TRUE(ir::can_evaluate(k, t, types)) << ir::op_name(k) << " on " << dtype_name(t);
  return ir::evaluate(k, t, v);
}

/// Expects the defined float result `want` (compared bit for bit, so the sign of zero counts).
void expect_real(ir::Evaluation e, DType t, float want, const std::string& what) {
  EXPECT_EQ(e.outcome, Outcome::Defined) << what;
  EXPECT_EQ(e.value.type, t) << what;
  EXPECT_EQ(e.value.bits, std::bit_cast<std::uint32_t>(want))
      << what << ": got " << e.value.as_float() << ", want " << want;
}

/// Expects the defined integer (or bool) result `want`.
void expect_whole(ir::Evaluation e, DType t, std::int64_t want, const std::string& what) {
  EXPECT_EQ(e.outcome, Outcome::Defined) << what;
  EXPECT_EQ(e.value, whole(t, want)) << what << ": got " << e.value.as_int() << ", want " << want;
}

TEST(EvaluateOracle, UnaryOps) {
  const DType f = DType::F32;
  expect_real(eval(OpKind::Neg, f, {real(f, 0.0f)}), f, -0.0f, "neg 0");
  expect_whole(eval(OpKind::Neg, DType::I8, {whole(DType::I8, -128)}), DType::I8, -128,
               "neg i8 -128 wraps");
  expect_whole(eval(OpKind::Neg, DType::I32, {whole(DType::I32, kIntMin)}), DType::I32, kIntMin,
               "neg INT_MIN wraps");
  expect_whole(eval(OpKind::Not, DType::U8, {whole(DType::U8, 0)}), DType::U8, 255, "not u8 0");
  expect_whole(eval(OpKind::Not, DType::I32, {whole(DType::I32, 0)}), DType::I32, -1, "not i32 0");
  expect_whole(eval(OpKind::Not, DType::Bool, {whole(DType::Bool, 1)}), DType::Bool, 0, "not true");
  expect_real(eval(OpKind::Sqrt, f, {real(f, 6.25f)}), f, 2.5f, "sqrt 6.25");
  expect_real(eval(OpKind::Rsqrt, f, {real(f, 4.0f)}), f, 0.5f, "rsqrt 4");
  expect_real(eval(OpKind::Exp, f, {real(f, 0.0f)}), f, 1.0f, "exp 0");
  expect_real(eval(OpKind::Exp2, f, {real(f, 10.0f)}), f, 1024.0f, "exp2 10");
  expect_real(eval(OpKind::Log, f, {real(f, 1.0f)}), f, 0.0f, "log 1");
  expect_real(eval(OpKind::Log, f, {real(f, 0.0f)}), f, -kInf, "log 0");
  expect_real(eval(OpKind::Log2, f, {real(f, 8.0f)}), f, 3.0f, "log2 8");
  expect_real(eval(OpKind::Sin, f, {real(f, -0.0f)}), f, -0.0f, "sin -0");
  expect_real(eval(OpKind::Cos, f, {real(f, 0.0f)}), f, 1.0f, "cos 0");
  expect_real(eval(OpKind::Tanh, f, {real(f, kInf)}), f, 1.0f, "tanh inf");
  expect_real(eval(OpKind::Erf, f, {real(f, -kInf)}), f, -1.0f, "erf -inf");
  expect_real(eval(OpKind::Abs, f, {real(f, -0.0f)}), f, 0.0f, "abs -0");
  expect_whole(eval(OpKind::Abs, DType::I32, {whole(DType::I32, -7)}), DType::I32, 7, "abs -7");
  expect_whole(eval(OpKind::Abs, DType::I8, {whole(DType::I8, -128)}), DType::I8, -128,
               "abs i8 -128 wraps");
  expect_real(eval(OpKind::Recip, f, {real(f, 4.0f)}), f, 0.25f, "recip 4");
  expect_real(eval(OpKind::Recip, f, {real(f, -0.0f)}), f, -kInf, "recip -0");
  expect_real(eval(OpKind::Floor, f, {real(f, -1.5f)}), f, -2.0f, "floor -1.5");
  expect_real(eval(OpKind::Ceil, f, {real(f, -1.5f)}), f, -1.0f, "ceil -1.5");
  expect_real(eval(OpKind::Ceil, f, {real(f, -0.5f)}), f, -0.0f, "ceil -0.5");
  EXPECT_NEAR(eval(OpKind::Sin, f, {real(f, 1.0f)}).value.as_float(), 0.841470985f, 1e-7f);
  EXPECT_EQ(eval(OpKind::Sqrt, f, {real(f, -1.0f)}).outcome, Outcome::NotANumber);
  EXPECT_EQ(eval(OpKind::Log, f, {real(f, -1.0f)}).outcome, Outcome::NotANumber);
}

/// The approximate ops evaluate to their exact function with subnormal operands and results
/// flushed to the zero of their sign, as PTX's ex2.approx.ftz and rcp.approx.ftz do.
TEST(EvaluateOracle, ApproximateOpsAreTheirFunctionWithSubnormalsFlushed) {
  const DType f = DType::F32;
  expect_real(eval(OpKind::Exp2Approx, f, {real(f, 10.0f)}), f, 1024.0f, "exp2.approx 10");
  expect_real(eval(OpKind::Exp2Approx, f, {real(f, -126.0f)}), f, 0x1p-126f,
              "exp2.approx -126: the smallest normal stays");
  expect_real(eval(OpKind::Exp2Approx, f, {real(f, -130.0f)}), f, 0.0f,
              "exp2.approx -130: a subnormal result flushes");
  expect_real(eval(OpKind::Exp2Approx, f, {real(f, -kInf)}), f, 0.0f, "exp2.approx -inf");
  expect_real(eval(OpKind::Exp2Approx, f, {real(f, kInf)}), f, kInf, "exp2.approx inf");
  expect_real(eval(OpKind::RecipApprox, f, {real(f, 4.0f)}), f, 0.25f, "recip.approx 4");
  expect_real(eval(OpKind::RecipApprox, f, {real(f, -0.0f)}), f, -kInf, "recip.approx -0");
  expect_real(eval(OpKind::RecipApprox, f, {real(f, -1e-40f)}), f, -kInf,
              "recip.approx of a subnormal: its operand flushes to -0");
  expect_real(eval(OpKind::RecipApprox, f, {real(f, 0x1p127f)}), f, 0.0f,
              "recip.approx 2^127: the subnormal 2^-127 flushes");
  expect_real(eval(OpKind::RecipApprox, f, {real(f, -0x1p127f)}), f, -0.0f,
              "recip.approx -2^127: to the zero of its sign");
  expect_real(eval(OpKind::RecipApprox, DType::F16, {real(DType::F16, 3.0f)}), DType::F16,
              0.333251953125f, "recip.approx f16 3 rounds once to f16");
  EXPECT_EQ(eval(OpKind::Exp2Approx, f, {real(f, kNaN)}).outcome, Outcome::NotANumber);
}

TEST(EvaluateOracle, HalfAndBfloat16RoundToNearestEvenAfterEveryOp) {
  const DType h = DType::F16;
  const DType b = DType::BF16;
  // f16 has 11 significant bits: between 2048 and 4096 the spacing is 2.
  expect_real(eval(OpKind::Add, h, {real(h, 2048.0f), real(h, 1.0f)}), h, 2048.0f,
              "2049 ties to the even 2048");
  expect_real(eval(OpKind::Add, h, {real(h, 2048.0f), real(h, 3.0f)}), h, 2052.0f,
              "2051 ties to the even 2052");
  expect_real(eval(OpKind::Add, h, {real(h, 65504.0f), real(h, 8.0f)}), h, 65504.0f,
              "65512 rounds down to the largest f16");
  expect_real(eval(OpKind::Add, h, {real(h, 65504.0f), real(h, 16.0f)}), h, kInf,
              "65520 ties away from the largest f16, to infinity");
  const float tiny = std::ldexp(1.0f, -24);  // the smallest f16 denormal
  expect_real(eval(OpKind::Mul, h, {real(h, tiny), real(h, 0.5f)}), h, 0.0f,
              "half the smallest denormal ties to 0");
  expect_real(eval(OpKind::Mul, h, {real(h, tiny), real(h, 0.75f)}), h, tiny,
              "three quarters of the smallest denormal rounds up to it");
  // bf16 has 8 significant bits: between 1 and 2 the spacing is 2^-7.
  expect_real(eval(OpKind::Add, b, {real(b, 1.0f), real(b, std::ldexp(1.0f, -8))}), b, 1.0f,
              "1 + 2^-8 ties to the even 1");
  expect_real(eval(OpKind::Add, b, {real(b, 1.0f), real(b, 3 * std::ldexp(1.0f, -8))}), b,
              1.0f + std::ldexp(1.0f, -6), "1 + 3 * 2^-8 ties to the even 1 + 2^-6");
  expect_real(eval(OpKind::Div, b, {real(b, 1.0f), real(b, 3.0f)}), b, 0.333984375f, "1/3 in bf16");
  expect_real(eval(OpKind::Div, h, {real(h, 1.0f), real(h, 3.0f)}), h, 0.333251953125f,
              "1/3 in f16");
}

TEST(EvaluateOracle, IntegerArithmeticWrapsAndTruncates) {
  expect_whole(eval(OpKind::Add, DType::U8, {whole(DType::U8, 200), whole(DType::U8, 100)}),
               DType::U8, 44, "200 + 100 in u8");
  expect_whole(eval(OpKind::Add, DType::I8, {whole(DType::I8, 127), whole(DType::I8, 1)}),
               DType::I8, -128, "127 + 1 in i8");
  expect_whole(eval(OpKind::Sub, DType::U32, {whole(DType::U32, 0), whole(DType::U32, 1)}),
               DType::U32, 4294967295, "0 - 1 in u32");
  expect_whole(eval(OpKind::Mul, DType::I32, {whole(DType::I32, 65536), whole(DType::I32, 65536)}),
               DType::I32, 0, "2^16 * 2^16 in i32");
  expect_whole(eval(OpKind::Mul, DType::U8, {whole(DType::U8, 16), whole(DType::U8, 17)}),
               DType::U8, 16, "16 * 17 in u8");
  expect_whole(eval(OpKind::Div, DType::I32, {whole(DType::I32, -7), whole(DType::I32, 2)}),
               DType::I32, -3, "-7 / 2 truncates toward zero");
  expect_whole(eval(OpKind::Rem, DType::I32, {whole(DType::I32, -7), whole(DType::I32, 2)}),
               DType::I32, -1, "-7 % 2 takes the dividend's sign");
  expect_whole(eval(OpKind::Rem, DType::I32, {whole(DType::I32, 7), whole(DType::I32, -2)}),
               DType::I32, 1, "7 % -2");
  expect_whole(eval(OpKind::Div, DType::U32, {whole(DType::U32, 4294967295), whole(DType::U32, 2)}),
               DType::U32, 2147483647, "u32 division is unsigned");
  expect_whole(eval(OpKind::Div, DType::I8, {whole(DType::I8, -128), whole(DType::I8, -1)}),
               DType::I8, -128, "i8 -128 / -1: 128 in int, wrapped to i8");
  expect_whole(eval(OpKind::Min, DType::U32, {whole(DType::U32, 4294967295), whole(DType::U32, 1)}),
               DType::U32, 1, "min is unsigned on u32");
  expect_whole(eval(OpKind::Max, DType::I32, {whole(DType::I32, -1), whole(DType::I32, 1)}),
               DType::I32, 1, "max is signed on i32");
  expect_whole(eval(OpKind::And, DType::U8, {whole(DType::U8, 0xF0), whole(DType::U8, 0x3C)}),
               DType::U8, 0x30, "and");
  expect_whole(eval(OpKind::Or, DType::Bool, {whole(DType::Bool, 1), whole(DType::Bool, 0)}),
               DType::Bool, 1, "or of bools");
  expect_whole(eval(OpKind::Xor, DType::I32, {whole(DType::I32, -1), whole(DType::I32, 1)}),
               DType::I32, -2, "xor");
}

TEST(EvaluateOracle, ShiftsDefinedBelowTheWidthOnNonNegativeValues) {
  expect_whole(eval(OpKind::Shl, DType::U8, {whole(DType::U8, 1), whole(DType::U8, 7)}), DType::U8,
               128, "1 << 7 in u8");
  expect_whole(eval(OpKind::Shl, DType::U8, {whole(DType::U8, 3), whole(DType::U8, 7)}), DType::U8,
               128, "3 << 7 in u8 keeps the low byte");
  expect_whole(eval(OpKind::Shl, DType::I32, {whole(DType::I32, 1), whole(DType::I32, 31)}),
               DType::I32, kIntMin, "1 << 31 in i32");
  expect_whole(
      eval(OpKind::Shr, DType::U32, {whole(DType::U32, 0x80000000), whole(DType::U32, 31)}),
      DType::U32, 1, "u32 shr is logical");
  expect_whole(eval(OpKind::Shr, DType::I8, {whole(DType::I8, 64), whole(DType::I8, 6)}), DType::I8,
               1, "64 >> 6 in i8");
  const auto undefined = [](OpKind k, DType t, std::int64_t a, std::int64_t by) {
    return eval(k, t, {whole(t, a), whole(t, by)}).outcome == Outcome::Undefined;
  };
  EXPECT_TRUE(undefined(OpKind::Shl, DType::U8, 1, 8)) << "a shift by the width";
  EXPECT_TRUE(undefined(OpKind::Shl, DType::U32, 1, 32)) << "a shift by the width";
  EXPECT_TRUE(undefined(OpKind::Shr, DType::U16, 1, 40)) << "a shift past the width";
  EXPECT_TRUE(undefined(OpKind::Shl, DType::I32, 1, -1)) << "a negative amount";
  EXPECT_TRUE(undefined(OpKind::Shl, DType::I32, -1, 1)) << "a negative value";
  EXPECT_TRUE(undefined(OpKind::Shr, DType::I8, -8, 1)) << "a negative value";
}

TEST(EvaluateOracle, DivisionOutcomes) {
  const DType f = DType::F32;
  EXPECT_EQ(eval(OpKind::Div, DType::U8, {whole(DType::U8, 5), whole(DType::U8, 0)}).outcome,
            Outcome::DivisionByZero);
  EXPECT_EQ(eval(OpKind::Rem, DType::I32, {whole(DType::I32, 5), whole(DType::I32, 0)}).outcome,
            Outcome::DivisionByZero);
  EXPECT_EQ(
      eval(OpKind::Div, DType::I32, {whole(DType::I32, kIntMin), whole(DType::I32, -1)}).outcome,
      Outcome::Undefined);
  EXPECT_EQ(
      eval(OpKind::Rem, DType::I32, {whole(DType::I32, kIntMin), whole(DType::I32, -1)}).outcome,
      Outcome::Undefined);
  expect_real(eval(OpKind::Div, f, {real(f, 1.0f), real(f, -0.0f)}), f, -kInf, "1 / -0");
  EXPECT_EQ(eval(OpKind::Div, f, {real(f, 0.0f), real(f, 0.0f)}).outcome, Outcome::NotANumber);
  expect_real(eval(OpKind::Rem, f, {real(f, -5.5f), real(f, 2.0f)}), f, -1.5f,
              "fmod takes the dividend's sign");
  EXPECT_EQ(eval(OpKind::Rem, f, {real(f, kInf), real(f, 2.0f)}).outcome, Outcome::NotANumber);
}

TEST(EvaluateOracle, FloatMinMaxPowAtan2) {
  const DType f = DType::F32;
  expect_real(eval(OpKind::Max, f, {real(f, kNaN), real(f, 2.0f)}), f, 2.0f,
              "max of NaN and 2 is 2");
  expect_real(eval(OpKind::Min, f, {real(f, -3.0f), real(f, kNaN)}), f, -3.0f,
              "min of -3 and NaN is -3");
  expect_real(eval(OpKind::Min, f, {real(f, -kInf), real(f, 2.0f)}), f, -kInf, "min with -inf");
  EXPECT_EQ(eval(OpKind::Min, f, {real(f, 0.0f), real(f, -0.0f)}).outcome, Outcome::Undefined)
      << "which zero min(+0, -0) gives is not defined";
  EXPECT_EQ(eval(OpKind::Max, f, {real(f, -0.0f), real(f, 0.0f)}).outcome, Outcome::Undefined);
  EXPECT_EQ(eval(OpKind::Max, f, {real(f, kNaN), real(f, kNaN)}).outcome, Outcome::NotANumber);
  expect_real(eval(OpKind::Pow, f, {real(f, 2.0f), real(f, 10.0f)}), f, 1024.0f, "2^10");
  expect_real(eval(OpKind::Pow, f, {real(f, kNaN), real(f, 0.0f)}), f, 1.0f, "anything^0 is 1");
  EXPECT_EQ(eval(OpKind::Pow, f, {real(f, -8.0f), real(f, 0.5f)}).outcome, Outcome::NotANumber);
  expect_real(eval(OpKind::Atan2, f, {real(f, 0.0f), real(f, 1.0f)}), f, 0.0f, "atan2(0, 1)");
  EXPECT_NEAR(eval(OpKind::Atan2, f, {real(f, 1.0f), real(f, 1.0f)}).value.as_float(), 0.785398163f,
              1e-7f);
}

TEST(EvaluateOracle, ComparesInTheOperandsType) {
  const auto truth = [](OpKind k, ir::ScalarValue a, ir::ScalarValue b) {
    const ir::Evaluation e = eval(k, DType::Bool, {a, b});
    EXPECT_EQ(e.outcome, Outcome::Defined);
    EXPECT_EQ(e.value.type, DType::Bool);
    return e.value.bits;
  };
  const DType f = DType::F32;
  EXPECT_EQ(truth(OpKind::Lt, whole(DType::I32, -1), whole(DType::I32, 1)), 1u);
  EXPECT_EQ(truth(OpKind::Lt, whole(DType::U32, 4294967295), whole(DType::U32, 1)), 0u);
  EXPECT_EQ(truth(OpKind::Lt, whole(DType::I8, -128), whole(DType::I8, 127)), 1u);
  EXPECT_EQ(truth(OpKind::Gt, whole(DType::U8, 255), whole(DType::U8, 0)), 1u);
  EXPECT_EQ(truth(OpKind::Eq, real(f, kNaN), real(f, kNaN)), 0u);
  EXPECT_EQ(truth(OpKind::Ne, real(f, kNaN), real(f, kNaN)), 1u);
  EXPECT_EQ(truth(OpKind::Ge, real(f, kNaN), real(f, 1.0f)), 0u);
  EXPECT_EQ(truth(OpKind::Eq, real(f, -0.0f), real(f, 0.0f)), 1u);
  EXPECT_EQ(truth(OpKind::Le, real(f, -kInf), real(f, -3.0f)), 1u);
  EXPECT_EQ(truth(OpKind::Ge, whole(DType::Bool, 1), whole(DType::Bool, 0)), 1u);
}

TEST(EvaluateOracle, SelectAndFusedMultiplyAdd) {
  const DType f = DType::F32;
  const ir::ScalarValue yes = whole(DType::Bool, 1);
  const ir::ScalarValue no = whole(DType::Bool, 0);
  expect_whole(eval(OpKind::Select, DType::I32, {yes, whole(DType::I32, 4), whole(DType::I32, 5)}),
               DType::I32, 4, "select true");
  expect_whole(eval(OpKind::Select, DType::I32, {no, whole(DType::I32, 4), whole(DType::I32, 5)}),
               DType::I32, 5, "select false");
  EXPECT_EQ(eval(OpKind::Select, f, {yes, real(f, kNaN), real(f, 1.0f)}).outcome, Outcome::Defined)
      << "a select moves a NaN, it makes none";
  // (1 + 2^-12)^2 - (1 + 2^-11) is exactly 2^-24; unfused, the product rounds to 1 + 2^-11.
  const float a = 1.0f + std::ldexp(1.0f, -12);
  const float c = -(1.0f + std::ldexp(1.0f, -11));
  expect_real(eval(OpKind::Fma, f, {real(f, a), real(f, a), real(f, c)}), f, std::ldexp(1.0f, -24),
              "fma rounds once");
  const DType h = DType::F16;
  expect_real(eval(OpKind::Fma, h, {real(h, 2048.0f), real(h, 1.0f), real(h, 1.0f)}), h, 2048.0f,
              "an f16 fma rounds to f16");
}

TEST(EvaluateOracle, CastsTruncateSaturateAndRound) {
  const DType f = DType::F32;
  const auto cast = [](DType to, ir::ScalarValue v) { return eval(OpKind::Cast, to, {v}); };
  expect_whole(cast(DType::I32, real(f, 3.7f)), DType::I32, 3, "3.7 -> i32");
  expect_whole(cast(DType::I32, real(f, -3.7f)), DType::I32, -3, "-3.7 -> i32");
  expect_whole(cast(DType::I32, real(f, 1e10f)), DType::I32, 2147483647, "1e10 saturates");
  expect_whole(cast(DType::I32, real(f, -kInf)), DType::I32, kIntMin, "-inf saturates");
  expect_whole(cast(DType::U32, real(f, kNaN)), DType::U32, 0, "NaN -> 0");
  expect_whole(cast(DType::U8, real(f, 300.0f)), DType::U8, 255, "300 -> u8 saturates");
  expect_whole(cast(DType::U8, real(f, -1.0f)), DType::U8, 0, "-1 -> u8 saturates");
  expect_whole(cast(DType::I8, real(f, -200.5f)), DType::I8, -128, "-200.5 -> i8 saturates");
  expect_whole(cast(DType::Bool, real(f, 0.5f)), DType::Bool, 1, "0.5 -> bool");
  expect_whole(cast(DType::Bool, real(f, -0.0f)), DType::Bool, 0, "-0 -> bool");
  expect_whole(cast(DType::Bool, real(f, kNaN)), DType::Bool, 1, "NaN -> bool");
  expect_whole(cast(DType::Bool, whole(DType::I32, 256)), DType::Bool, 1, "256 -> bool is != 0");
  expect_whole(cast(DType::U8, whole(DType::I32, -1)), DType::U8, 255, "-1 -> u8 wraps");
  expect_whole(cast(DType::I32, whole(DType::U32, 4294967295)), DType::I32, -1, "u32 max -> i32");
  expect_whole(cast(DType::U32, whole(DType::I8, -1)), DType::U32, 4294967295,
               "i8 -1 -> u32 sign-extends");
  expect_whole(cast(DType::I8, whole(DType::U8, 255)), DType::I8, -1, "u8 255 -> i8");
  expect_real(cast(DType::F32, whole(DType::I32, 16777217)), f, 16777216.0f,
              "2^24 + 1 ties to the even 2^24 in f32");
  expect_real(cast(DType::F16, whole(DType::I32, 65519)), DType::F16, 65504.0f,
              "65519 -> f16 rounds down");
  expect_real(cast(DType::F16, whole(DType::I32, 65520)), DType::F16, kInf,
              "65520 -> f16 overflows");
  expect_real(cast(DType::F16, real(f, 1.0f + std::ldexp(1.0f, -11))), DType::F16, 1.0f,
              "1 + 2^-11 -> f16 ties to the even 1");
  expect_real(cast(DType::F16, real(f, 1.0f + 3 * std::ldexp(1.0f, -11))), DType::F16,
              1.0f + std::ldexp(1.0f, -9), "1 + 3 * 2^-11 -> f16 ties to the even 1 + 2^-9");
  expect_real(cast(DType::BF16, real(f, 65504.0f)), DType::BF16, 65536.0f,
              "65504 -> bf16 rounds up to 2^16");
  expect_real(cast(DType::F32, whole(DType::Bool, 1)), f, 1.0f, "true -> f32");
  EXPECT_EQ(cast(DType::F16, real(f, kNaN)).outcome, Outcome::NotANumber);
}

TEST(EvaluateOracle, BitcastsReinterpretTheBytesInMemory) {
  const auto bitcast = [](DType to, ir::ScalarValue v) { return eval(OpKind::Bitcast, to, {v}); };
  const DType f = DType::F32;
  expect_whole(bitcast(DType::U32, real(f, 1.0f)), DType::U32, 0x3F800000, "1.0 -> u32");
  expect_whole(bitcast(DType::I32, real(f, -0.0f)), DType::I32, kIntMin, "-0 -> i32");
  expect_real(bitcast(f, whole(DType::U32, 0x7F800000)), f, kInf, "0x7f800000 -> f32");
  expect_whole(bitcast(DType::U16, real(DType::F16, 1.0f)), DType::U16, 0x3C00, "f16 1 -> u16");
  expect_whole(bitcast(DType::U16, real(DType::BF16, -2.0f)), DType::U16, 0xC000, "bf16 -2 -> u16");
  expect_real(bitcast(DType::BF16, whole(DType::U16, 0x3C00)), DType::BF16, 0.0078125f,
              "0x3c00 -> bf16 is 2^-7");
  expect_real(bitcast(DType::BF16, real(DType::F16, 1.0f)), DType::BF16, 0.0078125f,
              "f16 1 -> bf16 is 2^-7");
  expect_whole(bitcast(DType::U8, whole(DType::I8, -1)), DType::U8, 255, "i8 -1 -> u8");
  expect_whole(bitcast(DType::I8, whole(DType::U8, 200)), DType::I8, -56, "u8 200 -> i8");
  expect_whole(bitcast(DType::U8, whole(DType::Bool, 1)), DType::U8, 1, "true -> u8");
  expect_whole(bitcast(DType::Bool, whole(DType::U8, 1)), DType::Bool, 1, "1 -> bool");
  EXPECT_EQ(bitcast(DType::Bool, whole(DType::U8, 2)).outcome, Outcome::Undefined)
      << "a byte that is no bool";
  EXPECT_EQ(bitcast(f, whole(DType::U32, 0x7FC00000)).outcome, Outcome::NotANumber);
}

TEST(EvaluateOracle, ConstantsRoundAndWrapToTheirType) {
  EXPECT_EQ(ir::constant_value(DType::F16, 0.1, 0).as_float(), 0.0999755859375f);
  EXPECT_EQ(ir::constant_value(DType::BF16, 0.1, 0).as_float(), 0.10009765625f);
  EXPECT_EQ(ir::constant_value(DType::U8, 0, 300), whole(DType::U8, 44));
  EXPECT_EQ(ir::constant_value(DType::I8, 0, 200), whole(DType::I8, -56));
  EXPECT_EQ(ir::constant_value(DType::Bool, 0, 2).bits, 1u);
  EXPECT_EQ(ir::memory_bits(DType::I8, whole(DType::I8, -1).bits), 0xFFu);
  EXPECT_EQ(ir::from_memory_bits(DType::I8, 0xFFu), 0xFFFFFFFFu);
  EXPECT_EQ(ir::memory_bits(DType::F16, std::bit_cast<std::uint32_t>(-2.0f)), 0xC000u);
}

TEST(EvaluateOracle, WhatCanBeEvaluated) {
  using V = std::vector<DType>;
  EXPECT_FALSE(ir::can_evaluate(OpKind::Sqrt, DType::I32, V{DType::I32}));
  EXPECT_FALSE(ir::can_evaluate(OpKind::Neg, DType::U32, V{DType::U32}));
  EXPECT_FALSE(ir::can_evaluate(OpKind::Add, DType::Bool, V{DType::Bool, DType::Bool}));
  EXPECT_FALSE(ir::can_evaluate(OpKind::Add, DType::I32, V{DType::I32, DType::U32}));
  EXPECT_FALSE(ir::can_evaluate(OpKind::Add, DType::I32, V{DType::I32}));
  EXPECT_FALSE(ir::can_evaluate(OpKind::Fma, DType::I32, V{DType::I32, DType::I32, DType::I32}));
  EXPECT_FALSE(ir::can_evaluate(OpKind::Lt, DType::I32, V{DType::I32, DType::I32}));
  EXPECT_FALSE(ir::can_evaluate(OpKind::Select, DType::F32, V{DType::I32, DType::F32, DType::F32}));
  EXPECT_FALSE(ir::can_evaluate(OpKind::Bitcast, DType::F16, V{DType::F32}));
  EXPECT_FALSE(ir::can_evaluate(OpKind::Load, DType::F32, V{DType::U32}));
  EXPECT_TRUE(ir::can_evaluate(OpKind::Cast, DType::Bool, V{DType::BF16}));
  EXPECT_TRUE(ir::can_evaluate(OpKind::Shl, DType::U16, V{DType::U16, DType::U16}));
}

TEST(EvaluateOracle, CombinersOfCollectiveOps) {
  EXPECT_EQ(ir::combiner_of(OpKind::AtomicAdd), OpKind::Add);
  EXPECT_EQ(ir::combiner_of(OpKind::AtomicXor), OpKind::Xor);
  EXPECT_EQ(ir::combiner_of(OpKind::SimdPrefixExclusiveSum), OpKind::Add);
  EXPECT_EQ(ir::combiner_of(OpKind::SimdMax), OpKind::Max);
  EXPECT_EQ(ir::combiner_of(OpKind::ReduceMin), OpKind::Min);
  EXPECT_EQ(ir::combiner_of(OpKind::AtomicExchange), std::nullopt);
  EXPECT_EQ(ir::combiner_of(OpKind::SimdShuffleXor), std::nullopt);
  EXPECT_EQ(ir::combiner_of(OpKind::Add), std::nullopt);
}

}  // namespace
}  // namespace iron::evaluate_test
