/// Sizes and text names of the element types.
#include "iron/core/dtype.hpp"

#include <array>

#include "iron/core/error.hpp"

namespace iron {
namespace {

struct DTypeInfo {
  DType type;
  std::string_view name;
  std::size_t size;
};

// In enum order, so a DType indexes its own entry.
constexpr std::array<DTypeInfo, 11> kDTypes = {{
    {DType::F32, "f32", 4},
    {DType::F16, "f16", 2},
    {DType::BF16, "bf16", 2},
    {DType::I32, "i32", 4},
    {DType::U32, "u32", 4},
    {DType::U8, "u8", 1},
    {DType::I8, "i8", 1},
    {DType::U16, "u16", 2},
    {DType::Bool, "bool", 1},
    {DType::F8E4M3, "f8e4m3", 1},
    {DType::F8E5M2, "f8e5m2", 1},
}};
static_assert(
    [] {
      for (std::size_t i = 0; i < kDTypes.size(); ++i) {
        if (static_cast<std::size_t>(kDTypes[i].type) != i) return false;
      }
      return true;
    }(),
    "kDTypes must list the types in enum order");

const DTypeInfo& info(DType t) { return kDTypes.at(static_cast<std::size_t>(t)); }

}  // namespace

std::size_t dtype_size(DType t) { return info(t).size; }

std::string_view dtype_name(DType t) { return info(t).name; }

std::optional<DType> parse_dtype(std::string_view name) {
  for (const DTypeInfo& d : kDTypes) {
    if (d.name == name) return d.type;
  }
  return std::nullopt;
}

IntegerRange integer_range(DType t) {
  switch (t) {
    case DType::I32:
      return {-2147483648.0, 2147483647.0};
    case DType::U32:
      return {0.0, 4294967295.0};
    case DType::U8:
      return {0.0, 255.0};
    case DType::I8:
      return {-128.0, 127.0};
    case DType::U16:
      return {0.0, 65535.0};
    case DType::Bool:
      return {0.0, 1.0};
    case DType::F32:
    case DType::F16:
    case DType::BF16:
    case DType::F8E4M3:
    case DType::F8E5M2:
      break;
  }
  IRON_INTERNAL_ERROR("integer_range of a float dtype");
}

}  // namespace iron
