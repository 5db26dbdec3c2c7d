/// copy.tensor and mbar.* on sm_90a (docs/tensor-cores.md, "Tile copies"). A tensor map is a
/// 128-byte kernel parameter passed by value (`const __grid_constant__`), so the copy reads it
/// from the parameter space; the launcher encodes it (cuTensorMapEncodeTiled). The copy lands
/// its box in shared memory and completes the mbarrier's transaction of its bytes; a wait spins
/// on `mbarrier.try_wait.parity` until the phase of the given parity has completed.
#include "cuda_tensor_copies.hpp"

#include <fmt/format.h>

#include "cuda_dialect.hpp"
#include "iron/core/error.hpp"

namespace iron::codegen::cuda {

const std::vector<c_like::Helper>& tensor_copy_helpers() {
  static const std::vector<c_like::Helper> all = {
      {"iron_tensor_map",
       {},
       R"(// A tensor map (CUtensorMap): 128 opaque bytes the launcher encodes.
struct alignas(64) iron_tensor_map {
  unsigned long long opaque[16];
};
)"},
      {"iron_tensor_copy",
       {"iron_tensor_map"},
       R"(// Starts the TMA copy of the box at (row, col) of `map` to `dst`, completing `bar`'s bytes.
__device__ __forceinline__ void iron_tensor_copy(void* dst, const iron_tensor_map& map,
                                                 unsigned int row, unsigned int col,
                                                 unsigned int* bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%2, %3}], [%4];"
      :
      : "r"(static_cast<unsigned int>(__cvta_generic_to_shared(dst))),
        "l"(reinterpret_cast<unsigned long long>(&map)), "r"(col), "r"(row),
        "r"(static_cast<unsigned int>(__cvta_generic_to_shared(bar)))
      : "memory");
}
)"},
      {"iron_image_copy",
       {"iron_tensor_map"},
       R"(// Starts the TMA copy of the box of an image map (NHWC: channels, x, y, image innermost
// first) at pixel (y, x) of image n from channel c, completing `bar`'s bytes; y and x may be
// negative (pixels outside the image land as zeros).
__device__ __forceinline__ void iron_image_copy(void* dst, const iron_tensor_map& map,
                                                unsigned int n, int y, int x, unsigned int c,
                                                unsigned int* bar) {
  asm volatile(
      "cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%2, %3, %4, %5}], [%6];"
      :
      : "r"(static_cast<unsigned int>(__cvta_generic_to_shared(dst))),
        "l"(reinterpret_cast<unsigned long long>(&map)), "r"(c), "r"(x), "r"(y), "r"(n),
        "r"(static_cast<unsigned int>(__cvta_generic_to_shared(bar)))
      : "memory");
}
)"},
      {"iron_mbarrier",
       {},
       R"(// mbarrier operations on the 8 bytes at `bar` (two words of a u32 allocation) in shared memory.
__device__ __forceinline__ unsigned int iron_mbarrier_address(unsigned int* bar) {
  return static_cast<unsigned int>(__cvta_generic_to_shared(bar));
}
__device__ __forceinline__ void iron_mbarrier_init(unsigned int* bar, unsigned int count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(iron_mbarrier_address(bar)),
               "r"(count)
               : "memory");
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}
__device__ __forceinline__ void iron_mbarrier_expect(unsigned int* bar, unsigned int bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(
                   iron_mbarrier_address(bar)),
               "r"(bytes)
               : "memory");
}
__device__ __forceinline__ void iron_mbarrier_wait(unsigned int* bar, unsigned int parity) {
  unsigned int done = 0;
  do {
    asm volatile(
        "{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
        "selp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(iron_mbarrier_address(bar)), "r"(parity)
        : "memory");
  } while (done == 0);
}
// One arrival for the calling simdgroup, once every lane's earlier shared-memory accesses are done.
__device__ __forceinline__ void iron_mbarrier_arrive_simdgroup(unsigned int* bar) {
  __syncwarp();
  unsigned int lane;
  asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));
  if (lane == 0) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(iron_mbarrier_address(bar))
                 : "memory");
  }
}
__device__ __forceinline__ void iron_mbarrier_inval(unsigned int* bar) {
  asm volatile("mbarrier.inval.shared::cta.b64 [%0];" ::"r"(iron_mbarrier_address(bar))
               : "memory");
}
)"},
  };
  return all;
}

std::string tensor_map_name(std::size_t k) { return fmt::format("iron_tensor_map{}", k); }

std::string tensor_map_param(std::size_t k) {
  return "const __grid_constant__ iron_tensor_map " + tensor_map_name(k);
}

std::string tensor_copy(const std::string& dst, std::size_t map,
                        const std::vector<std::string>& coordinates, const std::string& bar,
                        c_like::Needs& needs) {
  if (coordinates.size() == 4) {  // row0, col0, image, x0 of an image map
    needs.helpers.insert("iron_image_copy");
    return fmt::format("iron_image_copy({}, {}, {}, {}, {}, {}, {});", dst, tensor_map_name(map),
                       coordinates[2], coordinates[0], coordinates[3], coordinates[1], bar);
  }
  IRON_INTERNAL_ASSERT(coordinates.size() == 2, "copy.tensor of a matrix map at (row0, col0)");
  needs.helpers.insert("iron_tensor_copy");
  return fmt::format("iron_tensor_copy({}, {}, {}, {}, {});", dst, tensor_map_name(map),
                     coordinates[0], coordinates[1], bar);
}

std::string mbarrier(ir::OpKind kind, const std::string& bar, std::int64_t count,
                     const std::string& parity, c_like::Needs& needs) {
  needs.helpers.insert("iron_mbarrier");
  if (kind == ir::OpKind::MbarInit) return fmt::format("iron_mbarrier_init({}, {}u);", bar, count);
  if (kind == ir::OpKind::MbarExpect) {
    return fmt::format("iron_mbarrier_expect({}, {}u);", bar, count);
  }
  if (kind == ir::OpKind::MbarWait) return fmt::format("iron_mbarrier_wait({}, {});", bar, parity);
  if (kind == ir::OpKind::MbarArrive)
    return fmt::format("iron_mbarrier_arrive_simdgroup({});", bar);
  IRON_INTERNAL_ASSERT(kind == ir::OpKind::MbarInval, "mbarrier() of an op that is not mbar.*");
  return fmt::format("iron_mbarrier_inval({});", bar);
}

std::string CudaDialect::tensor_map_param(std::size_t k) const { return cuda::tensor_map_param(k); }
std::string CudaDialect::tensor_map_name(std::size_t k) const { return cuda::tensor_map_name(k); }
std::string CudaDialect::tensor_copy(const std::string& dst, std::size_t map,
                                     const std::vector<std::string>& coordinates,
                                     const std::string& bar, c_like::Needs& needs) const {
  return cuda::tensor_copy(dst, map, coordinates, bar, needs);
}
std::string CudaDialect::mbarrier(ir::OpKind kind, const std::string& bar, std::int64_t count,
                                  const std::string& parity, c_like::Needs& needs) const {
  return cuda::mbarrier(kind, bar, count, parity, needs);
}

}  // namespace iron::codegen::cuda
