/// Iron IR: a kernel is typed SSA values in nested blocks (loops and branches), plus its
/// parameters, threadgroup allocations and dispatch contract. The op kinds and what each means
/// to the verifier, passes, simulator and emitters are one table (op_table.hpp).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "iron/core/dtype.hpp"
#include "iron/core/fragment.hpp"
#include "iron/core/op_table.hpp"
#include "iron/core/size_expr.hpp"

namespace iron::ir {

using ValueId = std::uint32_t;
inline constexpr ValueId kNoValue = 0xFFFFFFFFu;

/// Where in the kernel's C++ source an op was traced (file relative to the project root).
struct SourceLoc {
  std::string file;
  std::uint32_t line = 0;
  bool known() const { return line != 0; }
  bool operator==(const SourceLoc&) const = default;
};

std::string_view op_name(OpKind k);
OpClass op_class(OpKind k);
/// Inverse of op_name; returns false for an unknown name.
bool parse_op_name(std::string_view name, OpKind& out);

/// The thread-geometry values a kernel can read. Per-axis ones carry an axis 0..2.
enum class Builtin : std::uint8_t {
  ThreadId,        ///< thread index within its group, per axis
  GroupId,         ///< group index within the grid, per axis
  GroupSize,       ///< threads per group, per axis
  GridGroups,      ///< groups in the grid, per axis
  GlobalId,        ///< group_id * group_size + thread_id, per axis
  Lane,            ///< lane within the 32-wide simdgroup
  Simdgroup,       ///< simdgroup index within the group
  SimdgroupCount,  ///< simdgroups per group
};
std::string_view builtin_name(Builtin b);
bool parse_builtin_name(std::string_view name, Builtin& out);
inline bool builtin_has_axis(Builtin b) { return b <= Builtin::GlobalId; }

/// What a kernel may ask of the target it is compiled for (target.has), so that one source
/// holds the best path of each target: the compiler keeps the branch the target takes and drops
/// the other (select_target_paths). WarpgroupProducts: wg.mma runs as Hopper's wgmma (sm_90a),
/// with the shared memory that comes with it. PairedAccumulatorColumns: the target's lane map is
/// one where each lane's accumulator slots 2i and 2i + 1 are columns c and c + 1 of one row, c
/// even (mma.m16n8k16's and Metal's 8×8 maps; not wmma's, whose layout is the library's).
/// LargeSharedMemory: a group may have more than 32 KB of threadgroup memory (every CUDA
/// profile; not Metal), room to stage a simdgroup's whole accumulators beside a kernel's rings.
enum class TargetFeature : std::uint8_t {
  WarpgroupProducts,
  PairedAccumulatorColumns,
  TensorMaps,
  LargeSharedMemory,
};
std::string_view target_feature_name(TargetFeature f);
bool parse_target_feature_name(std::string_view name, TargetFeature& out);

struct Op;

/// A straight-line list of ops; loops and branches own nested blocks.
struct Block {
  std::vector<Op> ops;
};

/// One IR operation. Which fields matter depends on `kind` (see docs/compiler.md):
///   Const: type + fvalue/ivalue.          ConstexprRef: param.
///   Builtin: builtin + axis.               Unary/Binary/Compare/Select/Fma: args.
///   Cast/Bitcast: args[0], type = target.  Load: param, args=[index].
///   Store: param, args=[index, value].     SharedLoad/Store: shared, args as Load/Store.
///   Vector access (lanes > 1, made by the vectorizer): Load/SharedLoad read `lanes` consecutive
///   elements from `index` (a multiple of lanes) into one vector value; Store/SharedStore take
///   args=[index, v0 … v(lanes-1)]. Extract: args=[vector], ivalue = lane, result a scalar.
///   Atomic*: param or shared, args=[index, value], result = previous value.
///   Simd*/Reduce*: args=[value(, lane|mask|delta)].
///   VarDecl: result = the variable, args=[init]. VarLoad: args=[var]. VarStore: args=[var, v].
///   RegsDecl: result = a per-thread register array of ivalue elements, args=[init].
///   RegsLoad: args=[array, index]. RegsStore: args=[array, index, v]. promote_registers turns
///   them into variables once every index is a constant; none reach an emitter.
///   FragDecl: result = a fragment of `fragment` (role, rows × cols) of element type `type`, one
///   per simdgroup, every element starting at args=[init]. FragLoad/FragStore: param or shared,
///   args=[offset, fragment, stride], `layout`: element (r, c) at offset + r·stride + c
///   (row-major) or offset + c·stride + r. FragMma: args=[d, a, b], d += a·b. FragGet/FragSet:
///   args=[fragment(, value)], ivalue = the lane's slot (fragment.hpp's lane map). FragCoord:
///   args=[fragment], ivalue = slot, axis 0 (its row) or 1 (its column), a u32. FragRowValue:
///   args=[fragment, v], ivalue = the slot: v (an M×8 accumulator) at the slot's row.
///   FragRowReduce: args=[d, f], ivalue = a RowReduction: every column of d's row r is the max
///   or sum of f's row r. FragConvert: args=[a, f], a = f rounded to a's element type.
///   CopyAsync: shared (destination) and param (source tensor), args=[dst_index, src_index,
///   valid], lanes = the elements of 16 bytes: the thread starts copying them (zeros when valid is
///   false). AsyncCommit closes the thread's group of started copies; AsyncWait (ivalue = N)
///   waits until at most N of its groups are unfinished.
///   WgMma: shared (A) and shared_b (B), args=[d, a_offset, a_stride, b_offset, b_stride] and,
///   for a row-major B, b_panel; ivalue = K, `layout` = B's: the warpgroup (4 simdgroups)
///   multiplies; simdgroup s adds to d (its 16×N accumulator) rows 16·(s % 4) … of A (row-major,
///   64×K at a_offset) times B (K×N at b_offset, column-major: (k, n) at b_offset + n·b_stride +
///   k), asynchronously: d is ready and the operands free after a WgWait. A row-major B is read
///   in panels of b_stride columns, b_panel elements apart: (k, n) at b_offset +
///   (n / b_stride)·b_panel + k·b_stride + n % b_stride (one panel where N ≤ b_stride). The
///   register form (shared = -1, args=[d, a, b_offset, b_stride(, b_panel)]) takes A from
///   simdgroup s's own 16×K A fragment `a` (rows 16·(s % 4) … of the 64×K), which must not change
///   until the WgWait. WgCommit closes the simdgroup's group of started products;
///   WgWait (args=[d], ivalue = N) waits until at most N of its groups are unfinished.
///   TargetHas: a bool, ivalue = a TargetFeature: whether the target compiled for has it.
///   CopyTile: shared (destination), param (source tensor), args=[dst_index, base, height, width,
///   row0, col0], `fragment`.rows × .cols = the box: every thread of the group starts copying
///   rows row0 … and columns col0 … of the row-major height × width matrix at src[base] to
///   dst[dst_index + r·cols + c] (zeros outside the matrix), landing as copy.async's do.
///   lower_tile_copies makes it each thread's copy.async, or leaves it for expand_pipelines to
///   make a CopyTensor on a target with tensor maps. The image form (ivalue = W ≥ 1, the box's
///   width in pixels) adds args [images, image_width, image, x0]: the source is `images` images
///   of height × image_width pixels of `width` channels each (NHWC), the box H·W pixels of
///   image `image` from pixel row row0 and column x0 (row0 and x0 i32, negative allowed), rows in
///   (y, x) order, pixels outside the image landing as zeros (a convolution's padding).
///   CopyTensor: shared (destination), shared_b (mbarriers), ivalue = the kernel's tensor map,
///   args=[dst_index, row0, col0, barrier]: one thread starts the map's box at (row0, col0),
///   which completes the transaction of mbarrier `barrier` when it lands (Hopper's TMA); an image
///   map's copy adds [image, x0] (row0 and x0 i32).
///   MbarInit/MbarExpect/MbarWait/MbarInval/MbarArrive: shared = an allocation of mbarriers (2 u32
///   words each), args[0] = which: init to ivalue arrivals; arrive expecting ivalue bytes; wait
///   until the phase of parity args[1] has completed; invalidate; arrive once for the simdgroup
///   (its lanes' earlier shared-memory accesses done first).
///   WgRegisters: the warpgroup's threads raise (axis 1) or lower (axis 0) the registers each
///   owns to ivalue (Hopper's setmaxnreg; a multiple of 8 from 24 to 256).
///   WgTurn (axis = a TurnStep, ivalue = W): warpgroups 0 … W-1 take turns (named barriers
///   1 … W of two warpgroups each). Begin: warpgroup W-1 gives warpgroup 0 its first turn;
///   Wait: each warpgroup waits for its turn; Pass: each gives the next warpgroup (0 after W-1)
///   its turn. Every thread of the W warpgroups reaches each, none other; after Begin they
///   alternate Wait, Pass. Only an order of issue: no memory is published by it.
///   Exit: the thread is done (a specialized pipeline's producer on sm_90a, so that none of the
///   consumers' registers stay live in it); a later group barrier waits for the others alone.
///   FenceProxyAsync orders the thread's earlier shared-memory writes before later reads by the
///   asynchronous proxy (wg.mma's operand reads).
///   Pipeline: args=[start, end, step], blocks=[load, compute], ivalue = the stages asked for,
///   axis = the lag (steps a compute's warpgroup products may keep reading its slot),
///   consumers = the threads that compute when the rest of the group is a producer (0: none).
///   For: args=[start, end, step], result = induction value, blocks=[body]; runs while i < end.
///   ivalue = 1: kept rolled (neither unroll_loops nor the target's compiler unrolls it).
///   If: args=[cond], blocks=[then, else].
struct Op {
  OpKind kind = OpKind::Const;
  DType type = DType::U32;  ///< type of the result (or of the stored / declared value)
  ValueId result = kNoValue;
  std::vector<ValueId> args;
  double fvalue = 0.0;      ///< Const of a float type
  std::int64_t ivalue = 0;  ///< Const of an integer or bool type
  Builtin builtin = Builtin::ThreadId;
  std::uint8_t axis = 0;
  std::uint8_t lanes = 1;  ///< elements per access of a vector Load/Store (1, 2, 4, 8, 16)
  int param = -1;          ///< kernel parameter index (tensor or constexpr)
  int shared = -1;         ///< threadgroup allocation index
  int shared_b = -1;       ///< WgMma: the allocation of its B operand
  /// Pipeline: the threads 0 … consumers-1 run the compute block and the rest of the group loads
  /// (a producer); 0: every thread does both.
  std::uint32_t consumers = 0;
  FragmentShape fragment;                        ///< FragDecl: the fragment's role and shape
  MatrixLayout layout = MatrixLayout::RowMajor;  ///< FragLoad/FragStore: how memory holds it
  std::vector<Block> blocks;
  SourceLoc loc;
};

/// A frag.store's column window in its ivalue: `cols` columns from `first` (multiples of
/// kWindowCols), the rest of the fragment not written; 0 (no window) writes every element.
inline constexpr int kWindowShift = 16;
inline constexpr std::int64_t kWindowMask = (std::int64_t{1} << kWindowShift) - 1;
inline constexpr std::uint32_t kWindowCols = 16;
constexpr std::int64_t fragment_window(std::uint32_t first, std::uint32_t cols) {
  return (static_cast<std::int64_t>(first) << kWindowShift) | cols;
}
/// Whether a window of `cols` columns from `first` is whole kWindowCols multiples inside a
/// fragment of `fragment_cols` columns: the one rule the trace and the verifier both apply.
constexpr bool window_fits(std::uint32_t first, std::uint32_t cols, std::uint32_t fragment_cols) {
  return cols != 0 && first % kWindowCols == 0 && cols % kWindowCols == 0 &&
         first + cols <= fragment_cols;
}

/// Input: a tensor the kernel reads (`in`). Output: a tensor it writes, undefined at entry
/// (`out`). Constexpr: a scalar (`constexpr`). InOut: a tensor it reads and writes, whose
/// contents at entry are defined (`inout`: in-place updates, caches written in part).
enum class ParamKind : std::uint8_t { Input, Output, Constexpr, InOut };
std::string_view param_kind_name(ParamKind k);
bool parse_param_kind_name(std::string_view name, ParamKind& out);
/// Whether the kernel writes tensors of this kind (Output and InOut).
constexpr bool is_output(ParamKind k) { return k == ParamKind::Output || k == ParamKind::InOut; }

/// A kernel argument: a tensor read by the kernel, a tensor it writes, or a constexpr scalar.
struct Param {
  std::string name;
  ParamKind kind = ParamKind::Input;
  DType dtype = DType::F32;
};

/// A threadgroup-memory buffer; its name is generated, so two can never collide.
struct SharedAlloc {
  std::string name;
  DType dtype = DType::F32;
  std::uint32_t size = 0;    ///< elements
  std::uint32_t offset = 0;  ///< bytes from the start of the group's shared memory (set by layout)
  /// A ring of the kernel's pipelines: `size` elements per stage, one copy per stage once
  /// expand_pipelines has chosen how many (and then no longer a ring).
  bool ring = false;
  /// XOR-swizzled rows of `swizzle` elements (0: elements in order): element e lives at
  /// e ^ (((e / swizzle) % 8) · chunk), chunk = the elements of 16 bytes, so the 16-byte chunks of
  /// eight consecutive rows fall in different banks. Targets that read tiles with a fixed stride
  /// (Metal, wmma) keep the order instead (layout_shared_memory clears it); results never depend
  /// on it, since every access goes through the same placement.
  std::uint32_t swizzle = 0;
  /// The earlier allocation whose bytes this one reuses (dsl::overlay), or -1: it takes no
  /// bytes of its own where it fits in them (else layout_shared_memory gives it its own), and
  /// the two are never live at once (the simulator reports an access of one that races with or
  /// reads over an access of the other).
  int overlays = -1;
};

/// How the grid maps to work (docs/kernel-style-guide.md §4).
enum class DispatchMode : std::uint8_t { Elementwise, Reduction, Tiled };
std::string_view dispatch_mode_name(DispatchMode m);
bool parse_dispatch_mode_name(std::string_view name, DispatchMode& out);

/// A rule on the threads per group (x * y * z). The bound is a literal, or a constexpr
/// parameter's value divided by `divisor` when `constexpr_name` is set.
struct SizeRule {
  enum class Kind : std::uint8_t { MultipleOf, AtLeast, AtMost, Exactly, PowerOfTwo };
  Kind kind = Kind::MultipleOf;
  std::int64_t value = 0;
  std::string constexpr_name;
  std::int64_t divisor = 1;
};
std::string_view size_rule_name(SizeRule::Kind k);
bool parse_size_rule_name(std::string_view name, SizeRule::Kind& out);

/// A rule on the group count along one axis: `groups.AXIS RELATION bound`, e.g.
/// `groups.x <= ceil_div(n, tpg)` (never more groups than the elements need) or `groups.y == 1`.
struct GridRule {
  enum class Relation : std::uint8_t { Equal, AtMost, AtLeast };
  std::uint8_t axis = 0;
  Relation relation = Relation::Equal;
  SizeExpr bound;
  SourceLoc loc;  ///< the grid(...) declaration
  bool operator==(const GridRule&) const = default;
};
/// `==`, `<=`, `>=`.
std::string_view relation_name(GridRule::Relation r);
bool parse_relation_name(std::string_view name, GridRule::Relation& out);

/// The elements a tensor parameter must hold: the product of `dims` (its layout, e.g.
/// `[groups.x, n]`), exactly, or at least (a cache or a lookup table may be larger than used).
struct TensorLayout {
  std::string param;
  bool exact = true;
  std::vector<SizeExpr> dims;
  SourceLoc loc;  ///< the layout(...) declaration
  bool operator==(const TensorLayout&) const = default;
};

/// A fact the kernel's author asserts about a constexpr: `NAME multiple_of M` (M > 0), e.g.
/// `head_dim multiple_of 8` so that a head's accesses can be 16 bytes wide. The dispatch guard
/// refuses a launch that breaks it; the compiler takes it as true (vectorize proves alignment
/// from it).
struct ConstexprRule {
  std::string constexpr_name;
  std::int64_t multiple = 1;
  SourceLoc loc;  ///< the require_multiple_of(...) declaration
  bool operator==(const ConstexprRule&) const = default;
};

/// A range the author asserts for a constexpr: `NAME <= EXPR` or `NAME >= EXPR`, EXPR over
/// literals and integer constexprs, e.g. `hop <= 200` where a threadgroup buffer is sized for
/// that bound. The dispatch guard refuses a launch outside it.
struct ConstexprBound {
  std::string constexpr_name;
  GridRule::Relation relation = GridRule::Relation::AtMost;  ///< AtMost or AtLeast
  SizeExpr bound;
  SourceLoc loc;  ///< the require_at_most / require_at_least declaration
  bool operator==(const ConstexprBound&) const = default;
};

/// The kernel's declared dispatch contract, checked before every launch: the mode, rules on the
/// threads per group and on the group counts, the element count of every tensor, and the facts
/// and ranges asserted about constexprs. `occupancy` is a compile hint, not a rule: at least
/// that many groups of the literal group-size bound should fit on a multiprocessor at once
/// (CUDA's minimum blocks; the compiler budgets registers for it); 0 leaves it to the compiler.
/// The most threads any CUDA multiprocessor holds at once (occupancy × group size is within it).
inline constexpr std::int64_t kMaxResidentThreads = 2048;

struct DispatchContract {
  DispatchMode mode = DispatchMode::Elementwise;
  std::vector<SizeRule> group_size_rules;
  std::vector<GridRule> grid_rules;
  std::vector<TensorLayout> layouts;
  std::vector<ConstexprRule> constexpr_rules;
  std::vector<ConstexprBound> constexpr_bounds;
  std::uint32_t occupancy = 0;
  SourceLoc loc;  ///< the dispatch(...) declaration

