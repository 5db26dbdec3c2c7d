/// The IR builder: every op Iron makes (the DSL tracer's, the passes') is made here, so a new op
/// gets its fresh value id, its location, its empty nested blocks and its place the same way
/// everywhere, as the op table says.
#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "iron/core/ir.hpp"

namespace iron::ir {

/// Makes ops of one kernel and inserts them at a point in a list of ops (a block's, or one a
/// pass is assembling). Each op goes before the insertion point, which then stays after it, so
/// ops made one after another keep their order. A reference the builder returns stays valid
/// until the next op is inserted into the same list.
class Builder {
 public:
  /// Inserts at the end of `ops`.
  Builder(Kernel& kernel, std::vector<Op>& ops);
  /// Inserts before `ops[index]` (at the end when `index` is `ops.size()`).
  Builder(Kernel& kernel, std::vector<Op>& ops, std::size_t index);

  /// Gives every op made from now on the location `loc`.
  Builder& at(SourceLoc loc);

  /// An op of `kind` with the builder's location and the nested blocks the op table gives it
  /// (empty); it defines a fresh value unless the table forbids one.
  Op& make(OpKind kind, DType type, std::vector<ValueId> args = {});
  /// A constant of `type`: a float type holds `value`, the others its integer part.
  ValueId constant(DType type, double value);
  /// A thread-geometry value (u32) along `axis`, for the builtins that have one.
  ValueId builtin(Builtin which, std::uint8_t axis = 0);
  /// A loop `for %i = start to end step step : type` with an empty body.
  Op& loop(ValueId start, ValueId end, ValueId step, DType type);
  /// A branch on `condition` with empty then- and else-blocks.
  Op& branch(ValueId condition);

  /// Inserts `op` as it is: its result, location and attributes stay (an op moved or copied).
  Op& insert(Op op);
  /// Inserts a copy of `op` and its nested blocks in which every value defined gets a fresh id.
  /// Operands are read through `renamed` (a value not in it stays itself), which learns every
  /// new id, so a later copy reads the copied values. Locations and attributes stay.
  Op& copy(const Op& op, std::unordered_map<ValueId, ValueId>& renamed);

 private:
  /// A value id the kernel has not used yet.
  ValueId fresh_value();
  void renumber(Op& op, std::unordered_map<ValueId, ValueId>& renamed);

  Kernel& kernel_;
  std::vector<Op>& ops_;
  std::size_t index_;
  SourceLoc loc_;
};

}  // namespace iron::ir
