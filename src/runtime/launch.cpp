/// Grid shapes for the two common dispatch styles, and host expressions evaluated for a launch.
#include "iron/runtime/launch.hpp"

#include <algorithm>
#include <limits>
#include <optional>

namespace iron::runtime {

Grid Grid::elementwise(std::uint64_t n, std::uint32_t tpg) {
  // A zero group size is left for the dispatch guard to refuse; the group count stays at least
  // one and saturates so that an oversized grid is refused there too rather than wrapping.
  const std::uint64_t per_group = std::max<std::uint32_t>(tpg, 1);
  const std::uint64_t groups = std::max<std::uint64_t>(n / per_group + (n % per_group != 0), 1);
  Grid g;
  g.groups.x = static_cast<std::uint32_t>(
      std::min<std::uint64_t>(groups, std::numeric_limits<std::uint32_t>::max()));
  g.group_size.x = tpg;
  return g;
}

Grid Grid::per_row(std::uint32_t rows, std::uint32_t tpg) {
  Grid g;
  g.groups.x = rows;
  g.group_size.x = tpg;
  return g;
}

ir::SizeValue evaluate_for_launch(const ir::Kernel& kernel, const std::vector<Arg>& args,
                                  const ir::SizeExpr& e) {
  return ir::evaluate_size_expr(e, [&](const ir::SizeExpr& leaf) -> std::optional<std::int64_t> {
    if (leaf.kind != ir::SizeExpr::Kind::Constexpr) return std::nullopt;
    const int p = kernel.find_param(leaf.name);
    if (p < 0) return std::nullopt;
    const Scalar* s = std::get_if<Scalar>(&args.at(static_cast<std::size_t>(p)));
    if (s == nullptr) return std::nullopt;
    return s->i;
  });
}

}  // namespace iron::runtime
