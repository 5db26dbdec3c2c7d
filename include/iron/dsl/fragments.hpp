/// Tensor-core fragments in the DSL (docs/tensor-cores.md): a matrix tile held by the 32 lanes
/// of a simdgroup, with a role in D += A·B and a shape checked at compile time.
///
///   FragA<T, 64, 16> a;             // M×K
///   FragB<T, 16, 32> b;             // K×N
///   FragAcc<64, 32> acc;            // M×N, f32, zero
///   a.load(tile_a, offset, 16);     // element (r, c) at tile_a[offset + r·16 + c]
///   b.load(w, offset, k, col_major);  // element (k, n) at w[offset + n·k + k]: a [N, K] weight
///   mma(acc, a, b);
///   acc.store(out_tile, offset, 32);
///   FragAcc<64, 8> m = acc.row_max();  // row r of m: the max of acc's row r, in every column
///   FragA<T, 64, 32> p = acc.to_a<T>();  // acc rounded to T: the A operand of the next mma
///
/// Every lane of the simdgroup must reach a fragment op, with the same offset and stride (the
/// simulator reports otherwise). A 16-bit A or B loaded from shared memory needs an offset and a
/// stride that are multiples of 8 elements.
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>

#include "iron/core/fragment.hpp"
#include "iron/dsl/expr.hpp"
#include "iron/dsl/memory.hpp"
#include "iron/dsl/tracer.hpp"

namespace iron::dsl {

using ir::FragmentRole;
using ir::MatrixLayout;
using ir::RowReduction;
inline constexpr MatrixLayout row_major = MatrixLayout::RowMajor;
inline constexpr MatrixLayout col_major = MatrixLayout::ColMajor;

namespace detail {
ir::ValueId record_frag_decl(ir::ValueId init, DType type, const ir::FragmentShape& shape);
void record_frag_access(bool store, int param, int shared, ir::ValueId fragment, ir::ValueId offset,
                        ir::ValueId stride, MatrixLayout layout, DType type,
                        std::int64_t window = 0);
void record_frag_mma(ir::ValueId d, ir::ValueId a, ir::ValueId b);
ir::ValueId record_frag_get(ir::ValueId fragment, std::uint32_t slot, DType type);
void record_frag_set(ir::ValueId fragment, std::uint32_t slot, ir::ValueId value);
ir::ValueId record_frag_coord(ir::ValueId fragment, std::uint32_t slot, bool column);
ir::ValueId record_frag_row_value(ir::ValueId fragment, std::uint32_t slot, ir::ValueId rows);
void record_frag_row_reduce(ir::ValueId rows, ir::ValueId fragment, ir::RowReduction reduction);
void record_frag_convert(ir::ValueId a, ir::ValueId fragment, DType type);
}  // namespace detail

/// A Rows×Cols fragment of role R with elements of T, one per simdgroup.
template <Element T, FragmentRole R, std::uint32_t Rows, std::uint32_t Cols>
class Fragment {
  static constexpr ir::FragmentShape kShape{R, Rows, Cols};
  static_assert(kShape.tiled(),
                "Iron: a fragment is whole m16n8k16 tiles: A 16x16, B 16x8 (k x n), acc 16x8");
  static_assert(kShape.elements_per_lane() <= ir::kMaxFragmentElements,
                "Iron: a fragment this large does not fit in a simdgroup's registers");

 public:
  static constexpr std::uint32_t rows = Rows;
  static constexpr std::uint32_t cols = Cols;
  /// Elements each lane holds: slots 0 … elements − 1.
  static constexpr std::uint32_t elements = kShape.elements_per_lane();

  /// Every element zero.
  explicit Fragment(SourceLocation where = SourceLocation::current())
      : Fragment(detail::Operand<T>(0.0f, where)) {}
  /// Every element `init`.
  explicit Fragment(detail::Operand<T> init) {
    detail::at(init.where());
    id_ = detail::record_frag_decl(init.id(), dtype_of<T>, kShape);
  }
  Fragment(const Fragment&) = delete;
  Fragment& operator=(const Fragment&) = delete;

