/// The op table: every Iron IR op kind in one list, with its spelling, operand count, nested
/// blocks, result, type rule, traits and C math function. The enum, the printer and parser, the
/// verifier's rules, the passes' predicates, the simulator's definedness checks and the
/// dialects' function names all read this table, so adding an op starts here and the compiler
/// (-Wswitch, no `default:`) names every switch that must learn it.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "iron/core/dtype.hpp"

namespace iron::ir {

/// Coarse op families used by passes, the verifier and the simulator.
enum class OpClass : std::uint8_t { Leaf, Unary, Binary, Compare, Atomic, Simd, Group, Other };

/// Whether an op of a kind defines a value.
enum class ResultRule : std::uint8_t { Required, Forbidden, Optional };

/// What an op's operand and result types must be (the verifier's rules, by family).
enum class TypeRule : std::uint8_t {
  Constant,          ///< const: the attribute fits the type (a bool is 0 or 1)
  ConstexprValue,    ///< constexpr: the type of the constexpr parameter it reads
  ThreadGeometry,    ///< builtin: u32, an axis only where the builtin has one
  FloatOrSigned,     ///< operands and result one float or signed integer type (neg, abs)
  IntegerOrBool,     ///< operands and result one integer or bool type (not, and, or, xor)
  Integer,           ///< operands and result one integer type (shl, shr)
  Float,             ///< operands and result one float type (math functions, pow, fma)
  Number,            ///< operands and result one type, not bool (add, min, …)
  Comparison,        ///< two operands of one type, a bool result
  Selection,         ///< a bool condition, two operands and the result of one type
  Conversion,        ///< any type to any type (cast)
  Reinterpretation,  ///< any type to one of the same size (bitcast)
  TensorAccess,      ///< integer index; element, value and result of the tensor's type
  SharedAccess,      ///< integer index; element, value and result of the allocation's type
  AtomicNumber,      ///< integer index; f32, i32 or u32 value, target and result
  AtomicInteger,     ///< integer index; i32 or u32 value, target and result
  CollectiveNumber,  ///< value and result of one type, not bool
  CollectiveMove,    ///< value and result of one type; an integer lane, mask or delta
  SameAsResult,      ///< every operand of the result's type (var, var.load, extract)
  VariableStore,     ///< variable, value and declared type one type
  LoopBounds,        ///< start, end, step and the induction value one integer type
  Condition,         ///< a bool condition
  NoOperands,        ///< barrier(.among, .simdgroup), fence.proxy.async, wg.registers, exit
  RegisterArray,     ///< regs: an initial value of the element type; a count of 1 to kMaxRegs
  RegisterAccess,    ///< a register array, an integer index; value and result of its type
  FragmentDecl,      ///< frag: an initial value of the element type; a tiled role and shape
  FragmentAccess,    ///< frag.load/store: integer offset and stride; element of the fragment's type
  FragmentMultiply,  ///< frag.mma: an f32 accumulator and A, B fragments of one type that fit it
  FragmentElement,   ///< frag.get/set: a fragment and a slot it has; value and result of its type;
                     ///< frag.coord: a u32 row or column; frag.rowvalue: the f32 of an M×8
                     ///< row vector at the row of a slot of an M×N f32 accumulator
  FragmentTransform,  ///< frag.rowreduce: an f32 accumulator into an M×8 one of its rows;
                      ///< frag.convert: an f32 accumulator into an A of its shape
  AsyncCopy,          ///< copy.async: integer indices into shared memory and a tensor of one type,
                      ///< 16 bytes, a bool that says whether to copy (else zeros)
  AsyncGroup,         ///< async.commit, async.wait: no operands (wait: how many groups may remain)
  PipelineBounds,     ///< pipeline: start, end and step one integer type; 1 to kMaxStages stages
  PipelineIndex,      ///< pipeline.index: a u32, the step (axis 0) or the stage slot (axis 1)
  WarpgroupMultiply,  ///< wg.mma: an f32 accumulator; offsets and strides of one integer type
                      ///< into two shared allocations of one 16-bit float type
  WarpgroupWait,      ///< wg.wait: an f32 accumulator; how many product groups may remain
  TargetQuery,        ///< target.has: a bool; a feature the target has or lacks (ivalue)
  Specialization,     ///< specialize: a bool condition and result (its value, bound per launch)
  TileCopy,           ///< copy.tile: u32 operands; a shared allocation and a tensor of one type,
                      ///< a box of 1 to 256 rows of 16-byte multiples, at most 256 columns
  TensorCopy,         ///< copy.tensor: u32 operands; a tensor map of the kernel, an allocation of
                      ///< its type, an mbarrier allocation
  Mbarrier,           ///< mbar.*: u32 operands into a u32 allocation of 2 words a barrier
};

/// The most copy groups async.wait may leave pending (the immediate of cp.async.wait_group).
inline constexpr std::int64_t kMaxPendingGroups = 7;
/// The most stages a pipeline of copy groups runs (one more than the groups a wait may leave).
inline constexpr std::int64_t kMaxGroupStages = kMaxPendingGroups + 1;
/// The most stages a pipelined loop may ask for: a ring of TMA copies on mbarriers has no group
/// count to respect; a pipeline of copy groups runs kMaxGroupStages of them.
inline constexpr std::int64_t kMaxStages = 16;
/// The threads of a warpgroup (4 simdgroups of 32): the unit of wg.mma, wg.registers and of a
/// pipeline's consumers.
inline constexpr std::uint32_t kWarpgroupThreads = 128;
/// The registers a thread may own after wg.registers: multiples of 8 from 24 to 256.
inline constexpr std::int64_t kMinRegisterBudget = 24;
inline constexpr std::int64_t kMaxRegisterBudget = 256;
/// wg.turn's steps (its axis) and the most warpgroups that take turns (each warpgroup's turn is
/// one of the hardware's 16 named barriers, after the group barrier's 0).
enum class TurnStep : std::uint8_t { Begin, Wait, Pass };
constexpr std::string_view turn_step_name(TurnStep s) {
  return s == TurnStep::Begin ? "begin" : s == TurnStep::Wait ? "wait" : "pass";
}
inline constexpr std::int64_t kMaxTurnWarpgroups = 4;
/// barrier.among joins the group's first ivalue threads, whole simdgroups of a group of at most
/// kMaxGroupThreads, on a named barrier of its own: the last of the 16, past the turns' 1 … 4.
inline constexpr std::int64_t kSimdgroupThreads = 32;
inline constexpr std::int64_t kMaxGroupThreads = 1024;
inline constexpr std::uint32_t kAmongBarrier = 15;

/// The most elements one register array (`regs`) may hold: beyond it, registers run out and
/// the compiler would move the array to local memory.
inline constexpr std::int64_t kMaxRegs = 256;

/// Op traits, as bit flags.
enum OpTrait : std::uint8_t {
  kPure = 1u << 0,          ///< a function of its operands and attributes only
  kEffect = 1u << 1,        ///< writes memory, synchronises or runs blocks: never moved or removed
  kConvergent = 1u << 2,    ///< reached by every thread of a simdgroup or group together
  kReadsMemory = 1u << 3,   ///< reads memory or a variable that may change
  kWritesMemory = 1u << 4,  ///< writes memory or a variable
  kCommutative = 1u << 5,   ///< its two operands may be swapped
  kApproximate = 1u << 6,   ///< its function within a stated error bound, by a fast instruction
};

/// frag.load, frag.store, frag.mma, frag.rowreduce and frag.convert: a simdgroup reads and
/// writes fragments (which, like variables, count as memory) and tensors or shared memory, all
/// its lanes together.
inline constexpr std::uint8_t kFragmentUpdate =
    kEffect | kReadsMemory | kWritesMemory | kConvergent;

// clang-format off
// X(Enum, "text name", Class, operands, blocks, Result, TypeRule, traits, "C math function")
// The C math function is the C library's double-precision name of the f32 function the
// emitters call ("" for none); a dialect derives its own spelling from it.
#define IRON_IR_OPS(X)                                                                                        \
  X(Const,                  "const",                     Leaf,    0, 0, Required,  Constant,         kPure, "")                                  \
  X(ConstexprRef,           "constexpr",                 Leaf,    0, 0, Required,  ConstexprValue,   kPure, "")                                  \
  X(Builtin,                "builtin",                   Leaf,    0, 0, Required,  ThreadGeometry,   kPure, "")                                  \
  X(Neg,                    "neg",                       Unary,   1, 0, Required,  FloatOrSigned,    kPure, "")                                  \
  X(Not,                    "not",                       Unary,   1, 0, Required,  IntegerOrBool,    kPure, "")                                  \
  X(Sqrt,                   "sqrt",                      Unary,   1, 0, Required,  Float,            kPure, "sqrt")                              \
  X(Rsqrt,                  "rsqrt",                     Unary,   1, 0, Required,  Float,            kPure, "rsqrt")                             \
  X(Exp,                    "exp",                       Unary,   1, 0, Required,  Float,            kPure, "exp")                               \
  X(Exp2,                   "exp2",                      Unary,   1, 0, Required,  Float,            kPure, "exp2")                              \
  X(Exp2Approx,             "exp2.approx",               Unary,   1, 0, Required,  Float,            kPure | kApproximate, "")                   \
  X(Log,                    "log",                       Unary,   1, 0, Required,  Float,            kPure, "log")                               \
  X(Log2,                   "log2",                      Unary,   1, 0, Required,  Float,            kPure, "log2")                              \
  X(Sin,                    "sin",                       Unary,   1, 0, Required,  Float,            kPure, "sin")                               \
  X(Cos,                    "cos",                       Unary,   1, 0, Required,  Float,            kPure, "cos")                               \
  X(Tanh,                   "tanh",                      Unary,   1, 0, Required,  Float,            kPure, "tanh")                              \
  X(Erf,                    "erf",                       Unary,   1, 0, Required,  Float,            kPure, "erf")                               \
  X(Abs,                    "abs",                       Unary,   1, 0, Required,  FloatOrSigned,    kPure, "fabs")                              \
  X(Recip,                  "recip",                     Unary,   1, 0, Required,  Float,            kPure, "")                                  \
  X(RecipApprox,            "recip.approx",              Unary,   1, 0, Required,  Float,            kPure | kApproximate, "")                   \
  X(Floor,                  "floor",                     Unary,   1, 0, Required,  Float,            kPure, "floor")                             \
  X(Ceil,                   "ceil",                      Unary,   1, 0, Required,  Float,            kPure, "ceil")                              \
  X(Add,                    "add",                       Binary,  2, 0, Required,  Number,           kPure | kCommutative, "")                   \
  X(Sub,                    "sub",                       Binary,  2, 0, Required,  Number,           kPure, "")                                  \
  X(Mul,                    "mul",                       Binary,  2, 0, Required,  Number,           kPure | kCommutative, "")                   \
  X(Div,                    "div",                       Binary,  2, 0, Required,  Number,           kPure, "")                                  \
  X(Rem,                    "rem",                       Binary,  2, 0, Required,  Number,           kPure, "fmod")                              \
  X(Min,                    "min",                       Binary,  2, 0, Required,  Number,           kPure | kCommutative, "fmin")               \
  X(Max,                    "max",                       Binary,  2, 0, Required,  Number,           kPure | kCommutative, "fmax")               \
  X(Pow,                    "pow",                       Binary,  2, 0, Required,  Float,            kPure, "pow")                               \
  X(Atan2,                  "atan2",                     Binary,  2, 0, Required,  Float,            kPure, "atan2")                             \
  X(And,                    "and",                       Binary,  2, 0, Required,  IntegerOrBool,    kPure | kCommutative, "")                   \
  X(Or,                     "or",                        Binary,  2, 0, Required,  IntegerOrBool,    kPure | kCommutative, "")                   \
  X(Xor,                    "xor",                       Binary,  2, 0, Required,  IntegerOrBool,    kPure | kCommutative, "")                   \
  X(Shl,                    "shl",                       Binary,  2, 0, Required,  Integer,          kPure, "")                                  \
  X(Shr,                    "shr",                       Binary,  2, 0, Required,  Integer,          kPure, "")                                  \
  X(Eq,                     "eq",                        Compare, 2, 0, Required,  Comparison,       kPure | kCommutative, "")                   \
  X(Ne,                     "ne",                        Compare, 2, 0, Required,  Comparison,       kPure | kCommutative, "")                   \
  X(Lt,                     "lt",                        Compare, 2, 0, Required,  Comparison,       kPure, "")                                  \
  X(Le,                     "le",                        Compare, 2, 0, Required,  Comparison,       kPure, "")                                  \
  X(Gt,                     "gt",                        Compare, 2, 0, Required,  Comparison,       kPure, "")                                  \
  X(Ge,                     "ge",                        Compare, 2, 0, Required,  Comparison,       kPure, "")                                  \
  X(Select,                 "select",                    Other,   3, 0, Required,  Selection,        kPure, "")                                  \
  X(Fma,                    "fma",                       Other,   3, 0, Required,  Float,            kPure, "fma")                               \
  X(Cast,                   "cast",                      Other,   1, 0, Required,  Conversion,       kPure, "")                                  \
  X(Bitcast,                "bitcast",                   Other,   1, 0, Required,  Reinterpretation, kPure, "")                                  \
  X(Load,                   "load",                      Other,   1, 0, Required,  TensorAccess,     kReadsMemory, "")                           \
  X(Store,                  "store",                     Other,   2, 0, Forbidden, TensorAccess,     kEffect | kWritesMemory, "")                \
  X(SharedLoad,             "shared.load",               Other,   1, 0, Required,  SharedAccess,     kReadsMemory, "")                           \
  X(SharedStore,            "shared.store",              Other,   2, 0, Forbidden, SharedAccess,     kEffect | kWritesMemory, "")                \
  X(AtomicAdd,              "atomic.add",                Atomic,  2, 0, Optional,  AtomicNumber,     kEffect | kReadsMemory | kWritesMemory, "") \
  X(AtomicMax,              "atomic.max",                Atomic,  2, 0, Optional,  AtomicNumber,     kEffect | kReadsMemory | kWritesMemory, "") \
  X(AtomicMin,              "atomic.min",                Atomic,  2, 0, Optional,  AtomicNumber,     kEffect | kReadsMemory | kWritesMemory, "") \
  X(AtomicAnd,              "atomic.and",                Atomic,  2, 0, Optional,  AtomicInteger,    kEffect | kReadsMemory | kWritesMemory, "") \
  X(AtomicOr,               "atomic.or",                 Atomic,  2, 0, Optional,  AtomicInteger,    kEffect | kReadsMemory | kWritesMemory, "") \
  X(AtomicXor,              "atomic.xor",                Atomic,  2, 0, Optional,  AtomicInteger,    kEffect | kReadsMemory | kWritesMemory, "") \
  X(AtomicExchange,         "atomic.xchg",               Atomic,  2, 0, Optional,  AtomicInteger,    kEffect | kReadsMemory | kWritesMemory, "") \
  X(Barrier,                "barrier",                   Other,   0, 0, Forbidden, NoOperands,       kEffect | kConvergent, "")                  \
  X(BarrierAmong,           "barrier.among",             Other,   0, 0, Forbidden, NoOperands,       kEffect | kConvergent, "")                  \
  X(BarrierSimdgroup,       "barrier.simdgroup",         Other,   0, 0, Forbidden, NoOperands,       kEffect | kConvergent, "")                  \
  X(SimdSum,                "simd.sum",                  Simd,    1, 0, Required,  CollectiveNumber, kConvergent, "")                            \
  X(SimdMax,                "simd.max",                  Simd,    1, 0, Required,  CollectiveNumber, kConvergent, "")                            \
  X(SimdMin,                "simd.min",                  Simd,    1, 0, Required,  CollectiveNumber, kConvergent, "")                            \
  X(SimdPrefixSum,          "simd.prefix_sum",           Simd,    1, 0, Required,  CollectiveNumber, kConvergent, "")                            \
  X(SimdPrefixExclusiveSum, "simd.prefix_exclusive_sum", Simd,    1, 0, Required,  CollectiveNumber, kConvergent, "")                            \
  X(SimdShuffle,            "simd.shuffle",              Simd,    2, 0, Required,  CollectiveMove,   kConvergent, "")                            \
  X(SimdShuffleXor,         "simd.shuffle_xor",          Simd,    2, 0, Required,  CollectiveMove,   kConvergent, "")                            \
  X(SimdShuffleUp,          "simd.shuffle_up",           Simd,    2, 0, Required,  CollectiveMove,   kConvergent, "")                            \
  X(SimdShuffleDown,        "simd.shuffle_down",         Simd,    2, 0, Required,  CollectiveMove,   kConvergent, "")                            \
  X(SimdBroadcast,          "simd.broadcast",            Simd,    2, 0, Required,  CollectiveMove,   kConvergent, "")                            \
  X(ReduceSum,              "reduce.sum",                Group,   1, 0, Required,  CollectiveNumber, kConvergent, "")                            \
  X(ReduceMax,              "reduce.max",                Group,   1, 0, Required,  CollectiveNumber, kConvergent, "")                            \
  X(ReduceMin,              "reduce.min",                Group,   1, 0, Required,  CollectiveNumber, kConvergent, "")                            \
  X(VarDecl,                "var",                       Other,   1, 0, Required,  SameAsResult,     0, "")                                      \
  X(Extract,                "extract",                   Other,   1, 0, Required,  SameAsResult,     kPure, "")                                  \
  X(VarLoad,                "var.load",                  Other,   1, 0, Required,  SameAsResult,     kReadsMemory, "")                           \
  X(VarStore,               "var.store",                 Other,   2, 0, Forbidden, VariableStore,    kEffect | kWritesMemory, "")                \
  X(For,                    "for",                       Other,   3, 1, Required,  LoopBounds,       kEffect, "")                                \
  X(If,                     "if",                        Other,   1, 2, Forbidden, Condition,        kEffect, "")                                \
  X(RegsDecl,               "regs",                      Other,   1, 0, Required,  RegisterArray,    0, "")                                      \
  X(RegsLoad,               "regs.load",                 Other,   2, 0, Required,  RegisterAccess,   kReadsMemory, "")                           \
  X(RegsStore,              "regs.store",                Other,   3, 0, Forbidden, RegisterAccess,   kEffect | kWritesMemory, "")                \
  X(FragDecl,               "frag",                      Other,   1, 0, Required,  FragmentDecl,     0, "")                                      \
  X(FragLoad,               "frag.load",                 Other,   3, 0, Forbidden, FragmentAccess,   kFragmentUpdate, "")                        \
  X(FragStore,              "frag.store",                Other,   3, 0, Forbidden, FragmentAccess,   kFragmentUpdate, "")                        \
  X(FragMma,                "frag.mma",                  Other,   3, 0, Forbidden, FragmentMultiply, kFragmentUpdate, "")                        \
  X(FragGet,                "frag.get",                  Other,   1, 0, Required,  FragmentElement,  kReadsMemory, "")                           \
  X(FragSet,                "frag.set",                  Other,   2, 0, Forbidden, FragmentElement,  kEffect | kWritesMemory, "")                \
  X(FragCoord,              "frag.coord",                Other,   1, 0, Required,  FragmentElement,  kPure, "")                                  \
  X(FragRowValue,           "frag.rowvalue",             Other,   2, 0, Required,  FragmentElement,  kReadsMemory, "")                           \
  X(FragRowReduce,          "frag.rowreduce",            Other,   2, 0, Forbidden, FragmentTransform, kFragmentUpdate, "")                       \
  X(FragConvert,            "frag.convert",              Other,   2, 0, Forbidden, FragmentTransform, kFragmentUpdate, "")                       \
  X(CopyAsync,              "copy.async",                Other,   3, 0, Forbidden, AsyncCopy,        kEffect | kReadsMemory | kWritesMemory, "") \
  X(AsyncCommit,            "async.commit",              Other,   0, 0, Forbidden, AsyncGroup,       kEffect | kWritesMemory, "")                \
  X(AsyncWait,              "async.wait",                Other,   0, 0, Forbidden, AsyncGroup,       kEffect | kWritesMemory, "")                \
  X(Pipeline,               "pipeline",                  Other,   3, 2, Forbidden, PipelineBounds,   kEffect, "")                                \
  X(PipelineIndex,          "pipeline.index",            Other,   0, 0, Required,  PipelineIndex,    kEffect, "")                                \
  X(WgMma,                  "wg.mma",                    Other,   5, 0, Forbidden, WarpgroupMultiply, kFragmentUpdate, "")                       \
  X(WgCommit,               "wg.commit",                 Other,   0, 0, Forbidden, AsyncGroup,       kEffect | kWritesMemory | kConvergent, "")  \
  X(WgWait,                 "wg.wait",                   Other,   1, 0, Forbidden, WarpgroupWait,    kFragmentUpdate, "")                        \
  X(FenceProxyAsync,        "fence.proxy.async",         Other,   0, 0, Forbidden, NoOperands,       kEffect | kReadsMemory | kWritesMemory, "") \
  X(TargetHas,              "target.has",                Leaf,    0, 0, Required,  TargetQuery,      kPure, "") \
  X(Specialize,             "specialize",                Other,   1, 0, Required,  Specialization,   kPure, "") \
  X(CopyTile,               "copy.tile",                 Other,   6, 0, Forbidden, TileCopy,         kEffect | kReadsMemory | kWritesMemory | kConvergent, "") \
  X(CopyTensor,             "copy.tensor",               Other,   4, 0, Forbidden, TensorCopy,       kEffect | kReadsMemory | kWritesMemory, "") \
  X(MbarInit,               "mbar.init",                 Other,   1, 0, Forbidden, Mbarrier,         kEffect | kWritesMemory, "") \
  X(MbarExpect,             "mbar.expect",               Other,   1, 0, Forbidden, Mbarrier,         kEffect | kReadsMemory | kWritesMemory, "") \
  X(MbarWait,               "mbar.wait",                 Other,   2, 0, Forbidden, Mbarrier,         kEffect | kReadsMemory | kWritesMemory, "") \
  X(MbarInval,              "mbar.inval",                Other,   1, 0, Forbidden, Mbarrier,         kEffect | kWritesMemory, "") \
  X(MbarArrive,             "mbar.arrive",               Other,   1, 0, Forbidden, Mbarrier,         kEffect | kReadsMemory | kWritesMemory, "") \
  X(WgRegisters,            "wg.registers",              Other,   0, 0, Forbidden, NoOperands,       kEffect | kConvergent, "") \
  X(WgTurn,                 "wg.turn",                   Other,   0, 0, Forbidden, NoOperands,       kEffect | kConvergent, "") \
  X(Exit,                   "exit",                      Other,   0, 0, Forbidden, NoOperands,       kEffect, "")
// clang-format on

enum class OpKind : std::uint8_t {
#define IRON_X(e, name, cls, operands, blocks, result, types, traits, c_function) e,
  IRON_IR_OPS(IRON_X)
#undef IRON_X
};

/// One row of the op table. A vector store (lanes > 1) takes one value operand per lane, so
/// its operand count is `operands - 1 + lanes`.
struct OpInfo {
  std::string_view name;
  OpClass op_class;
  std::uint8_t operands;
  std::uint8_t blocks;
  ResultRule result;
  TypeRule types;
  std::uint8_t traits;
  std::string_view c_function;

