/// Kernel parameters and memory: input tensors (Tensor<T>), output tensors (Out<T>, InOut<T>),
/// constexpr scalars (Constexpr<T>), threadgroup memory by handle (shared<T>(n)), and the loads,
/// stores and atomics on them.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "iron/core/source_location.hpp"
#include "iron/dsl/expr.hpp"

namespace iron::dsl {

namespace detail {
ir::ValueId record_load(int param, int shared, ir::ValueId index, DType type);
void record_store(int param, int shared, ir::ValueId index, ir::ValueId value, DType type);
std::vector<ir::ValueId> record_lanes_load(int param, int shared, ir::ValueId index, DType type,
                                           std::uint8_t lanes);
void record_lanes_store(int param, int shared, ir::ValueId index,
                        const std::vector<ir::ValueId>& values, DType type);
ir::ValueId record_atomic(ir::OpKind kind, int param, int shared, ir::ValueId index,
                          ir::ValueId value, DType type);
ir::ValueId record_constexpr_ref(int param, DType type);

/// An element of a tensor or of a threadgroup allocation, named by `param` or `shared`.
template <Element T, bool Writable>
struct ElementRef {
  int param = -1;
  int shared = -1;
  ir::ValueId index = ir::kNoValue;
};

/// An index: an integer symbolic value or an integer literal (a u32). Converted implicitly, so
/// the literal's constant or the Var's load records the line where the index is written.
class Index {
 public:
  template <Symbolic X>
  requires IntegerElement<element_of<X>> Index(const X& i,  // NOLINT(google-explicit-constructor)
                                               SourceLocation where = SourceLocation::current()) {
    at(where);
    id_ = to_expr<element_of<X>>(i).id();
  }
  template <class L>
  requires(std::is_integral_v<L> && !std::is_same_v<L, bool>)
      Index(L i,  // NOLINT(google-explicit-constructor)
            SourceLocation where = SourceLocation::current()) {
    at(where);
    id_ = literal<u32>(i);
  }
  ir::ValueId id() const { return id_; }

 private:
  ir::ValueId id_ = ir::kNoValue;
};

/// Anything else used as an index, rejected at the user's line with this tag.
struct an_index_must_be_an_integer_value {};
template <class I>
concept NotAnIndex = !std::is_convertible_v<const I&, Index>;
}  // namespace detail

/// A tensor parameter: Input tensors are read (Tensor<T>); Output tensors are written and may
/// be read (Out<T>, InOut<T>). Indexing gives an element to load() or, for outputs, to store().
template <Element T, ir::ParamKind Kind>
class TensorParam {
 public:
  TensorParam(int param) : param_(param) {}  // NOLINT(google-explicit-constructor)
  static constexpr ir::ParamKind kind = Kind;
  using element = T;
  int param() const { return param_; }
  detail::ElementRef<T, ir::is_output(Kind)> operator[](detail::Index i) const {
    return {param_, -1, i.id()};
  }
  template <detail::NotAnIndex I>
  detail::an_index_must_be_an_integer_value operator[](const I& i) const = delete;

 private:
  int param_;
};

/// A tensor the kernel reads.
template <Element T>
using Tensor = TensorParam<T, ir::ParamKind::Input>;

/// A tensor the kernel writes (and may read back what it wrote). Its contents at entry are
/// undefined: the simulator reports a read of an element no thread has written yet. Every Out<T>
/// must be written somewhere.
template <Element T>
using Out = TensorParam<T, ir::ParamKind::Output>;

/// A tensor the kernel reads and writes, whose contents at entry are defined: an in-place update,
/// or a cache written only in part. Every InOut<T> must be written somewhere.
template <Element T>
using InOut = TensorParam<T, ir::ParamKind::InOut>;

/// A scalar fixed at dispatch time (a shape, a flag, an epsilon); usable as an Expr<T>.
template <Element T>
class Constexpr : public Expr<T> {
 public:
  Constexpr(int param)  // NOLINT(google-explicit-constructor)
      : Expr<T>(Expr<T>::wrap(detail::record_constexpr_ref(param, dtype_of<T>))), param_(param) {}
  static constexpr ir::ParamKind kind = ir::ParamKind::Constexpr;
  int param() const { return param_; }