  /// Reads element (r, c) from t[offset + r·stride + c] (row_major) or t[offset + c·stride + r].
  template <ir::ParamKind K>
  void load(const TensorParam<T, K>& t, detail::Index offset, detail::Index stride,
            MatrixLayout layout = row_major) {
    detail::record_frag_access(false, t.param(), -1, id_, offset.id(), stride.id(), layout,
                               dtype_of<T>);
  }
  void load(const Shared<T>& s, detail::Index offset, detail::Index stride,
            MatrixLayout layout = row_major) {
    detail::record_frag_access(false, -1, s.alloc(), id_, offset.id(), stride.id(), layout,
                               dtype_of<T>);
  }
  /// Writes element (r, c) to t[offset + r·stride + c] (row_major) or t[offset + c·stride + r].
  template <ir::ParamKind K>
  requires(ir::is_output(K)) void store(const TensorParam<T, K>& t, detail::Index offset,
                                        detail::Index stride,
                                        MatrixLayout layout = row_major) const {
    detail::record_frag_access(true, t.param(), -1, id_, offset.id(), stride.id(), layout,
                               dtype_of<T>);
  }
  void store(const Shared<T>& s, detail::Index offset, detail::Index stride,
             MatrixLayout layout = row_major) const {
    detail::record_frag_access(true, -1, s.alloc(), id_, offset.id(), stride.id(), layout,
                               dtype_of<T>);
  }
  /// Writes the elements of columns first … first + count − 1 only, element (r, c) to
  /// t[offset + r·stride + (c − first)] (row_major) or t[offset + (c − first)·stride + r]: a band
  /// of an accumulator, which a simdgroup stages through shared memory of its own (first and
  /// count multiples of 16, inside the fragment).
  template <ir::ParamKind K>
  requires(ir::is_output(K)) void store_columns(const TensorParam<T, K>& t, detail::Index offset,
                                                detail::Index stride, std::uint32_t first,
                                                std::uint32_t count,
                                                MatrixLayout layout = row_major) const {
    detail::record_frag_access(true, t.param(), -1, id_, offset.id(), stride.id(), layout,
                               dtype_of<T>, window(first, count));
  }
  void store_columns(const Shared<T>& s, detail::Index offset, detail::Index stride,
                     std::uint32_t first, std::uint32_t count,
                     MatrixLayout layout = row_major) const {
    detail::record_frag_access(true, -1, s.alloc(), id_, offset.id(), stride.id(), layout,
                               dtype_of<T>, window(first, count));
  }

  /// The calling lane's element in `slot`, and its logical row and column in the fragment
  /// (which lane holds which element is the target's; code that uses row() and col() is right
  /// on every target).
  Expr<T> get(std::uint32_t slot, SourceLocation where = SourceLocation::current()) const {
    detail::at(where);
    return Expr<T>::wrap(detail::record_frag_get(id_, checked(slot), dtype_of<T>));
  }
  void set(std::uint32_t slot, detail::Operand<T> value) {
    detail::at(value.where());
    detail::record_frag_set(id_, checked(slot), value.id());
  }
  Expr<u32> row(std::uint32_t slot, SourceLocation where = SourceLocation::current()) const {
    detail::at(where);
    return Expr<u32>::wrap(detail::record_frag_coord(id_, checked(slot), false));
  }
  Expr<u32> col(std::uint32_t slot, SourceLocation where = SourceLocation::current()) const {
    detail::at(where);
    return Expr<u32>::wrap(detail::record_frag_coord(id_, checked(slot), true));
  }
  /// Replaces every element by fn(value, row, col): an epilogue, a mask, a scale; or by
  /// fn(value, row, col, slot), whose slot row_value() takes.
  template <class Fn>
  void map(Fn&& fn, SourceLocation where = SourceLocation::current()) {
    for (std::uint32_t slot = 0; slot < elements; ++slot) {
      const Expr<T> value = [&]() -> Expr<T> {
        if constexpr (std::is_invocable_v<Fn&, Expr<T>, Expr<u32>, Expr<u32>, std::uint32_t>) {
          return fn(get(slot, where), row(slot, where), col(slot, where), slot);
        } else {
          return fn(get(slot, where), row(slot, where), col(slot, where));
        }
      }();
      detail::at(where);
      detail::record_frag_set(id_, slot, value.id());
    }
  }

