/// Per-op-kind rules of Iron IR used by the verifier (operand counts, blocks, results, types),
/// all read from the op table (op_table.hpp).
#pragma once

#include <string>
#include <vector>

#include "iron/core/ir.hpp"

namespace iron::ir {

/// How many operands `op` takes: its kind's count, plus one value per extra lane of a vector
/// store.
std::size_t op_arity(const Op& op);
/// How many nested blocks an op of this kind owns.
std::size_t op_block_count(OpKind k);
/// Whether an op of this kind must, may or must not define a value.
ResultRule op_result_rule(OpKind k);

/// Type problems of `op`, whose operands have `operands` types (arity already checked); each is
/// a message without location, empty when the op is well typed.
std::vector<std::string> op_type_problems(const Kernel& k, const Op& op,
                                          const std::vector<DType>& operands);

}  // namespace iron::ir
