/// The rewrite driver: walks every block of a kernel in program order and asks a pass what
/// becomes of each op (it stays, goes, hands its uses to another value, or gives way to other
/// ops). The driver owns the recursion into nested blocks and the renaming of replaced values,
/// so a pass states only its own transformation.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "iron/core/builder.hpp"
#include "iron/core/ir.hpp"

namespace iron::ir {

/// What becomes of the op a pass was given.
class Rewrite {
 public:
  enum class Kind : std::uint8_t { Keep, Erase, ReplaceWithValue, ReplaceWithOps, Expand };

  /// The op stays, as the pass left it.
  static Rewrite keep() { return Rewrite(Kind::Keep); }
  /// The op goes; nothing may use its result.
  static Rewrite erase() { return Rewrite(Kind::Erase); }
  /// The op goes, and every use of its result after it reads `value` instead.
  static Rewrite replace_with_value(ValueId value);
  /// The op goes, and `ops`, in their final form, take its place; the driver does not visit them.
  static Rewrite replace_with_ops(std::vector<Op> ops);
  /// The op goes, and `ops` take its place to be visited next, as if they had been there all
  /// along (the taken block of a branch, the unrolled copies of a loop).
  static Rewrite expand(std::vector<Op> ops);

  // What the driver reads back.
  Kind kind() const { return kind_; }
  ValueId value() const { return value_; }
  std::vector<Op>& ops() { return ops_; }

 private:
  explicit Rewrite(Kind kind) : kind_(kind) {}

  Kind kind_;
  ValueId value_ = kNoValue;
  std::vector<Op> ops_;
};

/// Where the op a pass was given stands, for a pass that adds ops in front of it.
class RewriteSite {
 public:
  /// Made by the driver: `op` is about to take its place at the end of `before`.
  RewriteSite(Kernel& kernel, std::vector<Op>& before, const Op& op)
      : kernel_(kernel), before_(before), op_(op) {}

  /// A builder that inserts just before the op, with the op's location. The driver does not
  /// visit what it inserts.
  Builder before() const;

 private:
  Kernel& kernel_;
  std::vector<Op>& before_;
  const Op& op_;
};

/// When an op that holds blocks (a loop, a branch) is given to the pass.
enum class Order : std::uint8_t {
  OuterFirst,  ///< before its blocks are rewritten (a pass may drop or inline them unrewritten)
  InnerFirst,  ///< after its blocks are rewritten (a pass sees the final body)
};

/// The pass's decision for one op. Operands already read through earlier replacements.
using RewriteFn = std::function<Rewrite(Op& op, RewriteSite& site)>;

/// Rewrites every op of `kernel` with `fn`, in program order, nested blocks included in `order`.
/// The ops of the block being rewritten are out of the kernel while it runs: `fn` reads the op
/// it is given, its blocks and what the pass recorded, never the rest of the kernel. An op the
/// pass has not reached yet keeps its address until it is reached.
void rewrite(Kernel& kernel, Order order, const RewriteFn& fn);

/// Removes loops whose body is empty and branches whose two blocks are empty, innermost first
/// (removing one can empty its parent), so a pass that deletes ops never leaves a block the
/// verifier rejects.
void remove_empty_control_flow(Kernel& kernel);

}  // namespace iron::ir
