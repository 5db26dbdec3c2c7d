/// Named views over an op's positional operands: `ForOp(op).end()` instead of `op.args[1]`, so
/// the meaning of each operand is written once, here, next to the op table's arities. A view
/// over a non-const op gives assignable operands (`ForOp(op).end() = v`).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>

#include "iron/core/error.hpp"
#include "iron/core/ir.hpp"

namespace iron::ir {

/// The common part of every view: the op, checked to be of one of the view's kinds.
template <class O>
class OpView {
 public:
  using Id = std::conditional_t<std::is_const_v<O>, const ValueId, ValueId>;
  using BlockRef = std::conditional_t<std::is_const_v<O>, const Block, Block>;

  O& op() const { return op_; }
  ValueId result() const { return op_.result; }

 protected:
  OpView(O& op, bool kind_matches) : op_(op) {
    IRON_INTERNAL_ASSERT(kind_matches, "an op view over an op of another kind");
  }
  Id& arg(std::size_t i) const { return op_.args[i]; }

 private:
  O& op_;
};

/// for: runs `body` with the induction value `result` = start, start + step, … while < end.
template <class O>
class ForOp : public OpView<O> {
 public:
  explicit ForOp(O& op) : OpView<O>(op, op.kind == OpKind::For) {}
  typename OpView<O>::Id& start() const { return this->arg(0); }
  typename OpView<O>::Id& end() const { return this->arg(1); }
  typename OpView<O>::Id& step() const { return this->arg(2); }
  ValueId induction() const { return this->result(); }
  typename OpView<O>::BlockRef& body() const { return this->op().blocks[0]; }
};

/// if: runs `then_block` when `condition` holds, else `else_block`.
template <class O>
class IfOp : public OpView<O> {
 public:
  explicit IfOp(O& op) : OpView<O>(op, op.kind == OpKind::If) {}
  typename OpView<O>::Id& condition() const { return this->arg(0); }
  typename OpView<O>::BlockRef& then_block() const { return this->op().blocks[0]; }
  typename OpView<O>::BlockRef& else_block() const { return this->op().blocks[1]; }
};

/// select: `if_true` where `condition` holds, else `if_false`.
template <class O>
class SelectOp : public OpView<O> {
 public:
  explicit SelectOp(O& op) : OpView<O>(op, op.kind == OpKind::Select) {}
  typename OpView<O>::Id& condition() const { return this->arg(0); }
  typename OpView<O>::Id& if_true() const { return this->arg(1); }
  typename OpView<O>::Id& if_false() const { return this->arg(2); }
};

/// A load or store of a tensor or of threadgroup memory, or an atomic: `index` into the target;
/// a store's or atomic's values follow it (one per lane for a vector store).
template <class O>
class AccessOp : public OpView<O> {
 public:
  explicit AccessOp(O& op) : OpView<O>(op, is_access(op.kind)) {}
  typename OpView<O>::Id& index() const { return this->arg(0); }
  /// The stored or combined value (of lane `lane` for a vector store).
  typename OpView<O>::Id& value(std::size_t lane = 0) const { return this->arg(1 + lane); }
  /// Every stored value, one per lane (empty for a load).
  std::span<typename OpView<O>::Id> values() const { return std::span(this->op().args).subspan(1); }
  bool is_store() const { return op_info(this->op().kind).has(kWritesMemory); }
  bool is_shared() const { return this->op().shared >= 0; }

