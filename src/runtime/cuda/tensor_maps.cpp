/// Tensor maps encoded with cuTensorMapEncodeTiled, cached per buffer and shape.
#include "tensor_maps.hpp"

#include <fmt/format.h>

#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>

#include "iron/core/error.hpp"
#include "iron/core/size_expr.hpp"

namespace iron::runtime::cuda {
namespace {

// CUtensorMapDataType, CUtensorMapSwizzle and CUtensorMapL2promotion values (cuda.h 13.0).
constexpr int kUint8 = 0;
constexpr int kUint16 = 1;
constexpr int kUint32 = 2;
constexpr int kInt32 = 3;
constexpr int kFloat16 = 6;
constexpr int kFloat32 = 7;
constexpr int kBfloat16 = 9;
constexpr int kSwizzle128 = 3;
constexpr int kL2Promotion256 = 3;
constexpr std::uint64_t kAlignment = 16;

int data_type(DType t) {
  switch (t) {
    case DType::F16:
      return kFloat16;
    case DType::BF16:
      return kBfloat16;
    case DType::F32:
      return kFloat32;
    case DType::U32:
      return kUint32;
    case DType::I32:
      return kInt32;
    case DType::U16:
      return kUint16;
    case DType::U8:
    case DType::I8:
    case DType::F8E4M3:
    case DType::F8E5M2:
      return kUint8;  // the copy moves bytes; the product reads them as their type
    case DType::Bool:
      break;
  }
  throw Error(fmt::format("a tensor map of {} elements: TMA copies move numbers, not bools",
                          dtype_name(t)));
}

/// What makes one map: the buffer's address and everything the descriptor holds (an image map's
/// images, image width and box width; 0 for a matrix map).
using Key = std::tuple<CUdeviceptr, int, std::uint64_t, std::uint64_t, std::uint32_t, std::uint32_t,
                       int, std::uint64_t, std::uint64_t, std::uint32_t>;

std::mutex cache_mutex;
std::map<Key, EncodedTensorMap>& cache() {
  static std::map<Key, EncodedTensorMap> maps;
  return maps;
}

std::int64_t value_of(const ir::Kernel& kernel, const std::vector<Arg>& args, const ir::SizeExpr& e,
                      const ir::TensorMap& map, std::string_view what) {
  const ir::SizeValue v = evaluate_for_launch(kernel, args, e);
  if (!v.ok()) {
    throw Error(fmt::format("{}: the {} of the tensor map of '{}' ({}): {}", kernel.name, what,
                            kernel.params.at(static_cast<std::size_t>(map.param)).name,
                            ir::print_size_expr(e), v.error));
  }
  return v.value;
}

}  // namespace

std::vector<EncodedTensorMap> encode_tensor_maps(const ir::Kernel& kernel,
                                                 const std::vector<ir::TensorMap>& maps,
                                                 const std::vector<Arg>& args,
                                                 const std::vector<CUdeviceptr>& addresses) {
  std::vector<EncodedTensorMap> out(maps.size());
  for (std::size_t k = 0; k < maps.size(); ++k) {
    const ir::TensorMap& map = maps[k];
    const auto param = static_cast<std::size_t>(map.param);
    const DType t = kernel.params.at(param).dtype;
    const std::uint64_t size = dtype_size(t);
    const std::int64_t base = value_of(kernel, args, map.base, map, "base");
    const std::int64_t height = value_of(kernel, args, map.height, map, "height");
    const std::int64_t width = value_of(kernel, args, map.width, map, "width");
    if (base < 0 || height < 1 || width < 1) continue;
    const CUdeviceptr address = addresses.at(param) + static_cast<std::uint64_t>(base) * size;
    const std::uint64_t row_bytes = static_cast<std::uint64_t>(width) * size;
    if (address % kAlignment != 0 || row_bytes % kAlignment != 0) continue;
    const int swizzle = map.swizzle != 0 ? kSwizzle128 : 0;
    const bool image = map.box_width != 0;
    const std::int64_t images = image ? value_of(kernel, args, map.images, map, "images") : 0;
    const std::int64_t image_width =
        image ? value_of(kernel, args, map.image_width, map, "image width") : 0;
    if (image && (images < 1 || image_width < 1)) continue;
    const Key key{address,
                  data_type(t),
                  static_cast<std::uint64_t>(height),
                  row_bytes,
                  map.box_rows,
                  map.box_cols,
                  swizzle,
                  static_cast<std::uint64_t>(images),
                  static_cast<std::uint64_t>(image_width),
                  map.box_width};
    const std::lock_guard<std::mutex> lock(cache_mutex);
    const auto found = cache().find(key);
    if (found != cache().end()) {
      out[k] = found->second;
      continue;
    }
    // Innermost first: a matrix's columns and rows; an image's channels, pixel columns, pixel
    // rows and images (the box one image deep).
    const auto w = static_cast<unsigned long long>(image_width);
    const unsigned long long dims[4] = {
        static_cast<unsigned long long>(width), image ? w : static_cast<unsigned long long>(height),
        static_cast<unsigned long long>(height), static_cast<unsigned long long>(images)};
    const unsigned long long strides[3] = {row_bytes, row_bytes * w, row_bytes * w * dims[2]};
    const unsigned int box[4] = {map.box_cols, image ? map.box_width : map.box_rows,
                                 image ? map.box_rows / map.box_width : 1, 1};
    const unsigned int element_strides[4] = {1, 1, 1, 1};
    EncodedTensorMap encoded;
    const Driver& d = driver();
    d.check(d.api().tensor_map_encode_tiled(
                encoded.opaque.data(), data_type(t), image ? 4 : 2,
                // NOLINTNEXTLINE(performance-no-int-to-ptr): the API takes a pointer
                reinterpret_cast<void*>(address), dims, strides, box, element_strides, 0, swizzle,
                kL2Promotion256, 0),
            "cuTensorMapEncodeTiled",
            fmt::format("{}'s tensor map of '{}'", kernel.name, kernel.params.at(param).name));
    cache().emplace(key, encoded);
    out[k] = encoded;
  }
  return out;
}

}  // namespace iron::runtime::cuda
