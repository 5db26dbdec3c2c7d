/// Grid shapes for the two common dispatch styles.
#include "iron/runtime/launch.hpp"

#include <algorithm>
#include <limits>

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

}  // namespace iron::runtime
