/// Names of fragment roles, matrix layouts and row reductions in the text IR, and of lane maps.
#include "iron/core/fragment.hpp"

#include <array>

namespace iron::ir {
namespace {

constexpr std::array<std::string_view, 3> kRoleNames = {"a", "b", "acc"};
constexpr std::array<std::string_view, 2> kLayoutNames = {"row", "col"};
constexpr std::array<std::string_view, 2> kReductionNames = {"max", "sum"};

}  // namespace

std::string_view fragment_role_name(FragmentRole r) {
  return kRoleNames[static_cast<std::size_t>(r)];
}

std::optional<FragmentRole> parse_fragment_role(std::string_view name) {
  for (std::size_t i = 0; i < kRoleNames.size(); ++i) {
    if (kRoleNames[i] == name) return static_cast<FragmentRole>(i);
  }
  return std::nullopt;
}

std::string_view matrix_layout_name(MatrixLayout l) {
  return kLayoutNames[static_cast<std::size_t>(l)];
}

std::optional<MatrixLayout> parse_matrix_layout(std::string_view name) {
  for (std::size_t i = 0; i < kLayoutNames.size(); ++i) {
    if (kLayoutNames[i] == name) return static_cast<MatrixLayout>(i);
  }
  return std::nullopt;
}

std::string_view row_reduction_name(RowReduction r) {
  return kReductionNames[static_cast<std::size_t>(r)];
}

std::optional<RowReduction> parse_row_reduction(std::string_view name) {
  for (std::size_t i = 0; i < kReductionNames.size(); ++i) {
    if (kReductionNames[i] == name) return static_cast<RowReduction>(i);
  }
  return std::nullopt;
}

std::string_view lane_map_name(LaneMap m) {
  return m == LaneMap::Mma ? "m16n8k16 (CUDA)" : "8x8 simdgroup matrices (Metal)";
}

}  // namespace iron::ir
