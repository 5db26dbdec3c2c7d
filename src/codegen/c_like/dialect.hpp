/// The per-language half of the C-like emitters: a language's spellings behind one interface,
/// C++'s by default, so a dialect (CUDA, MSL) writes only where its language differs.
#pragma once

#include <cstdint>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "iron/core/ir.hpp"

namespace iron::codegen::c_like {

/// What the kernel body needs from outside it, collected while it is written: the file around
/// the body (prelude, includes, signature) is assembled from it.
struct Needs {
  std::set<std::string> helpers;            ///< prelude helpers, by the dialect's own keys
  std::set<std::pair<DType, int>> vectors;  ///< vector types: element type and lanes
  std::set<std::string> inputs;             ///< built-in kernel inputs read (MSL)
};

/// Where a memory access goes.
enum class Space : std::uint8_t { Input, Output, Shared };

/// One load, store or atomic: `base[index]`, of `lanes` consecutive elements of `type`.
struct Access {
  Space space = Space::Input;
  std::string base;
  std::string index;
  DType type = DType::F32;
  int lanes = 1;
};

/// One frag.load or frag.store: `fragment` (of `shape`, elements of `type`) and the matrix whose
/// element (r, c) is base[offset + r·stride + c] (row-major) or base[offset + c·stride + r].
struct FragmentAccess {
  std::string fragment;
  ir::FragmentShape shape;
  DType type = DType::F32;
  Space space = Space::Input;
  std::string base;
  std::string offset;
  std::string stride;
  ir::MatrixLayout layout = ir::MatrixLayout::RowMajor;
  bool store = false;
  /// A swizzled shared matrix (ir::SharedAlloc::swizzle): element e of base lives at
  /// e ^ (((e >> row_shift) & 7) << chunk_shift). 0 and 0 for elements in order.
  int swizzle_row_shift = 0;
  int swizzle_chunk_shift = 0;
  /// A store of columns window_first … window_first + window_cols − 1 only (0 columns: all),
  /// column c at c − window_first (ir::fragment_window).
  std::uint32_t window_first = 0;
  std::uint32_t window_cols = 0;
};

/// One frag.mma: `d` += `a` · `b`, of shapes M×N, M×K and K×N; A and B hold `input`.
struct FragmentProduct {
  std::string d, a, b;
  std::uint32_t m = 0, n = 0, k = 0;
  DType input = DType::F16;
};

/// One wg.mma that the target runs as one instruction (lower_warpgroup_products lowered the
/// others): `d`, each simdgroup's 16×n part, += A · B with the operands' first elements at `a`
/// and `b` (expressions of pointers into shared memory), k deep, elements of `input`.
struct WarpgroupProduct {
  std::string d, a, b;
  std::uint32_t n = 0, k = 0;
  DType input = DType::BF16;
  bool a_in_registers = false;  ///< a names the A fragment (else A's first element in shared)
  bool b_rows = false;          ///< B row-major ([k, n], MN-major), else column-major ([n, k])
  std::string b_panel;          ///< b_rows: the elements between B's panels of one row
};

/// The spelling of an op kind in a dialect's table of the few kinds it covers.
struct Spelling {
  ir::OpKind kind;
  std::string_view text;
};

/// The text `table` gives `k`; an internal error when the table lacks it.
std::string_view spelling_of(ir::OpKind k, std::span<const Spelling> table);

/// The op table's C math function of `k` ("exp", "fabs"); an internal error when it has none.
std::string_view c_math_function(ir::OpKind k);

/// A thread-geometry axis 0..2 as its one-letter name: "x", "y" or "z".
std::string axis_name(int axis);

/// A C-like language's spellings. The defaults are C++'s (or the op table's C math functions);
/// a dialect overrides what its language spells differently and defines the rest, which C++
/// has no spelling for.
class Dialect {
 public:
  virtual ~Dialect() = default;

  // Names.

  /// The scalar type's name: C++'s ("float", "unsigned int"), half_type() for f16 and bf16.
  virtual std::string type(DType t) const;
  /// The name of f16 or bf16 (`t`), which C++ lacks ("__half", "bfloat").
  virtual std::string half_type(DType t) const = 0;
  /// The f32 function of a unary or binary math op, fma, rem, min or max: by default the op
  /// table's C function with C's `f` suffix ("expf", "fabsf"). A name starting with iron_ is a
  /// prelude helper of the dialect. An approximate op (exp2.approx) has no C function: each
  /// dialect names the fast instruction or function that meets its bound.
  virtual std::string float_function(ir::OpKind k) const;
  /// The language's own names a parameter must not take, space-separated: its built-ins, type
  /// names and the functions the emitted code calls, besides the C++ keywords and the float
  /// functions, which are reserved already.
  virtual std::string_view reserved_words() const = 0;

