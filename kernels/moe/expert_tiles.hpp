/// The tiles of a grouped product (iron_moe_gemm): which expert's rows a group's tile of rows
/// covers, when the rows of x_sorted are grouped by expert at iron_moe_sort's offsets and each
/// expert's rows are cut into tiles of their own (so no tile mixes two experts' weights).
#pragma once

#include <cstdint>
#include <iron/iron.hpp>
#include <string>

namespace iron::kernels::moe {

/// Tile `tile` of the rows, counting each expert's ⌈count / tile_rows⌉ tiles in expert order:
/// its expert, its first row and the end of its expert's rows. The tiles past every expert's
/// (a launch has ⌈rows / tile_rows⌉ + experts, enough for any counts) number on over the rows
/// that no assignment took, offsets[experts] … rows: there expert is `experts` and row_end
/// `rows`. Offsets are read clamped to [previous offset, rows], so a buffer that breaks the
/// contract (offsets[0] = 0, non-decreasing, offsets[experts] ≤ rows) cannot send a tile past
/// the rows; the rows before offsets[0] are then left unwritten.
struct ExpertTile {
  dsl::Expr<dsl::u32> expert;
  dsl::Expr<dsl::u32> row0;
  dsl::Expr<dsl::u32> row_end;
};

inline ExpertTile expert_tile(const dsl::Tensor<dsl::u32>& offsets,
                              const dsl::Expr<dsl::u32>& experts, const dsl::Expr<dsl::u32>& rows,
                              const dsl::Expr<dsl::u32>& tile, std::uint32_t tile_rows) {
  using namespace iron::dsl;
  Var<u32> expert = experts;
  Var<u32> row0 = 0u;
  Var<u32> row_end = rows;
  Var<u32> first = 0u;  // the first tile of expert e
  // Offsets past `rows` or decreasing are clamped: whatever the buffer holds, no tile reaches
  // past the rows.
  Var<u32> lo = min(load(offsets[0u]), rows);
  for (auto e : range(0u, experts, 1u)) {
    auto hi = min(max(load(offsets[e + 1u]), Expr<u32>(lo)), rows);
    auto tiles = (hi - lo + (tile_rows - 1u)) / tile_rows;
    IRON_IF(tile >= first && tile < first + tiles) {
      expert = e;
      row0 = lo + (tile - first) * tile_rows;
      row_end = hi;
    }
    first += tiles;
    lo = hi;
  }
  IRON_IF(Expr<u32>(expert) == experts) { row0 = lo + (tile - first) * tile_rows; }
  return {Expr<u32>(expert), Expr<u32>(row0), Expr<u32>(row_end)};
}

/// The grid's rows of tiles: enough for any counts, Σ_e ⌈count_e / tile_rows⌉ ≤ ⌈rows /
/// tile_rows⌉ + experts − 1, with the rest covering the rows no assignment took.
inline std::string tile_rows_of_grid(std::uint32_t tile_rows) {
  return "ceil_div(rows, " + std::to_string(tile_rows) + ") + experts";
}

/// Writes zeros to out[r, c] for rows row0 … row0 + tile_rows − 1 below rows and columns col0 …
/// col0 + tile_cols − 1 below n: the part of a tile past every expert.
template <class T>
void zero_tile(const dsl::Out<T>& out, const dsl::Expr<dsl::u32>& row0,
               const dsl::Expr<dsl::u32>& rows, const dsl::Expr<dsl::u32>& col0,
               const dsl::Expr<dsl::u32>& n, std::uint32_t tile_rows, std::uint32_t tile_cols) {
  using namespace iron::dsl;
  for (auto v : range(thread_id<0>(), tile_rows * tile_cols, group_size<0>())) {
    auto r = row0 + v / tile_cols;
    auto c = col0 + v % tile_cols;
    IRON_IF(r < rows && c < n) { store(out[r * n + c], cast<T>(Expr<f32>(0.0f))); }
  }
}

}  // namespace iron::kernels::moe
