/// Tensor-core fragments: a matrix tile held in the registers of one simdgroup (32 lanes), with
/// a role in a multiply-accumulate (A: M×K, B: K×N, accumulator: M×N) and a logical shape. Each
/// lane owns rows·cols/32 elements; which ones is the lane map below, the same on every target
/// that lowers fragments element by element (the simulator and CUDA: the layout of PTX
/// `mma.m16n8k16`, tiled), so a fragment element always knows its (row, col).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace iron::ir {

/// What a fragment is to a multiply-accumulate D += A·B.
enum class FragmentRole : std::uint8_t { A, B, Acc };
std::string_view fragment_role_name(FragmentRole r);
std::optional<FragmentRole> parse_fragment_role(std::string_view name);

/// How a matrix lies in memory: element (r, c) at offset + r·stride + c (row-major) or
/// offset + c·stride + r (column-major: a B of [N, K], a linear layer's weight).
enum class MatrixLayout : std::uint8_t { RowMajor, ColMajor };
std::string_view matrix_layout_name(MatrixLayout l);
std::optional<MatrixLayout> parse_matrix_layout(std::string_view name);

/// What frag.rowreduce computes over each row of an accumulator.
enum class RowReduction : std::uint8_t { Max, Sum };
std::string_view row_reduction_name(RowReduction r);
std::optional<RowReduction> parse_row_reduction(std::string_view name);

/// The rows and columns of the hardware tile a fragment of each role is made of (m16n8k16):
/// A 16×16, B 16×8 (k × n), accumulator 16×8.
constexpr std::uint32_t tile_rows(FragmentRole) { return 16; }
constexpr std::uint32_t tile_cols(FragmentRole r) { return r == FragmentRole::A ? 16 : 8; }
/// Elements of one tile owned by each lane.
constexpr std::uint32_t tile_elements_per_lane(FragmentRole r) {
  return tile_rows(r) * tile_cols(r) / 32;
}

/// The most elements a lane may own in one fragment: beyond it registers run out.
inline constexpr std::uint32_t kMaxFragmentElements = 128;

/// A fragment's role and logical shape.
struct FragmentShape {
  FragmentRole role = FragmentRole::A;
  std::uint32_t rows = 0;
  std::uint32_t cols = 0;

  /// Elements each of the 32 lanes owns.
  constexpr std::uint32_t elements_per_lane() const { return rows * cols / 32; }
  /// Whether the shape is a whole number of tiles of its role.
  constexpr bool tiled() const {
    return rows > 0 && cols > 0 && rows % tile_rows(role) == 0 && cols % tile_cols(role) == 0;
  }
  bool operator==(const FragmentShape&) const = default;
};

/// A logical position in a fragment.
struct FragmentCoord {
  std::uint32_t row = 0;
  std::uint32_t col = 0;
};

/// Which element of fragment `s` lane `lane` (0–31) holds in its slot `slot`
/// (0 … elements_per_lane − 1): tiles in row-major order, `tile_elements_per_lane` slots each,
/// and within a tile the m16n8k16 layout (g = lane / 4, t = lane % 4):
///   A:   slot e → row g + 8·((e >> 1) & 1), col 2t + (e & 1) + 8·(e >> 2)
///   B:   slot e → row (k) 2t + (e & 1) + 8·(e >> 1), col (n) g
///   Acc: slot e → row g + 8·(e >> 1), col 2t + (e & 1)
constexpr FragmentCoord fragment_coord(const FragmentShape& s, std::uint32_t lane,
                                       std::uint32_t slot) {
  const std::uint32_t per_tile = tile_elements_per_lane(s.role);
  const std::uint32_t tile = slot / per_tile;
  const std::uint32_t e = slot % per_tile;
  const std::uint32_t tiles_across = s.cols / tile_cols(s.role);
  const std::uint32_t row0 = tile / tiles_across * tile_rows(s.role);
  const std::uint32_t col0 = tile % tiles_across * tile_cols(s.role);
  const std::uint32_t g = lane / 4;
  const std::uint32_t t = lane % 4;
  switch (s.role) {
    case FragmentRole::A:
      return {row0 + g + 8 * ((e >> 1) & 1), col0 + 2 * t + (e & 1) + 8 * (e >> 2)};
    case FragmentRole::B:
      return {row0 + 2 * t + (e & 1) + 8 * (e >> 1), col0 + g};
    case FragmentRole::Acc:
      return {row0 + g + 8 * (e >> 1), col0 + 2 * t + (e & 1)};
  }
  return {};
}