  // Values.

  /// An f32 expression with exactly these bits (used for inf and NaN).
  virtual std::string float_bits(std::uint32_t bits) const = 0;
  /// `expr` of type `from` converted to `to` (they differ) with Iron's cast semantics: to bool,
  /// a comparison with zero (in f32 for floats); to anything else, convert_number().
  std::string convert(const std::string& expr, DType from, DType to, Needs& needs) const;
  /// `expr` of type `from` converted to `to`, not bool (they differ), with Iron's semantics:
  /// floats to integers truncate, saturate and take NaN to 0; narrow integers wrap.
  virtual std::string convert_number(const std::string& expr, DType from, DType to,
                                     Needs& needs) const = 0;
  /// `expr`, + - * / or negation on values of the float type `t`, as a `t` expression; by
  /// default `expr` itself (the language defines the operators on every float type).
  virtual std::string float_arithmetic(const std::string& expr, DType t) const;
  /// `expr` reinterpreted as `to`, a type of the same size (they differ).
  virtual std::string bitcast(const std::string& expr, DType from, DType to) const = 0;
  /// A u32 expression for the built-in.
  virtual std::string builtin(ir::Builtin b, int axis, Needs& needs) const = 0;

  // Collectives, memory and synchronisation.

  /// simd.sum/max/min/prefix_sum/prefix_exclusive_sum of `v`, of type f32, i32 or u32.
  virtual std::string simd_reduce(ir::OpKind k, DType t, const std::string& v,
                                  Needs& needs) const = 0;
  /// simd.shuffle/shuffle_xor/shuffle_up/shuffle_down/broadcast of `v` (f32, i32 or u32) with
  /// a constant operand in 0..31.
  virtual std::string simd_move(ir::OpKind k, DType t, const std::string& v, int operand,
                                Needs& needs) const = 0;
  /// `v` (f32, i32 or u32) as lane `source` (a u32 expression) holds it, or the lane's own
  /// value when `source` is not in 0..31. Every lane of the simdgroup must call it. By default
  /// the prelude helper `iron_simd_read(v, source)`, which the dialect defines.
  virtual std::string simd_read(DType t, const std::string& v, const std::string& source,
                                Needs& needs) const;
  /// The atomic op on `a` with operand `v`, an expression giving the previous value.
  virtual std::string atomic(ir::OpKind k, const Access& a, const std::string& v,
                             Needs& needs) const = 0;
  /// The statement that makes the threadgroup wait for all its threads.
  virtual std::string barrier() const = 0;
  /// The statement that makes the group's first `threads` threads wait for each other (the
  /// others go on); empty where the target has no such barrier (Metal).
  virtual std::string barrier_among(std::uint32_t threads) const;
  /// The statement that makes the lanes of a simdgroup wait for each other, with their
  /// threadgroup-memory accesses before it visible to each other after it.
  virtual std::string simdgroup_barrier() const = 0;
  /// The line before a loop that its compiler must not unroll (a rolled `for`); empty where the
  /// target has none (Metal: the choice stays its compiler's).
  virtual std::string rolled_loop() const;
  /// The declaration of the kernel's threadgroup allocation `index` (placed by
  /// layout_shared_memory); `vector_access` when vector loads or stores use it, so it must be
  /// 16-byte aligned. May be several lines.
  virtual std::vector<std::string> shared_declaration(const ir::Kernel& kernel, std::size_t index,
                                                      bool vector_access) const = 0;

  // Asynchronous copies (docs/tensor-cores.md).

  /// The statements of a copy.async of `lanes` elements (4, 8 or 16 bytes) from src to dst
  /// (shared), or of zeros when the bool expression `valid` is false.
  virtual std::vector<std::string> async_copy(const Access& dst, const Access& src,
                                              const std::string& valid, Needs& needs) const = 0;
  /// async.commit, and async.wait for all but `pending` groups.
  virtual std::string async_commit(Needs& needs) const = 0;
  virtual std::string async_wait(int pending, Needs& needs) const = 0;

  // Tensor-core fragments (docs/tensor-cores.md): each dialect lowers them with its strategy.

