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
///
/// Every lane of the simdgroup must reach a fragment op, with the same offset and stride (the
/// simulator reports otherwise). A 16-bit A or B loaded from shared memory needs an offset and a
/// stride that are multiples of 8 elements.
#pragma once

#include <cstdint>
#include <string>

#include "iron/core/fragment.hpp"
#include "iron/dsl/expr.hpp"
#include "iron/dsl/memory.hpp"
#include "iron/dsl/tracer.hpp"

namespace iron::dsl {

using ir::FragmentRole;
using ir::MatrixLayout;
inline constexpr MatrixLayout row_major = MatrixLayout::RowMajor;
inline constexpr MatrixLayout col_major = MatrixLayout::ColMajor;

namespace detail {
ir::ValueId record_frag_decl(ir::ValueId init, DType type, const ir::FragmentShape& shape);
void record_frag_access(bool store, int param, int shared, ir::ValueId fragment, ir::ValueId offset,
                        ir::ValueId stride, MatrixLayout layout, DType type);
void record_frag_mma(ir::ValueId d, ir::ValueId a, ir::ValueId b);
ir::ValueId record_frag_get(ir::ValueId fragment, std::uint32_t slot, DType type);
void record_frag_set(ir::ValueId fragment, std::uint32_t slot, ir::ValueId value);
ir::ValueId record_frag_coord(ir::ValueId fragment, std::uint32_t slot, bool column);
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
  /// Replaces every element by fn(value, row, col): an epilogue, a mask, a scale.
  template <class Fn>
  void map(Fn&& fn, SourceLocation where = SourceLocation::current()) {
    for (std::uint32_t slot = 0; slot < elements; ++slot) {
      const Expr<T> value = fn(get(slot, where), row(slot, where), col(slot, where));
      detail::at(where);
      detail::record_frag_set(id_, slot, value.id());
    }
  }

  ir::ValueId id() const { return id_; }

 private:
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