  /// Accumulators: an M×8 row vector whose row r holds, in every column, the max (or sum) of
  /// this fragment's row r. The sum's order is the target's (docs/tensor-cores.md).
  Fragment<f32, FragmentRole::Acc, Rows, 8> row_max(
      SourceLocation where = SourceLocation::current()) const requires(R == FragmentRole::Acc) {
    return row_reduce(ir::RowReduction::Max, where);
  }
  Fragment<f32, FragmentRole::Acc, Rows, 8> row_sum(
      SourceLocation where = SourceLocation::current()) const requires(R == FragmentRole::Acc) {
    return row_reduce(ir::RowReduction::Sum, where);
  }
  /// Accumulators: the value of row vector `v` (from row_max or row_sum) at the row of this
  /// fragment's `slot`: `map` code scales or shifts each element by its row's value with it.
  Expr<f32> row_value(const Fragment<f32, FragmentRole::Acc, Rows, 8>& v, std::uint32_t slot,
                      SourceLocation where = SourceLocation::current()) const
      requires(R == FragmentRole::Acc) {
    detail::at(where);
    return Expr<f32>::wrap(detail::record_frag_row_value(id_, checked(slot), v.id()));
  }
  /// Accumulators of whole 16×16 tiles: every element rounded to nearest U (f16, bf16, or f32:
  /// a copy), as the A operand of a product.
  template <Element U>
  Fragment<U, FragmentRole::A, Rows, Cols> to_a(SourceLocation where = SourceLocation::current())
      const requires(R == FragmentRole::Acc && Cols % ir::tile_cols(FragmentRole::A) == 0) {
    return {where, [&](ir::ValueId a) { detail::record_frag_convert(a, id_, dtype_of<U>); }};
  }

  /// A fragments: this fragment becomes accumulator `acc` rounded to nearest T, as acc.to_a<T>()
  /// would make it (a fragment kept across the steps of a loop).
  template <FragmentRole Role = R>
  void round_from(const Fragment<f32, FragmentRole::Acc, Rows, Cols>& acc,
                  SourceLocation where = SourceLocation::current()) requires(Role ==
                                                                             FragmentRole::A) {
    detail::at(where);
    detail::record_frag_convert(id_, acc.id(), dtype_of<T>);
  }

  ir::ValueId id() const { return id_; }

 private:
  template <Element, FragmentRole, std::uint32_t, std::uint32_t>
  friend class Fragment;

  /// Every element zero, then written by `write(id)`: the fragments row_max() and to_a() make.
  template <class Write>
  Fragment(SourceLocation where, Write&& write) : Fragment(where) {
    detail::at(where);
    write(id_);
  }

  Fragment<f32, FragmentRole::Acc, Rows, 8> row_reduce(ir::RowReduction reduction,
                                                       SourceLocation where) const {
    return {where, [&](ir::ValueId rows) { detail::record_frag_row_reduce(rows, id_, reduction); }};
  }

  static std::int64_t window(std::uint32_t first, std::uint32_t count) {
    if (!ir::window_fits(first, count, Cols)) {
      detail::Tracer::current().fail(
          "columns " + std::to_string(first) + " … " + std::to_string(first + count) +
          " of a fragment of " + std::to_string(Cols) + ": a window is whole multiples of " +
          std::to_string(ir::kWindowCols) + " columns inside the fragment");
    }
    return ir::fragment_window(first, count);
  }

  static std::uint32_t checked(std::uint32_t slot) {
    if (slot >= elements) {
      detail::Tracer::current().fail("slot " + std::to_string(slot) + " of a fragment whose " +
                                     "lanes hold " + std::to_string(elements) + " elements");
    }
    return slot;
  }

  ir::ValueId id_ = ir::kNoValue;
};

/// The A operand of D += A·B: M×K.
template <Element T, std::uint32_t M, std::uint32_t K>
using FragA = Fragment<T, FragmentRole::A, M, K>;
/// The B operand: K×N.
template <Element T, std::uint32_t K, std::uint32_t N>
using FragB = Fragment<T, FragmentRole::B, K, N>;
/// The accumulator: M×N in f32.
template <std::uint32_t M, std::uint32_t N>
using FragAcc = Fragment<f32, FragmentRole::Acc, M, N>;

/// d += a·b on the tensor cores (or the target's strategy; docs/tensor-cores.md).
template <Element T, std::uint32_t M, std::uint32_t N, std::uint32_t K>
void mma(FragAcc<M, N>& d, const FragA<T, M, K>& a, const FragB<T, K, N>& b,
         SourceLocation where = SourceLocation::current()) {
  detail::at(where);
  detail::record_frag_mma(d.id(), a.id(), b.id());
}

}  // namespace iron::dsl
