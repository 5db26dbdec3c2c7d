/// How the emitted code names each IR value: `vN`, or a constant's inlined literal.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "dialect.hpp"

namespace iron::codegen::c_like {

class Values {
 public:
  Values(const ir::Kernel& kernel, const Dialect& dialect, Needs& needs);

  /// The value as an expression: "v7", or a constant's literal.
  std::string name(ir::ValueId id) const;
  /// As `name`, but a negative literal is parenthesized, for use next to an operator.
  std::string operand(ir::ValueId id) const;
  DType type(ir::ValueId id) const { return info_.at(id).type; }
  /// The role and shape of a fragment (frag's result).
  const ir::FragmentShape& fragment(ir::ValueId id) const { return info_.at(id).fragment; }
  /// Elements of a vector value; 1 for scalars.
  int lanes(ir::ValueId id) const { return info_.at(id).lanes; }
  /// The value of an integer or bool constant; nullopt for anything else.
  std::optional<std::int64_t> integer(ir::ValueId id) const;
  /// The literal of a constant that is not inlined but bound to a mutable local: a zero divisor
  /// or a zero compared with an unsigned value, which compilers report as warnings when they
  /// see the literal (the simulator reports the division at run time). nullopt otherwise.
  std::optional<std::string> bound_literal(ir::ValueId id) const;
  /// How many emitted ops use the value (a variable's var.loads count, its stores do not).
  std::uint32_t uses(ir::ValueId id) const { return info_.at(id).uses; }
  /// Whether `op` is written out: not when it only defines a value nothing emitted reads (the
  /// compilers warn about unread locals), or stores into such a variable. Atomics always are.
  bool emitted(const ir::Op& op) const;

 private:
  struct Info {
    DType type = DType::U32;
    int lanes = 1;
    std::uint32_t uses = 0;
    std::optional<std::string> literal;
    std::optional<std::int64_t> integer;
    bool bound = false;
    ir::FragmentShape fragment;
  };

  /// Whether operand `arg` of `op` is the variable a var.store writes (not a use of it).
  static bool is_variable_target(const ir::Op& op, std::size_t arg);
  /// Takes the uses of ops that will not be emitted away, until none is left to drop.
  void drop_unused(const std::vector<const ir::Op*>& ops);
  /// Marks the zero constants among `op`'s operands that must not be literals.
  void bind_hazards(const ir::Op& op);

  std::vector<Info> info_;
};

}  // namespace iron::codegen::c_like