  /// The statements of warpgroup products: a wg.mma, wg.commit, wg.wait of accumulator `d` (16×n)
  /// for all but `pending` groups, and fence.proxy.async. Only a target that runs wg.mma as one
  /// instruction sees them (lower_warpgroup_products removes them elsewhere): an internal error
  /// by default.
  virtual std::string warpgroup_product(const WarpgroupProduct& p, Needs& needs) const;
  virtual std::string warpgroup_commit(Needs& needs) const;
  virtual std::string warpgroup_wait(const std::string& d, std::uint32_t n, int pending,
                                     Needs& needs) const;
  virtual std::string proxy_fence(Needs& needs) const;
  /// wg.registers: the warpgroup raises (`raise`) or lowers its threads' registers to `count`.
  virtual std::string register_budget(std::int64_t count, bool raise, Needs& needs) const;
  /// wg.turn among `warpgroups`: the step `step` (begin, wait or pass) of their turns.
  virtual std::string turn(ir::TurnStep step, std::uint32_t warpgroups, Needs& needs) const;
  /// Hopper's tensor-memory-accelerator copies and mbarriers (CUDA's sm_90a alone; the others
  /// never see them): the k-th tensor map parameter and its name; copy.tensor of the box at
  /// `coordinates` (row0, col0 of a matrix map; row0, col0, image, x0 of an image map) of map
  /// `map` to `dst` (a pointer) completing mbarrier `bar` (a pointer to its 8 bytes); mbar.init
  /// (count arrivals), mbar.expect (count bytes), mbar.wait (parity), mbar.inval, mbar.arrive (once
  /// a simdgroup).
  virtual std::string tensor_map_param(std::size_t k) const;
  virtual std::string tensor_map_name(std::size_t k) const;
  virtual std::string tensor_copy(const std::string& dst, std::size_t map,
                                  const std::vector<std::string>& coordinates,
                                  const std::string& bar, Needs& needs) const;
  virtual std::string mbarrier(ir::OpKind kind, const std::string& bar, std::int64_t count,
                               const std::string& parity, Needs& needs) const;

  /// The statements declaring fragment `name` of `shape` and element type `t`, every element
  /// set to `init`.
  virtual std::vector<std::string> fragment_declaration(const std::string& name,
                                                        const ir::FragmentShape& shape, DType t,
                                                        const std::string& init,
                                                        Needs& needs) const = 0;
  /// The statement of a frag.load or frag.store.
  virtual std::string fragment_access(const FragmentAccess& f, Needs& needs) const = 0;
  /// The statement of a frag.mma.
  virtual std::string fragment_product(const FragmentProduct& p, Needs& needs) const = 0;
  /// The calling lane's element in `slot` of fragment `name` (of `shape`, elements of `t`), as an
  /// expression that can also be assigned.
  virtual std::string fragment_element(const std::string& name, const ir::FragmentShape& shape,
                                       DType t, std::uint32_t slot) const = 0;
  /// The u32 row (or, when `column`, column) of that element.
  virtual std::string fragment_coord(const std::string& name, const ir::FragmentShape& shape,
                                     std::uint32_t slot, bool column, Needs& needs) const = 0;
  /// The value of row vector `rows` (an M×8 accumulator) at the row of the calling lane's
  /// element in `slot` of an accumulator of `shape`.
  virtual std::string fragment_row_value(const std::string& rows, const ir::FragmentShape& shape,
                                         std::uint32_t slot) const = 0;
  /// The statement of a frag.rowreduce of accumulator `source` into row vector `rows`.
  virtual std::string fragment_row_reduce(const std::string& rows, const std::string& source,
                                          ir::RowReduction reduction, Needs& needs) const = 0;
  /// The statement of a frag.convert of accumulator `source` into A fragment `a`.
  virtual std::string fragment_convert(const std::string& a, const std::string& source,
                                       Needs& needs) const = 0;

  // Vectors.

  /// The type of a vector value of `lanes` elements.
  virtual std::string vector_type(DType t, int lanes, Needs& needs) const = 0;
  /// A vector load of `a` (a.lanes > 1).
  virtual std::string vector_load(const Access& a, Needs& needs) const = 0;
  /// The statements of a vector store of `values` (one per lane) into `a`.
  virtual std::vector<std::string> vector_store(const Access& a,
                                                const std::vector<std::string>& values,
                                                Needs& needs) const = 0;
  /// Lane `lane` of the vector value `v` of `lanes` elements.
  virtual std::string extract(const std::string& v, int lanes, int lane) const = 0;

  // The kernel's signature and the comment that documents it.

  /// The type of a tensor parameter of elements `t`, written to when `writes`: by default a
  /// pointer ("const float*", "float*").
  virtual std::string pointer_param(DType t, bool writes) const;
  /// The type of a constexpr parameter passed as `carrier`: by default the type itself.
  virtual std::string value_param(DType carrier) const;
  /// What binds parameter `index` to its argument, written after its name ("[[buffer(2)]]");
  /// by default nothing: the position does.
  virtual std::string param_binding(std::size_t index) const;
  /// The header comment's first line: how to launch the kernel (groups, threads, shared
  /// memory).
  virtual std::string launch_comment(const ir::Kernel& kernel) const = 0;
  /// The header comment's word for the parameters: by default "Arguments".
  virtual std::string_view parameters_heading() const;
};

}  // namespace iron::codegen::c_like
