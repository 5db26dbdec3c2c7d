/// The kernel prepared for interpretation: ops flattened into contiguous blocks with their operand
/// rows, types and buffers resolved, after checks that keep malformed IR from crashing the run.
#pragma once

#include <cstdint>
#include <vector>

#include "iron/core/ir.hpp"
#include "value.hpp"

namespace iron::runtime::sim {

/// Instructions [begin, end) of one block.
struct Range {
  std::uint32_t begin = 0, end = 0;
};

struct Instr {
  ir::OpKind kind = ir::OpKind::Const;
  ir::OpClass cls = ir::OpClass::Leaf;
  DType type = DType::U32;       ///< the op's type (result, stored or declared value)
  DType arg_type = DType::U32;   ///< type of args[0]: compare operands, cast source, index
  DType arg1_type = DType::U32;  ///< type of args[1]: the lane operand of simd ops
  ir::Builtin builtin = ir::Builtin::ThreadId;
  std::uint8_t axis = 0;
  bool on_shared = false;      ///< memory op on a threadgroup allocation (else a tensor)
  std::uint8_t lanes = 1;      ///< elements per access of a vector load or store
  std::uint32_t result = 0;    ///< value row written (a scratch row when the op has none); a
                               ///< vector load writes `lanes` rows from here, one per lane
  std::uint32_t args[3] = {};  ///< value rows read; an extract reads its lane's row
  std::uint32_t lane_args =
      0;                       ///< vector store: its values' rows start at Program::lane_args[this]
  int buffer = -1;             ///< parameter index (tensor or constexpr) or shared index
  Slot imm = 0;                ///< Const value
  Range body, other;           ///< For: body; If: then, else
  const ir::Op* op = nullptr;  ///< the source op, for messages
};

struct Program {
  const ir::Kernel* kernel = nullptr;
  std::vector<Instr> code;
  Range main;
  std::vector<std::uint32_t> lane_args;  ///< value rows of the lanes of vector stores
  std::uint32_t rows = 0;   ///< value rows: the kernel's values, lanes of vectors, scratch rows
  std::uint32_t depth = 0;  ///< deepest nesting of For/If
  bool tensor_atomics = false;
};

/// Throws SimError(BadArgument) naming the op when the IR cannot be run.
Program compile(const ir::Kernel& kernel);

}  // namespace iron::runtime::sim