  static constexpr bool is_access(OpKind k) {
    const TypeRule t = op_info(k).types;
    return t == TypeRule::TensorAccess || t == TypeRule::SharedAccess ||
           t == TypeRule::AtomicNumber || t == TypeRule::AtomicInteger;
  }
};

/// var, var.load, var.store: a variable (`var`'s result) with an initial or stored value.
template <class O>
class VarOp : public OpView<O> {
 public:
  explicit VarOp(O& op)
      : OpView<O>(op, op.kind == OpKind::VarDecl || op.kind == OpKind::VarLoad ||
                          op.kind == OpKind::VarStore) {}
  /// var: the initial value.
  typename OpView<O>::Id& init() const { return this->arg(0); }
  /// var.load, var.store: the variable.
  typename OpView<O>::Id& variable() const { return this->arg(0); }
  /// var.store: the value stored.
  typename OpView<O>::Id& value() const { return this->arg(1); }
};

/// regs, regs.load, regs.store: a per-thread register array and the accesses to its elements.
template <class O>
class RegsOp : public OpView<O> {
 public:
  explicit RegsOp(O& op)
      : OpView<O>(op, op_info(op.kind).types == TypeRule::RegisterArray ||
                          op_info(op.kind).types == TypeRule::RegisterAccess) {}
  /// regs: the value every element starts with.
  typename OpView<O>::Id& init() const { return this->arg(0); }
  /// regs: how many elements the array holds.
  std::int64_t elements() const { return this->op().ivalue; }
  /// regs.load, regs.store: the array and the element's index.
  typename OpView<O>::Id& array() const { return this->arg(0); }
  typename OpView<O>::Id& index() const { return this->arg(1); }
  /// regs.store: the value stored.
  typename OpView<O>::Id& value() const { return this->arg(2); }
};

/// frag.load, frag.store: a fragment and the memory it is read from or written to, element
/// (r, c) at `offset` + r·`stride` + c (row-major) or `offset` + c·`stride` + r.
template <class O>
class FragAccessOp : public OpView<O> {
 public:
  explicit FragAccessOp(O& op)
      : OpView<O>(op, op.kind == OpKind::FragLoad || op.kind == OpKind::FragStore) {}
  typename OpView<O>::Id& offset() const { return this->arg(0); }
  typename OpView<O>::Id& fragment() const { return this->arg(1); }
  typename OpView<O>::Id& stride() const { return this->arg(2); }
  MatrixLayout layout() const { return this->op().layout; }
  bool is_store() const { return this->op().kind == OpKind::FragStore; }
  bool is_shared() const { return this->op().shared >= 0; }
  /// frag.store of a column window (fragment_window): only columns window_first() …
  /// window_first() + window_cols() − 1 are written, column c at c − window_first().
  bool windowed() const { return window_cols() != 0; }
  std::uint32_t window_first() const {
    return static_cast<std::uint32_t>(this->op().ivalue >> kWindowShift);
  }
  std::uint32_t window_cols() const {
    return static_cast<std::uint32_t>(this->op().ivalue & kWindowMask);
  }
};

/// frag.mma: `d` += `a` · `b`.
template <class O>
class FragMmaOp : public OpView<O> {
 public:
  explicit FragMmaOp(O& op) : OpView<O>(op, op.kind == OpKind::FragMma) {}
  typename OpView<O>::Id& d() const { return this->arg(0); }
  typename OpView<O>::Id& a() const { return this->arg(1); }
  typename OpView<O>::Id& b() const { return this->arg(2); }
};

/// wg.mma: the warpgroup's products into each simdgroup's `d` (ir.hpp), A from shared memory
/// or, in the register form, from each simdgroup's A fragment.
template <class O>
class WgMmaOp : public OpView<O> {
 public:
  explicit WgMmaOp(O& op) : OpView<O>(op, op.kind == OpKind::WgMma) {}
  /// The register form: A is the fragment a() (no A allocation).
  bool a_in_registers() const { return this->op().shared < 0; }
  typename OpView<O>::Id& d() const { return this->arg(0); }
  /// The register form's A fragment.
  typename OpView<O>::Id& a() const { return this->arg(1); }
  typename OpView<O>::Id& a_offset() const { return this->arg(1); }
  typename OpView<O>::Id& a_stride() const { return this->arg(2); }
  typename OpView<O>::Id& b_offset() const { return this->arg(a_in_registers() ? 2 : 3); }
  typename OpView<O>::Id& b_stride() const { return this->arg(a_in_registers() ? 3 : 4); }
  /// A row-major B's panel stride: the elements between its panels of b_stride() columns.
  typename OpView<O>::Id& b_panel() const { return this->arg(a_in_registers() ? 4 : 5); }
  bool b_in_panels() const { return b_layout() == MatrixLayout::RowMajor; }
  /// The depth of the product: A's columns and B's rows.
  std::uint32_t k() const { return static_cast<std::uint32_t>(this->op().ivalue); }
  MatrixLayout b_layout() const { return this->op().layout; }
};

/// frag.get, frag.set, frag.coord, frag.rowvalue: slot `slot()` of the calling lane in
/// `fragment()`.
template <class O>
class FragSlotOp : public OpView<O> {
 public:
  explicit FragSlotOp(O& op) : OpView<O>(op, op_info(op.kind).types == TypeRule::FragmentElement) {}
  typename OpView<O>::Id& fragment() const { return this->arg(0); }
  /// frag.set: the value stored.
  typename OpView<O>::Id& value() const { return this->arg(1); }
  /// frag.rowvalue: the M×8 row vector read at the slot's row.
  typename OpView<O>::Id& row_vector() const { return this->arg(1); }
  std::uint32_t slot() const { return static_cast<std::uint32_t>(this->op().ivalue); }
  /// frag.coord: whether it gives the column (else the row).
  bool column() const { return this->op().axis == 1; }
};

/// frag.rowreduce, frag.convert: `destination()` written from `source()` by the simdgroup.
template <class O>
class FragTransformOp : public OpView<O> {
 public:
  explicit FragTransformOp(O& op)
      : OpView<O>(op, op_info(op.kind).types == TypeRule::FragmentTransform) {}
  typename OpView<O>::Id& destination() const { return this->arg(0); }
  typename OpView<O>::Id& source() const { return this->arg(1); }
  /// frag.rowreduce: what it computes over each row.
  RowReduction reduction() const { return static_cast<RowReduction>(this->op().ivalue); }
};

/// copy.async: `lanes` elements (16 bytes) from the tensor at `source()` to shared memory at
/// `destination()`, or zeros when `valid()` is false.
template <class O>
class CopyAsyncOp : public OpView<O> {
 public:
  explicit CopyAsyncOp(O& op) : OpView<O>(op, op.kind == OpKind::CopyAsync) {}
  typename OpView<O>::Id& destination() const { return this->arg(0); }
  typename OpView<O>::Id& source() const { return this->arg(1); }
  typename OpView<O>::Id& valid() const { return this->arg(2); }
};

/// A simd shuffle or broadcast: `value` moved across lanes by `lane` (a lane, mask or delta).
template <class O>
class SimdMoveOp : public OpView<O> {
 public:
  explicit SimdMoveOp(O& op) : OpView<O>(op, op_info(op.kind).types == TypeRule::CollectiveMove) {}
  typename OpView<O>::Id& value() const { return this->arg(0); }
  typename OpView<O>::Id& lane() const { return this->arg(1); }
};

/// An op of one operand computed element by element: neg, not, the math functions, cast and
/// bitcast.
template <class O>
class UnaryOp : public OpView<O> {
 public:
  explicit UnaryOp(O& op)
      : OpView<O>(op, op_info(op.kind).op_class == OpClass::Unary || op.kind == OpKind::Cast ||
                          op.kind == OpKind::Bitcast) {}
  typename OpView<O>::Id& operand() const { return this->arg(0); }
};

/// fma: `lhs * rhs + addend`.
template <class O>
class FmaOp : public OpView<O> {
 public:
  explicit FmaOp(O& op) : OpView<O>(op, op.kind == OpKind::Fma) {}
  typename OpView<O>::Id& lhs() const { return this->arg(0); }
  typename OpView<O>::Id& rhs() const { return this->arg(1); }
  typename OpView<O>::Id& addend() const { return this->arg(2); }
};

/// An op of two operands: arithmetic, bitwise, shifts and comparisons (`lhs OP rhs`).
template <class O>
class BinaryOp : public OpView<O> {
 public:
  explicit BinaryOp(O& op)
      : OpView<O>(op, op_info(op.kind).op_class == OpClass::Binary ||
                          op_info(op.kind).op_class == OpClass::Compare) {}
  typename OpView<O>::Id& lhs() const { return this->arg(0); }
  typename OpView<O>::Id& rhs() const { return this->arg(1); }
};

/// A simdgroup or threadgroup reduction or scan (simd.sum … simd.prefix_exclusive_sum,
/// reduce.*): `value` combined across the threads.
template <class O>
class CollectiveOp : public OpView<O> {
 public:
  explicit CollectiveOp(O& op)
      : OpView<O>(op, op_info(op.kind).types == TypeRule::CollectiveNumber) {}
  typename OpView<O>::Id& value() const { return this->arg(0); }
};

/// const: a literal of the op's type, held as a double (floats) or an integer (the rest).
template <class O>
class ConstOp : public OpView<O> {
 public:
  explicit ConstOp(O& op) : OpView<O>(op, op.kind == OpKind::Const) {}
  /// The value as an integer (a float's integer part).
  std::int64_t as_int() const {
    return is_float(this->op().type) ? static_cast<std::int64_t>(this->op().fvalue)
                                     : this->op().ivalue;
  }
};

/// extract: lane `lane()` of the vector `vector()`.
template <class O>
class ExtractOp : public OpView<O> {
 public:
  explicit ExtractOp(O& op) : OpView<O>(op, op.kind == OpKind::Extract) {}
  typename OpView<O>::Id& vector() const { return this->arg(0); }
  int lane() const { return static_cast<int>(this->op().ivalue); }
};

}  // namespace iron::ir
