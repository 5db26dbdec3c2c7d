/// Lane-wise arithmetic: every lane goes through ir::evaluate_lane, the one definition of what an
/// op computes, which constant folding uses too. The loop is compiled once per op kind, so each
/// lane runs only its op's arithmetic.
#include "arith.hpp"

#include <algorithm>
#include <array>

namespace iron::runtime::sim {

std::optional<std::uint32_t> evaluate_lanes(const Instr& in, Active active, Slot* r,
                                            const Slot* const* operands) {
  return ir::with_op_kind(in.kind, [&](auto kind) -> std::optional<std::uint32_t> {
    constexpr std::size_t kOperands = std::min<std::size_t>(ir::op_info(kind).operands, 3);
    for (std::uint32_t t : active) {
      std::array<ir::ScalarValue, 3> v{};
      for (std::size_t i = 0; i < kOperands; ++i) {
        v[i] = {in.arg_types[i], operands[i][t]};
      }
      const ir::Evaluation e = ir::evaluate_lane(kind, in.type, v[0], v[1], v[2]);
      if (e.outcome == ir::Outcome::DivisionByZero) return t;
      r[t] = e.value.bits;
    }
    return std::nullopt;
  });
}

Slot combine(ir::OpKind combiner, DType t, Slot a, Slot b) {
  return ir::evaluate_lane(combiner, t, {t, a}, {t, b}).value.bits;
}

}  // namespace iron::runtime::sim
