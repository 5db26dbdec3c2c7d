/// Per-op-kind rules of Iron IR (operand counts, blocks, results, types) used by the verifier.
#pragma once

#include <string>
#include <vector>

#include "iron/core/ir.hpp"

namespace iron::ir {

/// How many operands an op of this kind takes.
std::size_t op_arity(OpKind k);
/// How many nested blocks an op of this kind owns.
std::size_t op_block_count(OpKind k);

ResultRule op_result_rule(OpKind k);

/// Type problems of `op`, whose operands have `operands` types (arity already checked); each is
/// a message without location, empty when the op is well typed.
std::vector<std::string> op_type_problems(const Kernel& k, const Op& op,
                                          const std::vector<DType>& operands);

}  // namespace iron::ir
