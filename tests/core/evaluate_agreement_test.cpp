/// Constant folding, the simulator and ir::evaluate agree bit for bit on every lane-wise op and
/// every type it is defined on, over edge operands (zeros of both signs, ±1, the type's extremes,
/// INT_MIN, NaN, infinities, denormals, values that round differently in f16 and bf16, shift
/// amounts around the width): each case is folded by fold_constants and run unfolded in the
/// simulator. A case may stay unfolded only where the definition leaves its result open (NaN,
/// division by zero, INT_MIN / -1, over-wide or negative shifts, a byte that is no bool, the
/// sign of min or max of +0 and -0).
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <unordered_map>
#include <vector>

#include "../sim/ir_builder.hpp"
#include "../sim/sim_helpers.hpp"
#include "iron/codegen/passes/fold_constants.hpp"
#include "iron/core/evaluate.hpp"
#include "iron/core/op_views.hpp"

namespace iron::evaluate_test {
namespace {

using ir::OpKind;
using sim_test::IrBuilder;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

constexpr DType kTypes[] = {DType::F32,  DType::F16,    DType::BF16,  DType::I32,
                            DType::U32,  DType::U8,     DType::I8,    DType::U16,
                            DType::Bool, DType::F8E4M3, DType::F8E5M2};

/// The edge operands of a type, as the attribute of a const op.
std::vector<double> edges(DType t) {
  switch (t) {
    case DType::F32:
      return {0.0,
              -0.0,
              1.0,
              -1.0,
              0.5,
              -2.5,
              3.7,
              0.1,
              3.4028234663852886e38,
              -3.4028234663852886e38,
              1.1754943508222875e-38,
              1.401298464324817e-45,
              1e-40,
              kInf,
              -kInf,
              kNaN,
              65504.0,
              65520.0,
              1.00048828125,
              1.00390625,
              2147483648.0,
              -2147483904.0,
              4294967296.0,
              255.5,
              -128.5,
              1e10};
    case DType::F8E4M3:
      // The largest finite, values past it (saturated), ties between neighbours and between
      // subnormal quanta (none that rounds to zero: min and max of ±0 are left open).
      return {0.0,    -0.0,   1.0,      -1.5,        0.1,          448.0, 464.0, 480.0, -1e3,
              1.0625, 1.1875, 0.015625, 0.001953125, 0.0029296875, kInf,  -kInf, kNaN};
    case DType::F8E5M2:
      return {0.0,
              -0.0,
              1.0,
              -1.5,
              0.1,
              57344.0,
              61440.0,
              -1e5,
              1.125,
              1.375,
              6.103515625e-05,
              1.52587890625e-05,
              2.288818359375e-05,
              kInf,
              -kInf,
              kNaN};
    case DType::F16:
      return {0.0,
              -0.0,
              1.0,
              -1.0,
              0.5,
              -2.5,
              65504.0,
              -65504.0,
              6.103515625e-05,
              5.960464477539063e-08,
              3.0517578125e-05,
              kInf,
              -kInf,
              kNaN,
              1.0009765625,
              2048.0,
              0.1,
              3.140625,
              255.0,
              -128.0};
    case DType::BF16:
      return {0.0,
              -0.0,
              1.0,
              -1.0,
              0.5,
              -2.5,
              3.3895313892515355e38,
              1.1754943508222875e-38,
              9.183549615799121e-41,
              kInf,
              -kInf,
              kNaN,
              1.0078125,
              256.0,
              0.1,
              3.140625,
              65504.0,
              2147483648.0};
    case DType::I32:
      return {0, 1, -1, 2, -2, 7, -7, 8, 31, 32, 33, 65536, -65536, 2147483647, -2147483648.0};
    case DType::U32:
      return {0,           1, 2, 7, 8, 31, 32, 33, 65536, 2147483647, 2147483648.0, 4294967294.0,
              4294967295.0};
    case DType::U8:
      return {0, 1, 2, 7, 8, 9, 127, 128, 254, 255};
    case DType::I8:
      return {0, 1, -1, 2, 7, 8, 9, -8, 127, -128, -127};
    case DType::U16:
      return {0, 1, 2, 15, 16, 17, 255, 32767, 32768, 65535};
    case DType::Bool:
      return {0, 1};
  }
  return {};
}

/// A few edge operands, for the three-operand fma.
std::vector<double> few_edges(DType t) {
  std::vector<double> all = edges(t);
  std::vector<double> few;
  for (std::size_t i = 0; i < all.size(); i += 2) few.push_back(all[i]);
  return few;
}

std::uint32_t width(DType t) { return static_cast<std::uint32_t>(dtype_size(t)) * 8; }

/// The integer a const attribute stands for in type t (wrapped), as the type's bits.
std::int64_t as_integer(DType t, double v) {
  const auto bits = static_cast<std::uint32_t>(static_cast<std::int64_t>(v));
  const std::uint32_t w = width(t);
  const std::uint32_t mask = w == 32 ? 0xFFFFFFFFu : (1u << w) - 1;
  const std::uint32_t low = bits & mask;
  if (is_signed_int(t) && (low >> (w - 1)) != 0) return std::int64_t{low} - (std::int64_t{1} << w);
  return low;
}

/// The bits a value of type t occupies in memory, for a folded constant.
std::uint32_t constant_memory_bits(const ir::Op& c) {
  const auto f = static_cast<float>(c.fvalue);
  switch (c.type) {
    case DType::F32:
      return std::bit_cast<std::uint32_t>(f);
    case DType::F16:
      return f32_to_f16_bits(f);
    case DType::BF16:
      return f32_to_bf16_bits(f);
    case DType::F8E4M3:
      return f32_to_f8e4m3_bits(f);
    case DType::F8E5M2:
      return f32_to_f8e5m2_bits(f);
    case DType::I32:
    case DType::U32:
    case DType::U8:
    case DType::I8:
    case DType::U16:
    case DType::Bool: {
      const std::uint32_t w = width(c.type);
      return static_cast<std::uint32_t>(c.ivalue) & (w == 32 ? 0xFFFFFFFFu : (1u << w) - 1);
    }
  }
  return 0;
}

std::uint32_t element_bits(const runtime::HostTensor& h, std::size_t i) {
  std::uint32_t bits = 0;
  std::memcpy(&bits, h.bytes.data() + i * dtype_size(h.dtype), dtype_size(h.dtype));
  return bits;
}

bool is_nan_bits(DType t, std::uint32_t memory) {
  if (t == DType::F32) return std::isnan(std::bit_cast<float>(memory));
  if (t == DType::F16) return std::isnan(f16_bits_to_f32(static_cast<std::uint16_t>(memory)));
  if (t == DType::BF16) return std::isnan(bf16_bits_to_f32(static_cast<std::uint16_t>(memory)));
  if (t == DType::F8E4M3) return std::isnan(f8e4m3_bits_to_f32(static_cast<std::uint8_t>(memory)));
  if (t == DType::F8E5M2) return std::isnan(f8e5m2_bits_to_f32(static_cast<std::uint8_t>(memory)));
  return false;
}

/// One op on constant operands: its kind, result type and operands.
struct Case {
  OpKind kind;
  DType type;
  std::vector<DType> operand_types;
  std::vector<double> operands;

