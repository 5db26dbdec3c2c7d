/// What vectorize knows about the alignment of integer values: the largest power of two each is
/// provably a multiple of, from literals, the contract's constexpr rules, the conditions of the
/// branches around a use, and the values a loop version assumes aligned.
#pragma once

#include <unordered_map>

#include "iron/codegen/target.hpp"
#include "iron/core/ir.hpp"

namespace iron::codegen {

/// Whether `target` has vectors of elements of type t: not MSL of the 8-bit floats, which
/// MSL holds as one-byte structs (no `uchar4`-like vector of them exists there).
inline bool has_vectors_of(DType t, const TargetProfile& target) {
  return !(is_f8(t) && target.kind == TargetKind::Msl);
}

/// Powers of two that divide integer values, as log2 (32: the value is zero, or every power
/// divides it as far as 32-bit arithmetic can tell). Wrapping u32 and i32 arithmetic keeps every
/// power of two up to 2^32 dividing what it divided, so the rules below hold for wrapped values:
///   literal c: ctz(c)                       constexpr: the largest of its `require` multiples
///   a * b: a + b    a << k: a + k           a >> k, a / 2^k: a - k (0 below)
///   a + b, a - b, a % b, a | b, a ^ b, select, min, max: the smaller of the operands
///   a & b: the larger
/// Facts (a branch's condition, a version's assumption) raise a value's figure; a value that
/// nothing above describes counts 0.
class Alignment {
 public:
  using Definitions = std::unordered_map<ir::ValueId, const ir::Op*>;

  Alignment(const ir::Kernel& kernel, const Definitions& definitions);

  /// log2 of the largest power of two known to divide `v`.
  int log2_multiple(ir::ValueId v);
  bool multiple_of(ir::ValueId v, int lanes) { return log2_multiple(v) >= log2_of(lanes); }

  /// Takes `v` as a multiple of 2^log2 (and both operands of an `or` that it is).
  void assume(ir::ValueId v, int log2);
  /// Takes the facts a true `condition` gives: `(x & (2^k - 1)) == 0` and `x % 2^k == 0` make x a
  /// multiple of 2^k, and both sides of a boolean `and` hold.
  void assume_true(ir::ValueId condition);

  static int log2_of(int lanes);

 private:
  int compute(ir::ValueId v);
  /// The largest power of two the contract's rules make constexpr `param` a multiple of.
  int rule_log2(int param) const;
  const ir::Op* def(ir::ValueId v) const;
  /// The literal integer `v` is, if it is one.
  bool literal(ir::ValueId v, std::int64_t& out) const;

  const ir::Kernel& kernel_;
  const Definitions& defs_;
  std::unordered_map<ir::ValueId, int> facts_;
  std::unordered_map<ir::ValueId, int> known_;
};

}  // namespace iron::codegen
