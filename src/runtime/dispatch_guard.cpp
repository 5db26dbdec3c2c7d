/// Refuses a launch whose arguments, grid or tensor sizes break the kernel's contract, or whose
/// grid breaks the device's limits.
#include "iron/runtime/dispatch_guard.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <functional>
#include <limits>
#include <optional>
#include <string>

#include "iron/codegen/passes/layout_shared_memory.hpp"
#include "iron/codegen/passes/select_target_paths.hpp"

namespace iron::runtime {
namespace {

constexpr std::string_view kContract = "rule from the kernel's dispatch contract";

/// "file:line of dispatch(...)", or of the kernel when it declares none; empty when unknown.
std::string contract_source(const ir::Kernel& kernel) {
  if (kernel.dispatch.loc.known()) {
    return fmt::format("dispatch(...) at {}", format_loc(kernel.dispatch.loc));
  }
  if (kernel.loc.known()) return fmt::format("kernel defined at {}", format_loc(kernel.loc));
  return "";
}

/// The one form of every refusal: the kernel, what is wrong, then `note` (where, or which rule).
[[noreturn]] void throw_refusal(const ir::Kernel& kernel, std::string_view why,
                                std::string_view note) {
  throw DispatchError(
      fmt::format("{}: dispatch refused, nothing launched: {}{}", kernel.name, why, note));
}

/// Refuses with `why`, followed by where the failing declaration (`declaration`, e.g.
/// "layout(...)" at `loc`) and the kernel's contract are in its source.
[[noreturn]] void refuse(const ir::Kernel& kernel, const std::string& why,
                         std::string_view declaration = {}, const ir::SourceLoc& loc = {}) {
  std::string where;
  if (!declaration.empty() && loc.known()) {
    where = fmt::format("{} at {}", declaration, format_loc(loc));
  }
  const std::string contract = contract_source(kernel);
  if (!contract.empty() && contract != where) where += (where.empty() ? "" : ", ") + contract;
  throw_refusal(kernel, why, where.empty() ? "" : " (" + where + ")");
}

std::string param_names(const ir::Kernel& kernel) {
  std::string out;
  for (const ir::Param& p : kernel.params) out += (out.empty() ? "" : ", ") + p.name;
  return out;
}

void check_arg(const ir::Kernel& kernel, std::size_t i, const GuardArg& arg) {
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
  const TensorExtent* t = std::get_if<TensorExtent>(&arg);
  if (t == nullptr) {
    refuse(kernel, fmt::format("{} must be a {} tensor ({} parameter), got a scalar", what,
                               dtype_name(p.dtype), param_kind_name(p.kind)));
  }
  if (t->null) refuse(kernel, fmt::format("{} is a null tensor", what));
  if (t->dtype != p.dtype) {
    refuse(kernel, fmt::format("{} must be a {} tensor, got a {} tensor", what, dtype_name(p.dtype),
                               dtype_name(t->dtype)));
  }
  if (t->bytes % dtype_size(p.dtype) != 0) {
    refuse(kernel, fmt::format("{} holds {} bytes, not a whole number of {} elements", what,
                               t->bytes, dtype_name(p.dtype)));
  }
}

void check_args(const ir::Kernel& kernel, const std::vector<GuardArg>& args) {
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

/// The rule-from-the-contract note: where the kernel declares its contract, when known.
std::string contract_note(const ir::Kernel& kernel) {
  if (!kernel.dispatch.loc.known()) return fmt::format(" ({})", kContract);
  return fmt::format(" ({} at {})", kContract, format_loc(kernel.dispatch.loc));
}

/// Refuses a size-rule failure: the contract note already says where the rule is.
[[noreturn]] void refuse_rule(const ir::Kernel& kernel, const std::string& why) {
  throw_refusal(kernel, why, contract_note(kernel));
}

/// A group-size rule's bound at this launch, and how it came about (for the message, which is
/// made only on a refusal).
struct Bound {
  std::int64_t value = 0;
  std::string_view constexpr_name;  // empty for a literal bound
  std::int64_t constexpr_value = 0;
  std::int64_t divisor = 1;

  std::string text() const {
    if (constexpr_name.empty()) return std::to_string(value);
    if (divisor == 1) {
      return fmt::format("{} (constexpr {} = {})", value, constexpr_name, constexpr_value);
    }
    return fmt::format("{} (constexpr {} = {}, / {})", value, constexpr_name, constexpr_value,
                       divisor);
  }
};

Bound rule_bound(const ir::Kernel& kernel, const std::vector<GuardArg>& args,
                 const ir::SizeRule& r) {
  if (r.constexpr_name.empty()) return {r.value, {}, 0, 1};
  const int index = kernel.find_param(r.constexpr_name);
  if (index < 0 || kernel.params[index].kind != ir::ParamKind::Constexpr) {
    refuse(kernel, fmt::format("a group-size rule names '{}', which is not a constexpr parameter",
                               r.constexpr_name));
  }
  const auto& s = std::get<Scalar>(args[index]);
  if (!is_integer(s.dtype)) {
    refuse(kernel,
           fmt::format("a group-size rule names constexpr '{}', which is {}, not an integer",
                       r.constexpr_name, dtype_name(s.dtype)));
  }
  if (r.divisor <= 0) {
    refuse(kernel, fmt::format("a group-size rule divides constexpr '{}' by {}", r.constexpr_name,
                               r.divisor));
  }
  return {s.i / r.divisor, r.constexpr_name, s.i, r.divisor};
}

void check_rule(const ir::Kernel& kernel, const std::vector<GuardArg>& args, std::uint64_t threads,
                const ir::SizeRule& rule) {
  using K = ir::SizeRule::Kind;
  if (rule.kind == K::PowerOfTwo) {
    if (!std::has_single_bit(threads)) {
      refuse_rule(kernel, fmt::format("threads per group ({}) must be a power of two", threads));
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
    refuse_rule(kernel, fmt::format("threads per group ({}) must be {} {}", n, relation, b.text()));
  }
}

/// `require NAME multiple_of M`: the constexpr's value at this launch is a multiple of M.
void check_constexpr_rule(const ir::Kernel& kernel, const std::vector<GuardArg>& args,
                          const ir::ConstexprRule& rule) {
  constexpr std::string_view kDecl = "require_multiple_of(...)";
  const int index = kernel.find_param(rule.constexpr_name);
  const Scalar* s =
      index < 0 ? nullptr : std::get_if<Scalar>(&args[static_cast<std::size_t>(index)]);
  if (s == nullptr || !is_integer(s->dtype) || rule.multiple <= 0) {
    refuse(kernel,
           fmt::format("the contract requires '{}' to be a multiple of {}, which needs an integer "
                       "constexpr parameter '{}' and a positive multiple",
                       rule.constexpr_name, rule.multiple, rule.constexpr_name),
           kDecl, rule.loc);
  }
  if (s->i % rule.multiple != 0) {
    refuse(kernel,
           fmt::format("constexpr {} ({}) must be a multiple of {}", rule.constexpr_name, s->i,
                       rule.multiple),
           kDecl, rule.loc);
  }
}

/// Values of the leaves of contract expressions for one launch.
class Values {
 public:
  Values(const ir::Kernel& kernel, const std::vector<GuardArg>& args, const Grid& grid)
      : kernel_(kernel), args_(args), grid_(grid) {}

  std::optional<std::int64_t> operator()(const ir::SizeExpr& leaf) const {
    switch (leaf.kind) {
      case ir::SizeExpr::Kind::Groups: {
        const std::uint32_t counts[3] = {grid_.groups.x, grid_.groups.y, grid_.groups.z};
        if (leaf.axis > 2) return std::nullopt;
        return counts[leaf.axis];
      }
      case ir::SizeExpr::Kind::ThreadsPerGroup:
        return static_cast<std::int64_t>(threads_per_group(grid_.group_size));
      case ir::SizeExpr::Kind::Constexpr:
        return constexpr_value(leaf.name);
      default:
        return leaf.value;
    }
  }

  /// The launch's value of integer constexpr `name`, or nullopt.
  std::optional<std::int64_t> constexpr_value(std::string_view name) const {
    const int index = kernel_.find_param(name);
    if (index < 0) return std::nullopt;
    const Scalar* s = std::get_if<Scalar>(&args_[static_cast<std::size_t>(index)]);
    if (s == nullptr || !is_integer(s->dtype)) return std::nullopt;
    return s->i;
  }

  /// The expression's value, or nullopt when it has none.
  std::optional<std::int64_t> value_of(const ir::SizeExpr& e) const {
    const ir::SizeValue v = ir::evaluate_size_expr(e, leaf());
    if (!v.ok()) return std::nullopt;
    return v.value;
  }

  /// The expression's value; refuses naming `what()` (made only then: this runs at every
  /// launch) and the declaration when it has none.
  template <class What>
  std::int64_t evaluate(const ir::SizeExpr& e, const What& what, std::string_view declaration,
                        const ir::SourceLoc& loc) const {
    const ir::SizeValue v = ir::evaluate_size_expr(e, leaf());
    if (!v.ok()) {
      refuse(kernel_, fmt::format("{} cannot be evaluated: {}", what(), v.error), declaration, loc);
    }
    return v.value;
  }

  /// "EXPR = VALUES = VALUE", leaving out the parts that repeat (`n = 1000`, `8`).
  std::string explain(const ir::SizeExpr& e, std::int64_t value) const {
    const std::string text = ir::print_size_expr(e);
    const std::string values = ir::print_size_expr(e, [&](const ir::SizeExpr& l) {
      const auto v = (*this)(l);
      return v ? std::to_string(*v) : "?";
    });
    const std::string result = std::to_string(value);
    std::string out = text;
    if (values != text) out += " = " + values;
    if (result != values) out += " = " + result;
    return out;
  }

 private:
  /// The leaves' values as evaluate_size_expr takes them (one pointer: no allocation).
  std::function<std::optional<std::int64_t>(const ir::SizeExpr&)> leaf() const {
    return [this](const ir::SizeExpr& l) { return (*this)(l); };
  }

  const ir::Kernel& kernel_;
  const std::vector<GuardArg>& args_;
  const Grid& grid_;
};

bool holds(ir::GridRule::Relation r, std::int64_t count, std::int64_t bound) {
  switch (r) {
    case ir::GridRule::Relation::Equal:
      return count == bound;
    case ir::GridRule::Relation::AtMost:
      return count <= bound;
    default:
      return count >= bound;
  }
}

void check_grid_rule(const ir::Kernel& kernel, const Values& values, const Grid& grid,
                     const ir::GridRule& rule) {
  constexpr std::string_view kDecl = "grid(...)";
  const char axis = "xyz"[rule.axis % 3];
  const std::uint32_t counts[3] = {grid.groups.x, grid.groups.y, grid.groups.z};
  const std::int64_t count = counts[rule.axis % 3];
  const std::int64_t bound = values.evaluate(
      rule.bound, [axis] { return fmt::format("the bound of groups.{}", axis); }, kDecl, rule.loc);
  if (holds(rule.relation, count, bound)) return;
  const std::string_view relation = rule.relation == ir::GridRule::Relation::Equal    ? ""
                                    : rule.relation == ir::GridRule::Relation::AtMost ? "at most "
                                                                                      : "at least ";
  std::string why = fmt::format("groups.{} ({}) must be {}{}", axis, count, relation,
                                values.explain(rule.bound, bound));
  // A count of at least one group's threads that divided by them would pass was given in threads.
  const auto tpg = static_cast<std::int64_t>(threads_per_group(grid.group_size));
  if (tpg > 1 && count >= tpg && rule.relation != ir::GridRule::Relation::AtLeast &&
      holds(rule.relation, (count + tpg - 1) / tpg, bound)) {
    why += fmt::format(": a grid counted in threads, not in groups of {}?", tpg);
  }
  refuse(kernel, why, kDecl, rule.loc);
}

/// `require NAME <=|>= EXPR`: the constexpr's value at this launch is within its declared range.
void check_constexpr_bound(const ir::Kernel& kernel, const Values& values,
                           const ir::ConstexprBound& rule) {
  const bool at_most = rule.relation == ir::GridRule::Relation::AtMost;
  const std::string_view decl = at_most ? "require_at_most(...)" : "require_at_least(...)";
  const std::optional<std::int64_t> known = values.constexpr_value(rule.constexpr_name);
  if (!known) {
    refuse(kernel,
           fmt::format("constexpr {} cannot be evaluated: '{}' has no value", rule.constexpr_name,
                       rule.constexpr_name),
           decl, rule.loc);
  }
  const std::int64_t value = *known;
  const std::int64_t bound = values.evaluate(
      rule.bound, [&] { return fmt::format("the bound of constexpr {}", rule.constexpr_name); },
      decl, rule.loc);
  if (holds(rule.relation, value, bound)) return;
  refuse(kernel,
         fmt::format("constexpr {} ({}) must be {} {}", rule.constexpr_name, value,
                     at_most ? "at most" : "at least", values.explain(rule.bound, bound)),
         decl, rule.loc);
}

/// Elements of a tensor argument (already checked to be whole elements).
std::uint64_t element_count(const ir::Param& p, const GuardArg& arg) {
  return std::get<TensorExtent>(arg).bytes / dtype_size(p.dtype);
}

/// The element count a layout's dims give at this launch (their product), or nullopt when a dim
/// has no value, is negative or the product overflows (check_layout then says which).
std::optional<std::uint64_t> layout_elements(const Values& values,
                                             const std::vector<ir::SizeExpr>& dims) {
  std::int64_t product = 1;
  for (const ir::SizeExpr& d : dims) {
    const std::optional<std::int64_t> v = values.value_of(d);
    if (!v || *v < 0 || __builtin_mul_overflow(product, *v, &product)) return std::nullopt;
  }
  return static_cast<std::uint64_t>(product);
}

void check_layout(const ir::Kernel& kernel, const KernelFacts& facts, const Values& values,
                  const ir::TensorLayout& layout, const std::vector<GuardArg>& args) {
  const std::string_view decl = layout.exact ? "layout(...)" : "layout_at_least(...)";
  const int index = kernel.find_param(layout.param);
  if (index < 0 || kernel.params[index].kind == ir::ParamKind::Constexpr) {
    refuse(
        kernel,
        fmt::format("the contract declares a layout of '{}', not a tensor parameter", layout.param),
        decl, layout.loc);
  }
  const ir::Param& p = kernel.params[index];
  const std::uint64_t count = element_count(p, args[index]);
  const std::uint64_t limit = facts.index_limits.at(static_cast<std::size_t>(index));
  if (const std::optional<std::uint64_t> need = layout_elements(values, layout.dims)) {
    if ((layout.exact ? count == *need : count >= *need) && *need <= limit) return;
  }
  // Refused: the same evaluation again, as one expression, for the message.
  const std::string dims = ir::print_size_dims(layout.dims);
  const ir::SizeExpr product = ir::product_of(layout.dims);
  const std::int64_t need = values.evaluate(
      product, [&] { return fmt::format("the layout {} of {}", dims, p.name); }, decl, layout.loc);
  if (need < 0) {
    refuse(kernel,
           fmt::format("the layout {} of {} needs {}, a negative element count", dims, p.name,
                       values.explain(product, need)),
           decl, layout.loc);
  }
  const auto needed = static_cast<std::uint64_t>(need);
  const bool ok = layout.exact ? count == needed : count >= needed;
  if (!ok) {
    refuse(kernel,
           fmt::format("{} holds {} elements; the layout {} needs {}{}", p.name, count, dims,
                       layout.exact ? "" : "at least ", values.explain(product, need)),
           decl, layout.loc);
  }
  if (needed > limit) {
    refuse(kernel,
           fmt::format("the layout {} of {} needs {} elements, more than its indices can "
                       "address (at most {} elements)",
                       dims, p.name, needed, limit),
           decl, layout.loc);
  }
}

/// A tensor without a declared layout: its own element count must fit its index type.
void check_undeclared(const ir::Kernel& kernel, const KernelFacts& facts, std::size_t index,
                      const GuardArg& arg) {
  const ir::Param& p = kernel.params[index];
  const std::uint64_t count = element_count(p, arg);
  const std::uint64_t limit = facts.index_limits.at(index);
  if (count > limit) {
    refuse(kernel, fmt::format("{} holds {} elements, more than its indices can address (at most "
                               "{} elements)",
                               p.name, count, limit));
  }
}

std::uint64_t largest_index(DType t) {
  switch (t) {
    case DType::U32:
      return std::numeric_limits<std::uint32_t>::max();
    case DType::I32:
      return std::numeric_limits<std::int32_t>::max();
    case DType::U16:
      return std::numeric_limits<std::uint16_t>::max();
    case DType::U8:
      return std::numeric_limits<std::uint8_t>::max();
    case DType::I8:
      return std::numeric_limits<std::int8_t>::max();
    default:
      return std::numeric_limits<std::uint64_t>::max();
  }
}

}  // namespace

/// The threadgroup memory of the kernel's larger path: a kernel with target queries allocates
/// only what the path its target takes uses (select_target_paths), and the two sides of a
/// launch-constant branch share bytes (codegen::cuda_shared_footprint).
std::uint64_t shared_bytes(const ir::Kernel& kernel) {
  if (!codegen::has_target_queries(kernel)) return codegen::cuda_shared_footprint(kernel);
  std::uint64_t most = 0;
  for (const bool answer : {false, true}) {
    ir::Kernel path = kernel;
    codegen::select_target_paths(path, [answer](ir::TargetFeature) { return answer; });
    most = std::max(most, codegen::cuda_shared_footprint(path));
  }
  return most;
}

KernelFacts kernel_facts(const ir::Kernel& kernel) {
  KernelFacts facts{
      shared_bytes(kernel),
      std::vector<std::uint64_t>(kernel.params.size(), std::numeric_limits<std::uint64_t>::max()),
      ir::SpecializationPlan(kernel)};
  std::vector<DType> types(kernel.num_values, DType::U32);
  ir::walk(kernel.body, [&](const ir::Op& op) {
    if (op.result != ir::kNoValue && op.result < types.size()) types[op.result] = op.type;
    const bool access = op.kind == ir::OpKind::Load || op.kind == ir::OpKind::Store ||
                        ir::op_class(op.kind) == ir::OpClass::Atomic;
    if (!access || op.param < 0 ||
        static_cast<std::size_t>(op.param) >= facts.index_limits.size() || op.args.empty() ||
        op.args[0] >= types.size()) {
      return;
    }
    auto& limit = facts.index_limits[static_cast<std::size_t>(op.param)];
    limit = std::min(limit, largest_index(types[op.args[0]]));
  });
  return facts;
}

void check_dispatch(const ir::Kernel& kernel, const std::vector<GuardArg>& args, const Grid& grid,
                    const DeviceLimits& limits) {
  check_dispatch(kernel, args, grid, limits, kernel_facts(kernel));
}

void check_dispatch(const ir::Kernel& kernel, const std::vector<GuardArg>& args, const Grid& grid,
                    const DeviceLimits& limits, const KernelFacts& facts) {
  check_args(kernel, args);
  check_groups(kernel, grid, limits);
  check_threads(kernel, grid, limits);
  const std::uint64_t threads = threads_per_group(grid.group_size);
  for (const ir::SizeRule& rule : kernel.dispatch.group_size_rules) {
    check_rule(kernel, args, threads, rule);
  }
  for (const ir::ConstexprRule& rule : kernel.dispatch.constexpr_rules) {
    check_constexpr_rule(kernel, args, rule);
  }
  const Dim3& d = grid.group_size;
  if (kernel.dispatch.mode == ir::DispatchMode::Reduction && (d.y != 1 || d.z != 1)) {
    refuse_rule(kernel, fmt::format("a reduction kernel needs one-dimensional groups, got group "
                                    "size {}x{}x{} (y and z must be 1)",
                                    d.x, d.y, d.z));
  }
  const std::uint64_t bytes = facts.shared_bytes;
  if (bytes > limits.max_shared_bytes) {
    refuse(kernel, fmt::format("threadgroup memory ({} bytes in {} buffers) exceeds the device "
                               "limit of {} bytes",
                               bytes, kernel.shared.size(), limits.max_shared_bytes));
  }
  const Values values(kernel, args, grid);
  // A constexpr's range first: the grid and layouts may divide by it.
  for (const ir::ConstexprBound& rule : kernel.dispatch.constexpr_bounds) {
    check_constexpr_bound(kernel, values, rule);
  }
  for (const ir::GridRule& rule : kernel.dispatch.grid_rules) {
    check_grid_rule(kernel, values, grid, rule);
  }
  for (std::size_t i = 0; i < kernel.params.size(); ++i) {
    if (kernel.params[i].kind == ir::ParamKind::Constexpr) continue;
    const ir::TensorLayout* layout = kernel.dispatch.layout_of(kernel.params[i].name);
    if (layout != nullptr) {
      check_layout(kernel, facts, values, *layout, args);
    } else {
      check_undeclared(kernel, facts, i, args[i]);
    }
  }
}

void check_dispatch(const ir::Kernel& kernel, const std::vector<Arg>& args, const Grid& grid,
                    const DeviceLimits& limits) {
  std::vector<GuardArg> extents;
  extents.reserve(args.size());
  for (const Arg& a : args) {
    if (const Scalar* s = std::get_if<Scalar>(&a)) {
      extents.emplace_back(*s);
    } else if (HostTensor* t = std::get<HostTensor*>(a); t == nullptr) {
      extents.emplace_back(TensorExtent{DType::F32, 0, true});
    } else {
      extents.emplace_back(TensorExtent{t->dtype, t->bytes.size(), false});
    }
  }
  check_dispatch(kernel, extents, grid, limits);
}

}  // namespace iron::runtime