  std::string text() const {
    std::string s = std::string(ir::op_name(kind)) + " -> " + std::string(dtype_name(type)) + " (";
    for (std::size_t i = 0; i < operands.size(); ++i) {
      s += (i > 0 ? ", " : "") + std::to_string(operands[i]) + ":" +
           std::string(dtype_name(operand_types[i]));
    }
    return s + ")";
  }

  bool divides_by_zero() const {
    return (kind == OpKind::Div || kind == OpKind::Rem) && !is_float(type) && operands[1] == 0;
  }

  /// Whether the definition of the op leaves this result open (so folding must leave it), apart
  /// from a NaN result, which the simulator's output shows.
  bool result_is_open() const {
    if (divides_by_zero()) return true;
    if ((kind == OpKind::Div || kind == OpKind::Rem) && type == DType::I32) {
      return operands[0] == -2147483648.0 && operands[1] == -1;
    }
    if (kind == OpKind::Shl || kind == OpKind::Shr) {
      const std::int64_t amount = as_integer(type, operands[1]);
      return amount < 0 || amount >= width(type) || as_integer(type, operands[0]) < 0;
    }
    if ((kind == OpKind::Min || kind == OpKind::Max) && is_float(type)) {
      return operands[0] == 0 && operands[1] == 0 &&
             std::signbit(operands[0]) != std::signbit(operands[1]);
    }
    if (kind == OpKind::Bitcast && type == DType::Bool) {
      const DType from = operand_types[0];
      const auto value = static_cast<float>(operands[0]);
      const std::int64_t byte = from == DType::F8E4M3   ? f32_to_f8e4m3_bits(value)
                                : from == DType::F8E5M2 ? f32_to_f8e5m2_bits(value)
                                                        : as_integer(DType::U8, operands[0]);
      return byte != 0 && byte != 1;
    }
    return false;
  }
};

/// Every case of kind k on type t (the operand type of a compare, the result type otherwise).
std::vector<Case> cases_of(OpKind k, DType t) {
  std::vector<Case> out;
  const std::vector<double> e = edges(t);
  const ir::OpClass cls = ir::op_info(k).op_class;
  if (cls == ir::OpClass::Unary) {
    for (double a : e) out.push_back({k, t, {t}, {a}});
  } else if (cls == ir::OpClass::Binary || cls == ir::OpClass::Compare) {
    const DType result = cls == ir::OpClass::Compare ? DType::Bool : t;
    for (double a : e) {
      for (double b : e) out.push_back({k, result, {t, t}, {a, b}});
    }
  } else if (k == OpKind::Select) {
    for (double c : {0.0, 1.0}) {
      for (double a : e) {
        for (double b : e) out.push_back({k, t, {DType::Bool, t, t}, {c, a, b}});
      }
    }
  } else if (k == OpKind::Fma) {
    const std::vector<double> f = few_edges(t);
    for (double a : f) {
      for (double b : f) {
        for (double c : f) out.push_back({k, t, {t, t, t}, {a, b, c}});
      }
    }
  }
  return out;
}

/// Casts and bitcasts from type `from` to every type they may reach.
std::vector<Case> conversions_from(DType from) {
  std::vector<Case> out;
  for (DType to : kTypes) {
    for (double a : edges(from)) {
      out.push_back({OpKind::Cast, to, {from}, {a}});
      if (dtype_size(from) == dtype_size(to)) out.push_back({OpKind::Bitcast, to, {from}, {a}});
    }
  }
  return out;
}

/// Every op this test covers, with the types it is defined on.
std::vector<std::vector<Case>> every_case_group() {
  std::vector<std::vector<Case>> groups;
  for (std::size_t i = 0; i < ir::kOpTable.size(); ++i) {
    const auto k = static_cast<OpKind>(i);
    if (!ir::is_evaluable(k) || k == OpKind::Cast || k == OpKind::Bitcast) continue;
    for (DType t : kTypes) {
      const bool compare = ir::op_info(k).op_class == ir::OpClass::Compare;
      if (!compare && k != OpKind::Select && !ir::op_defined_on(k, t)) continue;
      groups.push_back(cases_of(k, t));
    }
  }
  for (DType from : kTypes) groups.push_back(conversions_from(from));
  return groups;
}

/// A one-thread kernel storing each case's result into out[j] (all cases of one result type).
ir::Kernel build(const std::vector<Case>& cases, DType result) {
  IrBuilder b("evaluate_cases");
  const int out = b.output("out", result);
  for (std::size_t j = 0; j < cases.size(); ++j) {
    const Case& c = cases[j];
    std::vector<ir::ValueId> args;
    for (std::size_t i = 0; i < c.operands.size(); ++i) {
      args.push_back(b.constant(c.operand_types[i], c.operands[i]));
    }
    ir::ValueId r = 0;
    if (c.kind == OpKind::Cast) {
      r = b.cast(c.type, args[0]);
    } else if (c.kind == OpKind::Bitcast) {
      r = b.bitcast(c.type, args[0]);
    } else if (c.kind == OpKind::Select) {
      r = b.select(args[0], args[1], args[2]);
    } else {
      r = b.op(c.kind, args);
    }
    b.store(out, b.u32(static_cast<std::uint32_t>(j)), r);
  }
  return b.build();
}

/// The op defining each stored value, store by store.
std::vector<const ir::Op*> stored_definitions(const ir::Kernel& k) {
  std::unordered_map<ir::ValueId, const ir::Op*> defs;
  std::vector<const ir::Op*> stored;
  ir::walk(k.body, [&](const ir::Op& op) {
    if (op.result != ir::kNoValue) defs[op.result] = &op;
    if (op.kind == OpKind::Store) stored.push_back(defs.at(ir::AccessOp(op).value()));
  });
  return stored;
}

ir::ScalarValue held(const Case& c, std::size_t i) {
  return ir::constant_value(
      c.operand_types[i], c.operands[i],
      is_float(c.operand_types[i]) ? 0 : static_cast<std::int64_t>(c.operands[i]));
}

/// Folds and simulates the cases of one result type.
void check(const std::vector<Case>& cases) {
  std::vector<Case> runnable;  // a division by zero ends a simulation: checked on its own
  for (const Case& c : cases) {
    if (!c.divides_by_zero()) {
      runnable.push_back(c);
      continue;
    }
    ir::Kernel k = build({c}, c.type);
    codegen::fold_constants(k, codegen::TargetProfile{});
    EXPECT_NE(stored_definitions(k).at(0)->kind, OpKind::Const) << "folded " << c.text();
    std::vector<ir::ScalarValue> operands = {held(c, 0), held(c, 1)};
    EXPECT_EQ(ir::evaluate(c.kind, c.type, operands).outcome, ir::Outcome::DivisionByZero)
        << c.text();
  }
  if (runnable.empty()) return;
  const DType result = runnable[0].type;
  const ir::Kernel unfolded = build(runnable, result);
  ir::Kernel folded = unfolded;
  codegen::fold_constants(folded, codegen::TargetProfile{});
  runtime::HostTensor out = sim_test::zeros(result, runnable.size());
  sim_test::run(unfolded, {&out}, runtime::Grid::per_row(1, 1));
  const std::vector<const ir::Op*> stored = stored_definitions(folded);
  for (std::size_t j = 0; j < runnable.size(); ++j) {
    const Case& c = runnable[j];
    const std::uint32_t simulated = element_bits(out, j);
    const bool passes_operand_on =
        c.kind == OpKind::Select || (c.operands.size() == 1 && c.type == c.operand_types[0] &&
                                     ir::op_info(c.kind).op_class == ir::OpClass::Other);
    const bool makes_nan = is_nan_bits(result, simulated) && !passes_operand_on;
    const bool open = c.result_is_open() || makes_nan;
    const ir::Op& op = *stored.at(j);
    if (op.kind == OpKind::Const) {
      EXPECT_FALSE(open) << "folded, though left open: " << c.text();
      EXPECT_EQ(constant_memory_bits(op), simulated) << "folded and simulated differ: " << c.text();
    } else {
      EXPECT_TRUE(open) << "not folded, though defined: " << c.text();
    }
    std::vector<ir::ScalarValue> operands;
    std::vector<DType> types;
    for (std::size_t i = 0; i < c.operands.size(); ++i) {
      operands.push_back(held(c, i));
      types.push_back(c.operand_types[i]);
    }
    ASSERT_TRUE(ir::can_evaluate(c.kind, c.type, types)) << c.text();
    const ir::Evaluation e = ir::evaluate(c.kind, c.type, operands);
    EXPECT_EQ(ir::memory_bits(result, e.value.bits), simulated)
        << "evaluate and simulated differ: " << c.text();
    EXPECT_EQ(e.outcome != ir::Outcome::Defined, open) << "outcome of " << c.text();
  }
}

TEST(EvaluateAgreement, FoldingAndSimulationAgreeOnEveryOpAndType) {
  std::size_t total = 0;
  for (const std::vector<Case>& group : every_case_group()) {
    std::unordered_map<DType, std::vector<Case>> by_result;
    for (const Case& c : group) by_result[c.type].push_back(c);
    for (const auto& [type, cases] : by_result) {
      check(cases);
      total += cases.size();
    }
  }
  EXPECT_GT(total, 20000u);
}

}  // namespace
}  // namespace iron::evaluate_test
