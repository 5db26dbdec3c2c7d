/// Refuses a launch whose arguments or grid break the kernel's contract or the device's limits.
#include "iron/runtime/dispatch_guard.hpp"

#include <fmt/format.h>

#include <bit>
#include <limits>
#include <string>

namespace iron::runtime {
namespace {

constexpr std::string_view kContract = " (rule from the kernel's dispatch contract)";

[[noreturn]] void refuse(const ir::Kernel& kernel, const std::string& why) {
  throw DispatchError(fmt::format("{}: dispatch refused, nothing launched: {}", kernel.name, why));
}

std::string param_names(const ir::Kernel& kernel) {
  std::string out;
  for (const ir::Param& p : kernel.params) out += (out.empty() ? "" : ", ") + p.name;
  return out;
}

void check_arg(const ir::Kernel& kernel, std::size_t i, const Arg& arg) {
  const ir::Param& p = kernel.params[i];
  const std::string what = fmt::format("argument {} '{}'", i, p.name);
  if (p.kind == ir::ParamKind::Constexpr) {
    const Scalar* s = std::get_if<Scalar>(&arg);
    if (s == nullptr) {
      refuse(kernel, fmt::format("{} must be a {} scalar (constexpr parameter), got a tensor", what,
                                 dtype_name(p.dtype)));
    }
    if (s->dtype != p.dtype) {
      refuse(kernel, fmt::format("{} must be a {} scalar, got a {} scalar", what,
                                 dtype_name(p.dtype), dtype_name(s->dtype)));
    }
    return;
  }
  const HostTensor* const* t = std::get_if<HostTensor*>(&arg);
  if (t == nullptr) {
    refuse(kernel, fmt::format("{} must be a {} tensor ({} parameter), got a scalar", what,
                               dtype_name(p.dtype), param_kind_name(p.kind)));
  }
  if (*t == nullptr) refuse(kernel, fmt::format("{} is a null tensor", what));
  if ((*t)->dtype != p.dtype) {
    refuse(kernel, fmt::format("{} must be a {} tensor, got a {} tensor", what, dtype_name(p.dtype),
                               dtype_name((*t)->dtype)));
  }
  if ((*t)->bytes.size() % dtype_size(p.dtype) != 0) {
    refuse(kernel, fmt::format("{} holds {} bytes, not a whole number of {} elements", what,
                               (*t)->bytes.size(), dtype_name(p.dtype)));
  }
}

void check_args(const ir::Kernel& kernel, const std::vector<Arg>& args) {
  if (args.size() != kernel.params.size()) {
    refuse(kernel, fmt::format("the kernel takes {} arguments ({}), got {}", kernel.params.size(),
                               param_names(kernel), args.size()));
  }
  for (std::size_t i = 0; i < args.size(); ++i) check_arg(kernel, i, args[i]);
}

void check_groups(const ir::Kernel& kernel, const Grid& grid, const DeviceLimits& limits) {
  const std::uint32_t counts[3] = {grid.groups.x, grid.groups.y, grid.groups.z};
  for (int axis = 0; axis < 3; ++axis) {
    const char name = static_cast<char>('x' + axis);
    if (counts[axis] == 0) {
      refuse(kernel, fmt::format("groups.{} (0) must be at least 1", name));
    }
    if (counts[axis] > limits.max_groups[axis]) {
      refuse(kernel, fmt::format("groups.{} ({}) exceeds the device limit of {}", name,
                                 counts[axis], limits.max_groups[axis]));
    }
  }
}

// x * y * z, saturated so that no product of three 32-bit counts can wrap.
std::uint64_t threads_per_group(const Dim3& d) {
  const std::uint64_t xy = std::uint64_t{d.x} * d.y;
  if (xy > std::numeric_limits<std::uint32_t>::max())
    return std::numeric_limits<std::uint64_t>::max();
  return xy * d.z;
}

void check_threads(const ir::Kernel& kernel, const Grid& grid, const DeviceLimits& limits) {
  const Dim3& d = grid.group_size;
  const std::uint64_t n = threads_per_group(d);
  if (n == 0) {
    refuse(kernel, fmt::format("threads per group (0, group size {}x{}x{}) must be at least 1", d.x,
                               d.y, d.z));
  }
  if (n > limits.max_threads_per_group) {
    refuse(kernel, fmt::format("threads per group ({}x{}x{}) exceeds the device limit of {}", d.x,
                               d.y, d.z, limits.max_threads_per_group));
  }
}

struct Bound {
  std::int64_t value = 0;
  std::string text;  // how the value came about, for the message
};

Bound rule_bound(const ir::Kernel& kernel, const std::vector<Arg>& args, const ir::SizeRule& r) {
  if (r.constexpr_name.empty()) return {r.value, std::to_string(r.value)};
  const int index = kernel.find_param(r.constexpr_name);
  if (index < 0 || kernel.params[index].kind != ir::ParamKind::Constexpr) {
    refuse(kernel, fmt::format("a group-size rule names '{}', which is not a constexpr parameter",
                               r.constexpr_name));
  }
  const Scalar& s = std::get<Scalar>(args[index]);
  if (!is_integer(s.dtype)) {
    refuse(kernel,
           fmt::format("a group-size rule names constexpr '{}', which is {}, not an integer",
                       r.constexpr_name, dtype_name(s.dtype)));
  }
  if (r.divisor <= 0) {
    refuse(kernel, fmt::format("a group-size rule divides constexpr '{}' by {}", r.constexpr_name,
                               r.divisor));
  }
  const std::int64_t v = s.i / r.divisor;
  if (r.divisor == 1) return {v, fmt::format("{} (constexpr {} = {})", v, r.constexpr_name, s.i)};
  return {v, fmt::format("{} (constexpr {} = {}, / {})", v, r.constexpr_name, s.i, r.divisor)};
}

void check_rule(const ir::Kernel& kernel, const std::vector<Arg>& args, std::uint64_t threads,
                const ir::SizeRule& rule) {
  using K = ir::SizeRule::Kind;
  if (rule.kind == K::PowerOfTwo) {
    if (!std::has_single_bit(threads)) {
      refuse(kernel,
             fmt::format("threads per group ({}) must be a power of two{}", threads, kContract));
    }
    return;
  }
  const Bound b = rule_bound(kernel, args, rule);
  const auto n = static_cast<std::int64_t>(threads);
  bool ok = false;
  std::string_view relation;
  switch (rule.kind) {
    case K::MultipleOf:
      ok = b.value > 0 && n % b.value == 0;
      relation = "a multiple of";
      break;
    case K::AtLeast:
      ok = n >= b.value;
      relation = "at least";
      break;
    case K::AtMost:
      ok = n <= b.value;
      relation = "at most";
      break;
    case K::Exactly:
      ok = n == b.value;
      relation = "exactly";
      break;
    case K::PowerOfTwo:
      break;
  }
  if (!ok) {
    refuse(kernel,
           fmt::format("threads per group ({}) must be {} {}{}", n, relation, b.text, kContract));
  }
}

}  // namespace

std::uint64_t shared_bytes(const ir::Kernel& kernel) {
  std::uint64_t total = 0;
  for (const ir::SharedAlloc& s : kernel.shared) {
    total += (std::uint64_t{s.size} * dtype_size(s.dtype) + 15) / 16 * 16;
  }
  return total;
}

void check_dispatch(const ir::Kernel& kernel, const std::vector<Arg>& args, const Grid& grid,
                    const DeviceLimits& limits) {
  check_args(kernel, args);
  check_groups(kernel, grid, limits);
  check_threads(kernel, grid, limits);
  const std::uint64_t threads = threads_per_group(grid.group_size);
  for (const ir::SizeRule& rule : kernel.dispatch.group_size_rules) {
    check_rule(kernel, args, threads, rule);
  }
  const Dim3& d = grid.group_size;
  if (kernel.dispatch.mode == ir::DispatchMode::Reduction && (d.y != 1 || d.z != 1)) {
    refuse(kernel, fmt::format("a reduction kernel needs one-dimensional groups, got group size "
                               "{}x{}x{} (y and z must be 1){}",
                               d.x, d.y, d.z, kContract));
  }
  const std::uint64_t bytes = shared_bytes(kernel);
  if (bytes > limits.max_shared_bytes) {
    refuse(kernel, fmt::format("threadgroup memory ({} bytes in {} buffers) exceeds the device "
                               "limit of {} bytes",
                               bytes, kernel.shared.size(), limits.max_shared_bytes));
  }
}

}  // namespace iron::runtime