  /// The layout declared for tensor parameter `param`, or nullptr.
  const TensorLayout* layout_of(std::string_view param) const;
  /// The smallest literal `exactly` or `at_most` group-size rule, else 1024: the most threads a
  /// group is compiled for.
  std::int64_t group_size_cap() const;
};

/// A tensor map (Hopper's TMA descriptor) the kernel is launched with: boxes of box_rows ×
/// box_cols elements of the row-major matrix of `height` rows of `width` elements at element
/// `base` of tensor parameter `param`, placed in rows of `swizzle` elements XOR-swizzled as
/// SharedAlloc::swizzle says (0: in order). The host encodes it before each launch.
/// A TMA descriptor of the matrix [height, width] at param[base]; an image map (box_width ≥ 1)
/// is of the NHWC tensor [images, height, image_width, width] instead, its box box_rows /
/// box_width pixel rows of box_width pixels.
struct TensorMap {
  int param = -1;
  SizeExpr base, height, width;
  std::uint32_t box_rows = 0;
  std::uint32_t box_cols = 0;
  std::uint32_t swizzle = 0;
  SizeExpr images, image_width;  ///< an image map's
  std::uint32_t box_width = 0;   ///< 0: a matrix map
  bool operator==(const TensorMap&) const = default;
};

struct Kernel {
  std::string name;
  DType dtype = DType::F32;  ///< the binding of the generic float type T
  std::vector<Param> params;
  std::vector<SharedAlloc> shared;
  std::vector<TensorMap> tensor_maps;  ///< made by expand_pipelines for copy.tensor
  DispatchContract dispatch;
  Block body;
  std::uint32_t num_values = 0;    ///< value ids are 0 .. num_values-1
  std::uint32_t shared_bytes = 0;  ///< total shared memory, set by the shared-memory layout pass
  SourceLoc loc;                   ///< where the kernel is defined

  int find_param(std::string_view param_name) const;
};

/// Calls `fn(op)` on every op in `block`, nested blocks included, in program order.
template <class Fn>
void walk(const Block& block, Fn&& fn) {
  for (const Op& op : block.ops) {
    fn(op);
    for (const Block& b : op.blocks) walk(b, fn);
  }
}

/// Number of ops in the kernel, nested ones included.
std::size_t count_ops(const Kernel& k);

}  // namespace iron::ir
