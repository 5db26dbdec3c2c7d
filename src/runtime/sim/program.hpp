/// The kernel prepared for interpretation: ops flattened into contiguous blocks with their operand
/// rows, types and buffers resolved, each tagged with how the interpreter runs it.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "iron/core/ir.hpp"
#include "value.hpp"

namespace iron::runtime::sim {

/// Instructions [begin, end) of one block.
struct Range {
  std::uint32_t begin = 0, end = 0;
};

/// How the interpreter runs an instruction: one entry per way of running ops, derived from the
/// op table when the program is compiled.
enum class Exec : std::uint8_t {
  Constant,          ///< const: the immediate
  ConstexprRef,      ///< constexpr: the launch's scalar
  Builtin,           ///< thread geometry
  Evaluate,          ///< lane-wise pure arithmetic: ir::evaluate on every active thread
  Copy,              ///< var, var.load, extract: the operand's value
  VarStore,          ///< var.store
  RegsDecl,          ///< regs: every element of the array takes the initial value
  RegsLoad,          ///< regs.load: the element at a bounds-checked index
  RegsStore,         ///< regs.store
  FragDecl,          ///< frag: every element of the fragment takes the initial value
  FragLoad,          ///< frag.load: a simdgroup reads its fragment's elements
  FragStore,         ///< frag.store
  FragMma,           ///< frag.mma: a simdgroup's d += a·b, exactly (docs/tensor-cores.md)
  FragGet,           ///< frag.get: the lane's element in a slot
  FragSet,           ///< frag.set
  FragCoord,         ///< frag.coord: the row or column of the lane's element in a slot
  FragRowValue,      ///< frag.rowvalue: a row vector's value at the row of the lane's slot
  FragReduce,        ///< frag.rowreduce: a simdgroup's row maxima or sums, from the logical rows
  FragConvert,       ///< frag.convert: a simdgroup's accumulator rounded into an A fragment
  CopyAsync,         ///< copy.async: starts a thread's copy into shared memory
  AsyncCommit,       ///< async.commit
  AsyncWait,         ///< async.wait: lands a thread's oldest copy groups
  WgMma,             ///< wg.mma: a warpgroup's products from shared memory, pending until wg.wait
  WgCommit,          ///< wg.commit
  WgWait,            ///< wg.wait: finishes a simdgroup's oldest product groups
  ProxyFence,        ///< fence.proxy.async: orders a thread's shared writes before product reads
  CopyTensor,        ///< copy.tensor: a TMA box into shared memory, completing an mbarrier's bytes
  Mbarrier,          ///< mbar.*: init, expect (an arrival and bytes), wait, arrive, inval
  Exit,              ///< exit: the threads end (the whole branch that reaches it)
  NoEffect,          ///< wg.registers: a register budget, nothing for the simulator to run
  Load,              ///< load, shared.load
  Store,             ///< store, shared.store
  Atomic,            ///< atomic.*
  Barrier,           ///< barrier
  BarrierAmong,      ///< barrier.among: a barrier of the group's first `inner` threads
  SimdgroupBarrier,  ///< barrier.simdgroup: a barrier of each reaching simdgroup's lanes
  Turn,              ///< wg.turn: checks who takes turns, and in which order (no wait to model)
  Simd,              ///< simd.*
  Reduce,            ///< reduce.*
  For,               ///< for
  If,                ///< if
};

struct Instr {
  ir::OpKind kind = ir::OpKind::Const;
  Exec exec = Exec::Constant;
  DType type = DType::U32;  ///< the op's type (result, stored or declared value)
  std::uint8_t operands = 0;
  DType arg_types[6] = {};  ///< types of args: compare operands, cast source, index, lane, …
  ir::Builtin builtin = ir::Builtin::ThreadId;
  std::uint8_t axis = 0;
  bool on_shared = false;      ///< memory op on a threadgroup allocation (else a tensor)
  bool on_output = false;      ///< memory op on a tensor the kernel writes: race-checked
  bool concurrent = false;     ///< if with two sides, one of which waits on an mbarrier: the
                               ///< sides run as concurrent strands
  bool exact = false;          ///< op on the way into an index (arithmetic, cast, select,
                               ///< variable, loop counter): its value carries a wrap mark
  std::uint8_t lanes = 1;      ///< elements per access of a vector load or store
  std::uint32_t elements = 0;  ///< regs.*: the register array's element count; frag.*: a
                               ///< lane's elements of the fragment (of d for frag.mma)
  ir::FragmentShape fragment;  ///< frag, frag.load/store: the fragment's shape; frag.mma: d's;
                               ///< frag.rowvalue/rowreduce/convert: the accumulator's
  std::uint32_t inner = 0;     ///< frag.mma, wg.mma: K, the columns of a and the rows of b;
                               ///< copy.tensor: the tensor map;
                               ///< wg.wait: the groups that may stay pending;
                               ///< wg.turn: the warpgroups that take turns (axis: the step);
                               ///< frag.get/set/coord/rowvalue: the slot; frag.rowreduce: the
                               ///< RowReduction
  ir::MatrixLayout layout = ir::MatrixLayout::RowMajor;  ///< frag.load/store; wg.mma: B's
  std::uint32_t result = 0;    ///< value row written (a scratch row when the op has none); a
                               ///< vector load writes `lanes` rows from here, one per lane, and
                               ///< a register array owns `elements` rows from here
  std::uint32_t args[6] = {};  ///< value rows read; an extract reads its lane's row; regs.*
                               ///< read the array's first row (its elements follow it);
                               ///< frag.* and wg.* read each fragment's first row
  std::uint32_t lane_args =
      0;                       ///< vector store: its values' rows start at Program::lane_args[this]
  int buffer = -1;             ///< parameter index (tensor or constexpr) or shared index
  int source = -1;             ///< copy.async: the tensor it reads (buffer: the allocation);
                               ///< wg.mma: B's allocation (buffer: A's); copy.tensor: the
                               ///< mbarriers' allocation (buffer: the destination)
  Slot imm = 0;                ///< Const value; mbar.init: arrivals; mbar.expect: bytes
  Range body, other;           ///< For: body; If: then, else
  const ir::Op* op = nullptr;  ///< the source op, for messages
};

/// How a program accesses one tensor parameter.
struct TensorUse {
  bool stored = false, loaded = false, atomic = false;
};

struct Program {
  const ir::Kernel* kernel = nullptr;
  std::vector<Instr> code;
  Range main;
  std::vector<std::uint32_t> lane_args;  ///< value rows of the lanes of vector stores
  std::uint32_t rows = 0;   ///< value rows: the kernel's values, lanes of vectors, scratch rows
  std::uint32_t depth = 0;  ///< deepest nesting of For/If
  bool tensor_atomics = false;
  bool warpgroup_products = false;    ///< has wg.mma: shared writes are tracked for the fence check
  std::vector<TensorUse> tensor_use;  ///< by parameter index
};

/// Throws SimError(BadArgument) with the verifier's findings when the kernel is malformed, and
/// when it nests blocks deeper than the interpreter goes.
Program compile(const ir::Kernel& kernel);

/// Marks `exact` every integer op whose value flows, through integer arithmetic, casts, selects,
/// variables and loop counters, into the index of a load, store or atomic: the interpreter
/// computes those exactly and marks a value whose true value did not fit, and an index that
/// carries the mark is reported. Bitwise ops (and, or, xor, not) and bitcasts end the flow:
/// their operands are bit patterns (hashes, masks), allowed to wrap.
void mark_index_arithmetic(Program& program);

/// The integer arithmetic whose result can differ from its true value (wrap, truncate, change
/// sign), which the interpreter redoes exactly on the way into an index.
enum class Wrapping : std::uint8_t { Neg, Abs, Add, Sub, Mul, Div, Shl, Cast };

/// The arithmetic of ops of kind k that can wrap; nullopt for the ops that cannot.
std::optional<Wrapping> wrapping_of(ir::OpKind k);

}  // namespace iron::runtime::sim
