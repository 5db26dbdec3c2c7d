/// Kernel definition and registration: IRON_KERNEL, IRON_KERNEL_TEMPLATE + IRON_KERNEL_VARIANT,
/// the dispatch contract a kernel declares with dispatch(...), grid(...), layout(...) and
/// require_multiple_of(...), and the kernel registry.
#pragma once

#include <functional>
#include <initializer_list>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "iron/core/source_location.hpp"
#include "iron/dsl/memory.hpp"

namespace iron::dsl {

// ── Dispatch contract ────────────────────────────────────────────────────────────────────────

inline constexpr ir::DispatchMode elementwise = ir::DispatchMode::Elementwise;
inline constexpr ir::DispatchMode reduction = ir::DispatchMode::Reduction;
inline constexpr ir::DispatchMode tiled = ir::DispatchMode::Tiled;

/// Rules on the threads per group, checked before every launch.
ir::SizeRule multiple_of(std::int64_t n);
ir::SizeRule at_least(std::int64_t n);
ir::SizeRule at_most(std::int64_t n);
ir::SizeRule exactly(std::int64_t n);
ir::SizeRule power_of_two();
/// Exactly the value of constexpr `c` divided by `divisor` (e.g. one thread per 4 elements).
template <IntegerElement U>
ir::SizeRule exactly(const Constexpr<U>& c, std::int64_t divisor = 1) {
  const auto& params = detail::Tracer::current().kernel().params;
  return {ir::SizeRule::Kind::Exactly, 0, params.at(static_cast<std::size_t>(c.param())).name,
          divisor};
}

/// Declares the kernel's mode and group-size rules; first statement of a kernel body.
void dispatch(ir::DispatchMode mode, std::initializer_list<ir::SizeRule> rules = {},
              SourceLocation where = SourceLocation::current());

/// Asks the compiler to fit at least `groups` groups of the literal group-size bound on a
/// multiprocessor at once: CUDA's minimum blocks, which sets the register budget a thread gets
/// (`occupancy(3)` with `at_most(256)`: up to 85 registers, and ptxas uses them to keep more
/// loads in flight). A hint measured per kernel, not a rule the guard checks; Metal and the
/// simulator ignore it.
void occupancy(std::uint32_t groups, SourceLocation where = SourceLocation::current());

/// Declares the group counts along x, y and z, one entry per axis: `any`, an expression the count
/// must equal, or one it must not exceed (`<= …`) or fall below (`>= …`). Expressions are over
/// the kernel's integer constexprs, `tpg` (threads per group), `groups.x|y|z`, integer literals,
/// `+ - * /`, `ceil_div`, `min` and `max`:
///   grid("[<= ceil_div(n, tpg), 1, 1]");   // never more threads than elements, along x only
void grid(std::string_view groups, SourceLocation where = SourceLocation::current());

namespace detail {
void declare_layout(int param, bool exact, std::string_view dims, SourceLocation where);
void declare_multiple(int param, std::int64_t multiple, SourceLocation where);
void declare_bound(int param, bool at_most, std::string_view bound, SourceLocation where);
}  // namespace detail

/// Declares the element count tensor `t` must hold, exactly: the product of its layout's dims,
/// written as the doc comment's layout line, e.g. `layout(inp, "[groups.x, n]")`.
template <Element E, ir::ParamKind K>
void layout(const TensorParam<E, K>& t, std::string_view dims,
            SourceLocation where = SourceLocation::current()) {
  detail::declare_layout(t.param(), true, dims, where);
}

/// The same for a tensor that may be larger than the kernel uses (a cache, a lookup table).
template <Element E, ir::ParamKind K>
void layout_at_least(const TensorParam<E, K>& t, std::string_view dims,
                     SourceLocation where = SourceLocation::current()) {
  detail::declare_layout(t.param(), false, dims, where);
}

/// Declares that constexpr `c` is a multiple of `multiple` at every launch: a fact the compiler
/// builds on (`require_multiple_of(head_dim, 8)`: every head is whole 16-byte vectors of bf16,
/// so vectorize may widen its accesses) and that the dispatch guard checks before each launch.
template <IntegerElement U>
void require_multiple_of(const Constexpr<U>& c, std::int64_t multiple,
                         SourceLocation where = SourceLocation::current()) {
  detail::declare_multiple(c.param(), multiple, where);
}

/// Declares that constexpr `c` is at most (or at least) `bound` at every launch, `bound` an
/// expression over literals and the kernel's integer constexprs as in grid(...): the range a
/// kernel's threadgroup buffers or index arithmetic are sized for (`require_at_most(hop, "200")`).
/// The dispatch guard refuses a launch outside it.
template <IntegerElement U>
void require_at_most(const Constexpr<U>& c, std::string_view bound,
                     SourceLocation where = SourceLocation::current()) {
  detail::declare_bound(c.param(), true, bound, where);
}
template <IntegerElement U>
void require_at_least(const Constexpr<U>& c, std::string_view bound,
                      SourceLocation where = SourceLocation::current()) {
  detail::declare_bound(c.param(), false, bound, where);
}

// ── Registry ─────────────────────────────────────────────────────────────────────────────────

/// A registered kernel: traced on demand for one of its dtypes.
struct KernelInfo {
  std::string name;
  ir::SourceLoc loc;
  std::vector<DType> dtypes;
  std::function<ir::Kernel(DType)> trace;
};

/// All kernels linked into the program, registered by static initialisers, sorted by name.
const std::vector<KernelInfo>& registered_kernels();
const KernelInfo* find_kernel(std::string_view name);
/// Traces kernel `name` with T bound to `dtype`, its tuning knobs (iron/dsl/tuning.hpp) at their
/// defaults; Error for an unknown name or dtype.
ir::Kernel kernel_ir_for(std::string_view name, DType dtype);

namespace detail {

void register_kernel(KernelInfo info);
/// Parameter names from the stringized parameter list "(Tensor<T> inp, Out<T> out, …)".
std::vector<std::string> parameter_names(std::string_view stringized);
/// Runs `body` under a fresh Tracer and returns the checked, verified kernel.
ir::Kernel trace_kernel(const std::string& name, DType dtype, const ir::SourceLoc& loc,
                        const std::function<void()>& body);

template <class P>
P bind_param(const std::string& name) {
  return P(Tracer::current().add_param(name, P::kind, dtype_of<typename P::element>));
}

template <class... P, std::size_t... I>
void invoke_body(void (*fn)(P...), const std::vector<std::string>& names,
                 std::index_sequence<I...>) {
  // Braced initialisation binds the parameters left to right, in declaration order.
  std::tuple<P...> args{bind_param<P>(names[I])...};
  std::apply(fn, args);
}

template <class... P>
std::function<void()> body_of(void (*fn)(P...), const std::vector<std::string>& names) {
  return [fn, names] {
    if (names.size() != sizeof...(P)) {
      Tracer::current().fail("cannot read the parameter names from the kernel's parameter list");
    }
    invoke_body(fn, names, std::index_sequence_for<P...>{});
  };
}

/// Registers one kernel name with its three float instantiations.
struct KernelRegistrar {
  template <class F32, class F16, class BF16>
  KernelRegistrar(const char* name, const char* params, SourceLocation where, F32 f32_fn,
                  F16 f16_fn, BF16 bf16_fn) {
    const auto names = parameter_names(params);
    const std::string kernel_name = name;
    const ir::SourceLoc loc = to_loc(where);
    register_kernel({kernel_name, loc, {DType::F32, DType::F16, DType::BF16}, [=](DType dt) {
                       auto body = dt == DType::F16    ? body_of(f16_fn, names)
                                   : dt == DType::BF16 ? body_of(bf16_fn, names)
                                                       : body_of(f32_fn, names);
                       return trace_kernel(kernel_name, dt, loc, body);
                     }});
  }
};

}  // namespace detail
}  // namespace iron::dsl