  constexpr bool has(OpTrait t) const { return (traits & t) != 0; }
};

/// The table, in enum order.
inline constexpr std::array kOpTable = {
#define IRON_X(e, name, cls, operands, blocks, result, types, traits, c_function) \
  OpInfo{name,                                                                    \
         OpClass::cls,                                                            \
         operands,                                                                \
         blocks,                                                                  \
         ResultRule::result,                                                      \
         TypeRule::types,                                                         \
         std::uint8_t(traits),                                                    \
         c_function},
    IRON_IR_OPS(IRON_X)
#undef IRON_X
};

/// The table's row for `k`.
constexpr const OpInfo& op_info(OpKind k) { return kOpTable[static_cast<std::size_t>(k)]; }

/// Whether type rule `rule` allows operands of type `t` (the element of arithmetic, comparison
/// and collective ops, the value of an atomic). Rules about where operands come from (tensors,
/// variables, lanes) are the verifier's.
constexpr bool type_rule_allows(TypeRule rule, DType t) {
  switch (rule) {
    case TypeRule::FloatOrSigned:
      return is_float(t) || is_signed_int(t);
    case TypeRule::IntegerOrBool:
      return !is_float(t);
    case TypeRule::Integer:
    case TypeRule::LoopBounds:
    case TypeRule::PipelineBounds:
      return is_integer(t);
    case TypeRule::Float:
      return is_float(t);
    case TypeRule::Number:
    case TypeRule::CollectiveNumber:
      return t != DType::Bool;
    case TypeRule::AtomicNumber:
      return t == DType::F32 || t == DType::I32 || t == DType::U32;
    case TypeRule::AtomicInteger:
      return t == DType::I32 || t == DType::U32;
    case TypeRule::ThreadGeometry:
    case TypeRule::PipelineIndex:
      return t == DType::U32;
    case TypeRule::Condition:
    case TypeRule::TargetQuery:
    case TypeRule::Specialization:
      return t == DType::Bool;
    case TypeRule::Constant:
    case TypeRule::ConstexprValue:
    case TypeRule::Comparison:
    case TypeRule::Selection:
    case TypeRule::Conversion:
    case TypeRule::Reinterpretation:
    case TypeRule::TensorAccess:
    case TypeRule::SharedAccess:
    case TypeRule::CollectiveMove:
    case TypeRule::SameAsResult:
    case TypeRule::VariableStore:
    case TypeRule::NoOperands:
    case TypeRule::RegisterArray:
    case TypeRule::RegisterAccess:
    case TypeRule::FragmentDecl:
    case TypeRule::FragmentAccess:
    case TypeRule::FragmentMultiply:
    case TypeRule::FragmentElement:
    case TypeRule::FragmentTransform:
    case TypeRule::AsyncCopy:
    case TypeRule::AsyncGroup:
    case TypeRule::WarpgroupMultiply:
    case TypeRule::WarpgroupWait:
    case TypeRule::TileCopy:
    case TypeRule::TensorCopy:
    case TypeRule::Mbarrier:
      return true;
  }
  return false;
}

/// Whether an op of kind `k` is defined on values of type `t`: its type rule allows `t`. The
/// verifier, constant folding and the simulator all ask this, so they cannot disagree.
constexpr bool op_defined_on(OpKind k, DType t) { return type_rule_allows(op_info(k).types, t); }

/// Whether the text form writes the op's type (` : T`): not for the ops whose type means nothing
/// (barrier, async.commit, async.wait, wg.commit, wg.wait, fence.proxy.async).
constexpr bool op_has_type(OpKind k) {
  return k != OpKind::Barrier && k != OpKind::BarrierAmong && k != OpKind::BarrierSimdgroup &&
         k != OpKind::AsyncCommit && k != OpKind::AsyncWait && k != OpKind::WgCommit &&
         k != OpKind::WgWait && k != OpKind::FenceProxyAsync && k != OpKind::MbarInit &&
         k != OpKind::MbarExpect && k != OpKind::MbarWait && k != OpKind::MbarInval &&
         k != OpKind::MbarArrive && k != OpKind::WgRegisters && k != OpKind::WgTurn &&
         k != OpKind::Exit;
}

/// What an op holds besides its operands and blocks: the part of an op that the text form
/// spells out and the structural hash reads.
enum class OpAttributes : std::uint8_t {
  None,               ///< operands only
  Literal,            ///< a constant's value (ivalue or fvalue, by its type)
  Constexpr,          ///< the constexpr parameter it reads (param)
  Builtin,            ///< a builtin and its axis
  Tensor,             ///< the tensor parameter it accesses (param)
  Shared,             ///< the shared allocation it accesses (shared)
  TensorOrShared,     ///< a tensor parameter (param) or, where shared >= 0, a shared allocation
  Lane,               ///< the lane it reads from its vector operand (ivalue)
  Count,              ///< the element count of a register array (ivalue)
  Fragment,           ///< a fragment's role and shape (fragment)
  FragmentMemory,     ///< a tensor parameter (param) or shared allocation (shared), and a layout
  FragmentSlot,       ///< a lane's slot of a fragment (ivalue); frag.coord: and row or col (axis)
  Reduction,          ///< frag.rowreduce: max or sum (ivalue, a RowReduction)
  AsyncCopy,          ///< the shared allocation written (shared) and the tensor read (param)
  Pending,            ///< async.wait: the copy groups that may stay pending (ivalue)
  StageIndex,         ///< pipeline.index: the step (axis 0) or the stage slot (axis 1)
  Stages,             ///< pipeline: the stages it asks for (ivalue)
  WarpgroupOperands,  ///< wg.mma: A's allocation (shared), B's (shared_b), B's layout, K (ivalue)
  WarpgroupPending,   ///< wg.wait: the product groups that may stay pending (ivalue)
  Feature,            ///< target.has: the target feature it asks about (ivalue, a TargetFeature)
  TileBox,         ///< copy.tile: the allocation (shared), the tensor (param), the box (fragment)
  TensorBox,       ///< copy.tensor: the allocation (shared), the map (ivalue), mbarriers (shared_b)
  Barrier,         ///< mbar.*: the mbarrier allocation (shared); init/expect: a count (ivalue)
  RegisterBudget,  ///< wg.registers: the registers a thread (ivalue), raised or lowered (axis 1/0)
  Turn,            ///< wg.turn: begin, wait or pass (axis 0/1/2) among ivalue warpgroups
  Threads,         ///< barrier.among: the threads it joins, the group's first ivalue
};

/// The attributes of ops of kind `k`, which follow from its type rule.
constexpr OpAttributes op_attributes(OpKind k) {
  switch (op_info(k).types) {
    case TypeRule::Constant:
      return OpAttributes::Literal;
    case TypeRule::ConstexprValue:
      return OpAttributes::Constexpr;
    case TypeRule::ThreadGeometry:
      return OpAttributes::Builtin;
    case TypeRule::TensorAccess:
      return OpAttributes::Tensor;
    case TypeRule::SharedAccess:
      return OpAttributes::Shared;
    case TypeRule::AtomicNumber:
    case TypeRule::AtomicInteger:
      return OpAttributes::TensorOrShared;
    case TypeRule::SameAsResult:  // var and var.load hold nothing more; extract picks a lane
      return k == OpKind::Extract ? OpAttributes::Lane : OpAttributes::None;
    case TypeRule::RegisterArray:
      return OpAttributes::Count;
    case TypeRule::FragmentDecl:
      return OpAttributes::Fragment;
    case TypeRule::FragmentAccess:
      return OpAttributes::FragmentMemory;
    case TypeRule::FragmentElement:
      return OpAttributes::FragmentSlot;
    case TypeRule::FragmentTransform:
      return k == OpKind::FragRowReduce ? OpAttributes::Reduction : OpAttributes::None;
    case TypeRule::AsyncCopy:
      return OpAttributes::AsyncCopy;
    case TypeRule::AsyncGroup:
      return k == OpKind::AsyncWait ? OpAttributes::Pending : OpAttributes::None;
    case TypeRule::PipelineIndex:
      return OpAttributes::StageIndex;
    case TypeRule::PipelineBounds:
      return OpAttributes::Stages;
    case TypeRule::WarpgroupMultiply:
      return OpAttributes::WarpgroupOperands;
    case TypeRule::WarpgroupWait:
      return OpAttributes::WarpgroupPending;
    case TypeRule::TargetQuery:
      return OpAttributes::Feature;
    case TypeRule::TileCopy:
      return OpAttributes::TileBox;
    case TypeRule::TensorCopy:
      return OpAttributes::TensorBox;
    case TypeRule::Mbarrier:
      return OpAttributes::Barrier;
    case TypeRule::NoOperands:
      if (k == OpKind::WgTurn) return OpAttributes::Turn;
      if (k == OpKind::BarrierAmong) return OpAttributes::Threads;
      return k == OpKind::WgRegisters ? OpAttributes::RegisterBudget : OpAttributes::None;
    case TypeRule::FloatOrSigned:
    case TypeRule::IntegerOrBool:
    case TypeRule::Integer:
    case TypeRule::Float:
    case TypeRule::Number:
    case TypeRule::Comparison:
    case TypeRule::Selection:
    case TypeRule::Conversion:
    case TypeRule::Reinterpretation:
    case TypeRule::CollectiveNumber:
    case TypeRule::CollectiveMove:
    case TypeRule::VariableStore:
    case TypeRule::LoopBounds:
    case TypeRule::Condition:
    case TypeRule::Specialization:
    case TypeRule::RegisterAccess:
    case TypeRule::FragmentMultiply:
      return OpAttributes::None;
  }
  return OpAttributes::None;
}

}  // namespace iron::ir