 private:
  int param_;
};

/// A threadgroup-memory allocation of `size` elements, made by shared<T>(size).
template <Element T>
class Shared {
 public:
  explicit Shared(int alloc) : alloc_(alloc) {}
  int alloc() const { return alloc_; }
  detail::ElementRef<T, true> operator[](detail::Index i) const { return {-1, alloc_, i.id()}; }
  template <detail::NotAnIndex I>
  detail::an_index_must_be_an_integer_value operator[](const I& i) const = delete;

 private:
  int alloc_;
};

/// A shared allocation's placement: rows of `row` elements whose 16-byte chunks are XOR-swizzled
/// (docs/tensor-cores.md, "Shared layouts"), so a tile read a column of chunks at a time needs no
/// padding column to avoid bank conflicts. `row` is a power of two of at least 128 bytes; index
/// the allocation as if it were in order.
struct Swizzled {
  std::uint32_t row = 0;
};

/// Allocates threadgroup memory; each call is a distinct allocation with a generated name.
template <Element T>
Shared<T> shared(std::uint32_t size, SourceLocation where = SourceLocation::current()) {
  auto& t = detail::Tracer::current();
  t.at(where);
  return Shared<T>(t.add_shared(dtype_of<T>, size));
}

/// Threadgroup memory placed in swizzled rows (Swizzled).
template <Element T>
Shared<T> shared(std::uint32_t size, Swizzled layout,
                 SourceLocation where = SourceLocation::current()) {
  auto& t = detail::Tracer::current();
  t.at(where);
  return Shared<T>(t.add_shared(dtype_of<T>, size, /*ring=*/false, layout.row));
}

/// Threadgroup memory of `size` elements of U placed over the bytes of `base` (a ring: all its
/// stages), for a phase of the kernel that no longer needs base: an epilogue staging its sums in
/// the stages its products read. The two are never live at once: a barrier separates the last
/// access of one from the first of the other, and neither is read for what the other wrote (the
/// simulator reports both). Where base is smaller on a target or launch (a ring kept at fewer
/// stages) the overlay takes bytes of its own instead.
template <Element U, Element T>
Shared<U> overlay(const Shared<T>& base, std::uint32_t size,
                  SourceLocation where = SourceLocation::current()) {
  auto& t = detail::Tracer::current();
  t.at(where);
  return Shared<U>(t.add_overlay(dtype_of<U>, size, base.alloc()));
}

template <Element T, bool W>
Expr<T> load(const detail::ElementRef<T, W>& ref,
             SourceLocation where = SourceLocation::current()) {
  detail::at(where);
  return Expr<T>::wrap(detail::record_load(ref.param, ref.shared, ref.index, dtype_of<T>));
}

template <Element T, class X>
requires detail::Fits<X, T>
void store(const detail::ElementRef<T, true>& ref, const X& value,
           SourceLocation where = SourceLocation::current()) {
  detail::at(where);
  detail::record_store(ref.param, ref.shared, ref.index, detail::to_expr<T>(value).id(),
                       dtype_of<T>);
}
/// Storing a value of another element type does not compile: cast it first.
template <Element T, class X>
requires detail::Unfit<X, T>
void store(const detail::ElementRef<T, true>& ref, const X& value,
           detail::unfit_tag<X, T> = {}) = delete;

/// Bytes of one element of type T in a buffer.
template <Element T>
constexpr std::size_t lane_bytes() {
  constexpr DType t = dtype_of<T>;
  if constexpr (t == DType::F32 || t == DType::I32 || t == DType::U32) return 4;
  if constexpr (t == DType::F16 || t == DType::BF16 || t == DType::U16) return 2;
  return 1;
}

/// Whether W elements of type T make one wide access: 2, 4, 8 or 16 lanes of at most 16 bytes.
template <std::size_t W, class T>
concept WideAccess = (W == 2 || W == 4 || W == 8 || W == 16) && W* lane_bytes<T>() <= 16;

/// W consecutive elements read in one access: `load_lanes<8>(inp[i])` is inp[i .. i + 8). The
/// index must be a multiple of W (tensors start 256-byte aligned, so the access is aligned to
/// its width); the simulator reports one that is not, as it reports one out of bounds.
template <std::size_t W, Element T, bool Writable>
requires WideAccess<W, T> std::array<Expr<T>, W> load_lanes(
    const detail::ElementRef<T, Writable>& ref, SourceLocation where = SourceLocation::current()) {
  detail::at(where);
  const std::vector<ir::ValueId> ids = detail::record_lanes_load(
      ref.param, ref.shared, ref.index, dtype_of<T>, static_cast<std::uint8_t>(W));
  std::array<Expr<T>, W> values;
  for (std::size_t i = 0; i < W; ++i) values[i] = Expr<T>::wrap(ids[i]);
  return values;
}

/// W values written to W consecutive elements in one access (the index a multiple of W).
template <Element T, std::size_t W>
requires WideAccess<W, T>
void store_lanes(const detail::ElementRef<T, true>& ref, const std::array<Expr<T>, W>& values,
                 SourceLocation where = SourceLocation::current()) {
  detail::at(where);
  std::vector<ir::ValueId> ids(W);
  for (std::size_t i = 0; i < W; ++i) ids[i] = values[i].id();
  detail::record_lanes_store(ref.param, ref.shared, ref.index, ids, dtype_of<T>);
}

namespace detail {
void record_copy_async(int shared, ir::ValueId to, int param, ir::ValueId from, ir::ValueId valid,
                       DType type, std::uint8_t lanes);
void record_async_group(bool wait, std::int64_t pending);
}  // namespace detail

/// Starts copying the W elements at `src` (4, 8 or 16 bytes) to `dst` in shared memory, or zeros
/// when `valid` is false (then nothing is read): cp.async on CUDA, a plain copy on Metal. Both
/// indices are multiples of W. The copy lands at an async_wait() that leaves its group done;
/// reading or writing those shared elements before that is reported by the simulator. 16-byte
/// copies are the fast ones; the narrow ones serve small side tensors (a weight's scales).
template <std::size_t W, Element T, bool Writable>
requires(W* lane_bytes<T>() == 16 || W * lane_bytes<T>() == 8 ||
         W * lane_bytes<T>() ==
             4) void copy_async(const detail::ElementRef<T, true>& dst,
                                const detail::ElementRef<T, Writable>& src,
                                detail::Operand<bool> valid,
                                SourceLocation where = SourceLocation::current()) {
  detail::at(where);
  detail::record_copy_async(dst.shared, dst.index, src.param, src.index, valid.id(), dtype_of<T>,
                            static_cast<std::uint8_t>(W));
}

/// Closes the calling thread's group of started copies.
inline void async_commit(SourceLocation where = SourceLocation::current()) {
  detail::at(where);
  detail::record_async_group(false, 0);
}

/// Waits until at most `pending` (0 … 7) of the calling thread's copy groups are unfinished.
/// Other threads see the copies after a barrier that follows.
inline void async_wait(std::int64_t pending, SourceLocation where = SourceLocation::current()) {
  detail::at(where);
  detail::record_async_group(true, pending);
}

/// Storing into an input tensor is a compile error: mark the parameter Out<T>.
template <Element T, class X>
void store(const detail::ElementRef<T, false>& ref, const X& value,
           SourceLocation where = SourceLocation::current()) = delete;

#define IRON_ATOMIC(fn, kind)                                                                      \
  template <Element T, class X>                                                                    \
  requires detail::Fits<X, T> Expr<T> fn(const detail::ElementRef<T, true>& ref, const X& value,   \
                                         SourceLocation where = SourceLocation::current()) {       \
    detail::at(where);                                                                             \
    return Expr<T>::wrap(detail::record_atomic(ir::OpKind::kind, ref.param, ref.shared, ref.index, \
                                               detail::to_expr<T>(value).id(), dtype_of<T>));      \
  }                                                                                                \
  template <Element T, class X>                                                                    \
  requires detail::Unfit<X, T> Expr<T> fn(const detail::ElementRef<T, true>& ref, const X& value,  \
                                          detail::unfit_tag<X, T> = {})                            \
  = delete;
/// Atomic read-modify-write on an output tensor or shared element; returns the old value.
IRON_ATOMIC(atomic_add, AtomicAdd)
IRON_ATOMIC(atomic_max, AtomicMax)
IRON_ATOMIC(atomic_min, AtomicMin)
IRON_ATOMIC(atomic_and, AtomicAnd)
IRON_ATOMIC(atomic_or, AtomicOr)
IRON_ATOMIC(atomic_xor, AtomicXor)
IRON_ATOMIC(atomic_exchange, AtomicExchange)
#undef IRON_ATOMIC

}  // namespace iron::dsl