#define IRON_UNPAREN(...) __VA_ARGS__

/// Defines and registers a kernel generic over the float element type T:
///   IRON_KERNEL(iron_scale, (Tensor<T> inp, Out<T> out, Constexpr<f32> alpha)) { … }
#define IRON_KERNEL(NAME, PARAMS)                                                      \
  template <class T>                                                                   \
  void NAME##_body PARAMS;                                                             \
  [[maybe_unused]] static const ::iron::dsl::detail::KernelRegistrar NAME##_registrar{ \
      #NAME,                                                                           \
      #PARAMS,                                                                         \
      ::iron::SourceLocation::current(),                                               \
      &NAME##_body<::iron::dsl::f32>,                                                  \
      &NAME##_body<::iron::dsl::f16>,                                                  \
      &NAME##_body<::iron::dsl::bf16>};                                                \
  template <class T>                                                                   \
  void NAME##_body PARAMS

/// Defines a kernel with compile-time variant parameters; register each variant with
/// IRON_KERNEL_VARIANT after the body:
///   IRON_KERNEL_TEMPLATE(iron_hadamard, (u32 N), (Tensor<T> inp, Out<T> out)) { … }
///   IRON_KERNEL_VARIANT(iron_hadamard, n64, 64);   // registers iron_hadamard_n64
#define IRON_KERNEL_TEMPLATE(NAME, TPARAMS, PARAMS)                       \
  [[maybe_unused]] static constexpr const char NAME##_params[] = #PARAMS; \
  template <class T, IRON_UNPAREN TPARAMS>                                \
  void NAME##_body PARAMS

#define IRON_KERNEL_VARIANT(NAME, SUFFIX, ...)                                                     \
  [[maybe_unused]] static const ::iron::dsl::detail::KernelRegistrar NAME##_##SUFFIX##_registrar { \
#NAME "_" #SUFFIX, NAME##_params, ::iron::SourceLocation::current(),                           \
        &NAME##_body < ::iron::dsl::f32, __VA_ARGS__>, &NAME##_body < ::iron::dsl::f16,            \
        __VA_ARGS__>, &NAME##_body < ::iron::dsl::bf16, __VA_ARGS__>                               \
  }