/// A lane and one of its slots.
struct FragmentOwner {
  std::uint32_t lane = 0;
  std::uint32_t slot = 0;
};

/// The inverse of fragment_coord: which lane holds element (row, col) of fragment `s`, and in
/// which slot.
constexpr FragmentOwner fragment_owner(const FragmentShape& s, std::uint32_t row,
                                       std::uint32_t col) {
  const std::uint32_t tile =
      row / tile_rows(s.role) * (s.cols / tile_cols(s.role)) + col / tile_cols(s.role);
  const std::uint32_t r = row % tile_rows(s.role);
  const std::uint32_t c = col % tile_cols(s.role);
  const std::uint32_t first = tile * tile_elements_per_lane(s.role);
  switch (s.role) {
    case FragmentRole::A:
      return {r % 8 * 4 + c % 8 / 2, first + (c & 1) + 2 * (r / 8) + 4 * (c / 8)};
    case FragmentRole::B:
      return {c * 4 + r % 8 / 2, first + (r & 1) + 2 * (r / 8)};
    case FragmentRole::Acc:
      return {r % 8 * 4 + c / 2, first + (c & 1) + 2 * (r / 8)};
  }
  return {};
}

/// Which lane holds which element of a fragment: the m16n8k16 layout above (CUDA; the
/// simulator's default), or Metal's 8×8 simdgroup matrices: tiles of 8×8 in row-major order, two
/// slots a lane in each, lane l holding row (l / 16)·4 + (l / 2) % 4 and columns
/// ((l / 8) % 2)·4 + (l % 2)·2 + {0, 1} (the map MSL's lowering assumes, docs/tensor-cores.md).
/// The simulator runs fragment code under both and requires the same results.
enum class LaneMap : std::uint8_t { Mma, Simdgroup8x8 };
std::string_view lane_map_name(LaneMap m);

constexpr FragmentCoord fragment_coord(LaneMap map, const FragmentShape& s, std::uint32_t lane,
                                       std::uint32_t slot) {
  if (map == LaneMap::Mma) return fragment_coord(s, lane, slot);
  const std::uint32_t tile = slot / 2;
  const std::uint32_t tiles_across = s.cols / 8;
  return {tile / tiles_across * 8 + lane / 16 * 4 + lane / 2 % 4,
          tile % tiles_across * 8 + lane / 8 % 2 * 4 + lane % 2 * 2 + slot % 2};
}

constexpr FragmentOwner fragment_owner(LaneMap map, const FragmentShape& s, std::uint32_t row,
                                       std::uint32_t col) {
  if (map == LaneMap::Mma) return fragment_owner(s, row, col);
  const std::uint32_t tile = row / 8 * (s.cols / 8) + col / 8;
  const std::uint32_t r = row % 8;
  const std::uint32_t c = col % 8;
  return {r / 4 * 16 + c / 4 * 8 + r % 4 * 2 + c % 4 / 2, tile * 2 + c % 2};
}

/// Whether, under every lane map, each lane's slots [b·E/B, (b + 1)·E/B) (E elements a lane,
/// B = rows / band_rows) hold its elements of rows [b·band_rows, (b + 1)·band_rows): code that
/// goes through a fragment a band of rows at a time may then name a band's slots statically.
constexpr bool slots_in_row_bands(const FragmentShape& s, std::uint32_t band_rows) {
  if (band_rows == 0 || s.rows % band_rows != 0) return false;
  const std::uint32_t per_band = s.elements_per_lane() / (s.rows / band_rows);
  for (const LaneMap map : {LaneMap::Mma, LaneMap::Simdgroup8x8}) {
    for (std::uint32_t lane = 0; lane < 32; ++lane) {
      for (std::uint32_t slot = 0; slot < s.elements_per_lane(); ++slot) {
        if (fragment_coord(map, s, lane, slot).row / band_rows != slot / per_band) return false;
      }
    }
  }
  return true;
}

}  // namespace iron::ir
