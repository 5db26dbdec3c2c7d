/// Per-thread register arrays: `Regs<f32, 8> row(0.0f);` holds 8 values owned by one thread,
/// read and written as `row[i]`. An index is a C++ integer or a symbolic value that is a
/// constant once loops are unrolled (a `range` with constant bounds, up to kMaxRegs trips): the
/// pass pipeline then turns the array into scalars, so it lives in registers, never in local
/// memory. An index that stays symbolic is rejected at its source line when the kernel is
/// compiled; the simulator runs any index and reports one outside the array.
#pragma once

#include <cstddef>
#include <string>

#include "iron/core/source_location.hpp"
#include "iron/dsl/expr.hpp"
#include "iron/dsl/memory.hpp"

namespace iron::dsl {

namespace detail {
ir::ValueId record_regs_decl(ir::ValueId init, DType type, std::size_t elements);
void record_regs_store(ir::ValueId array, ir::ValueId index, ir::ValueId value);
}  // namespace detail

/// One element of a register array: read it as an operand (or with get()), assign to it.
template <Element T>
class RegsElement : public detail::Operations<T> {
 public:
  RegsElement(ir::ValueId array, ir::ValueId index) : array_(array), index_(index) {}

  /// Reads the element.
  Expr<T> get(SourceLocation where = SourceLocation::current()) const {
    return Expr<T>::wrap(detail::Operand<T>(*this, where).id());
  }

  const RegsElement& operator=(detail::Operand<T> value) const {
    detail::at(value.where());
    detail::record_regs_store(array_, index_, value.id());
    return *this;
  }
  /// `a[i] = b[j]` copies the element's value (at the line of the DSL call before it).
  const RegsElement& operator=(const RegsElement& other) const {
    detail::record_regs_store(array_, index_,
                              detail::record_regs_load(other.array_, other.index_, dtype_of<T>));
    return *this;
  }
  RegsElement(const RegsElement&) = default;

#define IRON_COMPOUND_OP(op, kind)                                                    \
  const RegsElement& operator op(detail::Operand<T> x) const {                        \
    const Expr<T> v =                                                                 \
        detail::binary<T>(ir::OpKind::kind, detail::Operand<T>(*this, x.where()), x); \
    detail::record_regs_store(array_, index_, v.id());                                \
    return *this;                                                                     \
  }
  IRON_COMPOUND_OP(+=, Add)
  IRON_COMPOUND_OP(-=, Sub)
  IRON_COMPOUND_OP(*=, Mul)
  IRON_COMPOUND_OP(/=, Div)
#undef IRON_COMPOUND_OP

  ir::ValueId array() const { return array_; }
  ir::ValueId index() const { return index_; }

 private:
  ir::ValueId array_;
  ir::ValueId index_;
};

/// N values of type T owned by each thread, all starting at `init`.
template <Element T, std::size_t N>
class Regs {
  static_assert(N >= 1 && N <= static_cast<std::size_t>(ir::kMaxRegs),
                "Iron: a register array holds 1 to kMaxRegs (256) elements");

 public:
  static constexpr std::size_t size = N;

  explicit Regs(detail::Operand<T> init) {
    detail::at(init.where());
    array_ = detail::record_regs_decl(init.id(), dtype_of<T>, N);
  }

  /// The element at a C++ integer or a symbolic index that is a constant after unrolling; a
  /// constant outside the array is rejected with its line when the kernel is traced.
  RegsElement<T> operator[](detail::Index i) const { return {array_, i.id()}; }
  template <detail::NotAnIndex I>
  detail::an_index_must_be_an_integer_value operator[](const I& i) const = delete;

 private:
  ir::ValueId array_ = ir::kNoValue;
};

}  // namespace iron::dsl
