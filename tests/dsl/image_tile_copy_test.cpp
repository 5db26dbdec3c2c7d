/// Image tile copies (docs/tensor-cores.md, "Tile copies"): boxes of pixels of an NHWC image at
/// coordinates that may leave the image land with zeros outside it and feed a product, the same
/// on the simulator's two paths (each thread's 16-byte copies and fragment products, and
/// sm_90a's four-dimensional TMA ring and warpgroup products); Hopper's source issues the 4-d
/// TMA copy, other targets the threads' copies.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "../codegen/checks_test_support.hpp"
#include "../sim/sim_helpers.hpp"
#include "iron/codegen/compile.hpp"
#include "iron/iron.hpp"
#include "iron/runtime/device.hpp"

namespace {
using namespace iron::dsl;
using iron::DType;
namespace ir = iron::ir;
namespace sim_test = iron::sim_test;
using iron::codegen::MmaStrategy;
using iron::codegen::TargetProfile;

constexpr std::uint32_t kBoxH = 8;
constexpr std::uint32_t kBoxW = 8;
constexpr std::uint32_t kRow = 64;  // elements of a 128-byte row of 16-bit values; box rows
constexpr std::uint32_t kStage = kBoxH * kBoxW * kRow;
constexpr std::uint32_t kSteps = 6;

constexpr std::int64_t kImages = 2;
constexpr std::int64_t kHeight = 9;
constexpr std::int64_t kWidth = 10;
constexpr std::int64_t kChannels = 2 * kRow;

/// Step s's box: image s % images, from pixel (s / 2 · 4 − 3, s % 3 · 5 − 2) (above and left of
/// the image, inside it and past its bottom and right edges), channels from (s % 2) · 64.
struct Place {
  std::int64_t image, y0, x0, c0;
};
Place place_of(std::int64_t s) { return {s % kImages, s / 2 * 4 - 3, s % 3 * 5 - 2, s % 2 * 64}; }

// out [64, 64] = Σ_s box_s · w_sᵀ, box_s step s's 8 × 8 pixels × 64 channels of x [images, h, w,
// c] and w_s rows s·64 … of w [steps · 64, 64]: one tap of a convolution a step, each box copied
// by an image copy in a pipeline's load block (so sm_90a makes it a 4-d TMA copy) and multiplied
// by the warpgroup product.
IRON_KERNEL(image_box_product, (Tensor<T> x, Tensor<T> w, Out<f32> out, Constexpr<u32> images,
                                Constexpr<u32> h, Constexpr<u32> width, Constexpr<u32> c)) {
  dispatch(tiled, {exactly(128)});
  auto tile_a = ring<T>(kStage, Swizzled{kRow});
  auto tile_b = ring<T>(kRow * kRow, Swizzled{kRow});
  const ImageExtent extent{Expr<u32>(0u), images, h, width, c};
  FragAcc<16, kRow> acc;
  pipelined(
      0u, kSteps, 1u, 2,
      [&](const Expr<u32>& s, const Expr<u32>& slot) {
        auto y0 = cast<i32>(s / 2u * 4u) - Expr<i32>(3);
        auto x0 = cast<i32>(s % 3u * 5u) - Expr<i32>(2);
        copy_image_tile_async<kBoxH, kBoxW, kRow>(tile_a, slot * kStage, x, extent, s % images, y0,
                                                  x0, s % 2u * kRow);
        copy_tile_async<kRow, kRow>(tile_b, slot * (kRow * kRow), w, 0u, kSteps * kRow, kRow,
                                    s * kRow, 0u);
      },
      [&](const Expr<u32>&, const Expr<u32>& slot) {
        warpgroup_mma<kRow>(acc, tile_a, slot * kStage, kRow, tile_b, slot * (kRow * kRow), kRow);
        warpgroup_commit();
        warpgroup_wait(0, acc);
      });
  auto row0 = simdgroup_id() * 16u;
  for (std::uint32_t e = 0; e < FragAcc<16, kRow>::elements; ++e) {
    store(out[(row0 + acc.row(e)) * kRow + acc.col(e)], acc.get(e));
  }
}

std::vector<double> small_integers(std::size_t n, int period, int offset) {
  std::vector<double> v(n);
  for (std::size_t i = 0; i < n; ++i)
    v[i] = static_cast<double>(static_cast<int>(i % period) - offset);
  return v;
}
std::vector<double> image_values() {
  return small_integers(kImages * kHeight * kWidth * kChannels, 7, 3);
}
std::vector<double> weight_values() {
  return small_integers(std::size_t{kSteps} * kRow * kRow, 5, 2);
}

/// The product from the coordinates alone, pixels outside the image counting zero.
std::vector<double> expected_product(const std::vector<double>& x, const std::vector<double>& w) {
  std::vector<double> want(std::size_t{kRow} * kRow, 0.0);
  for (std::int64_t s = 0; s < kSteps; ++s) {
    const Place p = place_of(s);
    for (std::int64_t r = 0; r < kRow; ++r) {
      const std::int64_t y = p.y0 + r / kBoxW;
      const std::int64_t px = p.x0 + r % kBoxW;
      if (y < 0 || y >= kHeight || px < 0 || px >= kWidth) continue;
      for (std::int64_t n = 0; n < kRow; ++n) {
        for (std::int64_t c = 0; c < kRow; ++c) {
          want[r * kRow + n] += x[((p.image * kHeight + y) * kWidth + px) * kChannels + p.c0 + c] *
                                w[(s * kRow + n) * kRow + c];
        }
      }
    }
  }
  return want;
}

/// The product the simulator computes on the path `products` names (sm_90a's TMA ring and
/// warpgroup products, or the threads' copies and fragment products), and how many copy.tensor
/// ops that path runs.
std::pair<std::vector<double>, std::size_t> simulate(bool products) {
  const ir::Kernel k = kernel_ir_for("image_box_product", DType::BF16);
  iron::runtime::HostTensor x = sim_test::make_tensor(DType::BF16, image_values());
  iron::runtime::HostTensor w = sim_test::make_tensor(DType::BF16, weight_values());
  iron::runtime::HostTensor out = sim_test::zeros(DType::F32, std::size_t{kRow} * kRow);
  const std::vector<iron::runtime::Arg> args = {&x,
                                                &w,
                                                &out,
                                                sim_test::scalar(DType::U32, kImages),
                                                sim_test::scalar(DType::U32, kHeight),
                                                sim_test::scalar(DType::U32, kWidth),
                                                sim_test::scalar(DType::U32, kChannels)};
  iron::runtime::SimOptions options;
  options.warpgroup_products = products;
  options.compare_target_paths = false;
  const iron::runtime::Grid grid{{1, 1, 1}, {128, 1, 1}};
  const auto found = sim_test::finding(k, args, grid, options);
  EXPECT_FALSE(found.has_value()) << found->what();
  const ir::Kernel lowered = iron::runtime::simulated_kernel({&k, args, grid}, options);
  std::size_t tensor_copies = 0;
  ir::walk(lowered.body,
           [&](const ir::Op& op) { tensor_copies += op.kind == ir::OpKind::CopyTensor ? 1 : 0; });
  return {sim_test::read_tensor(out), tensor_copies};
}

TEST(ImageTileCopy, ThreadsCopiesLandTheBoxesWithZerosOutsideTheImage) {
  const auto [got, tensor_copies] = simulate(false);
  EXPECT_EQ(tensor_copies, 0u);
  EXPECT_EQ(got, expected_product(image_values(), weight_values()));
}

TEST(ImageTileCopy, Sm90asTmaRingLandsTheSameBoxes) {
  const auto [got, tensor_copies] = simulate(true);
  EXPECT_GT(tensor_copies, 0u);
  EXPECT_EQ(got, expected_product(image_values(), weight_values()));
}

TEST(ImageTileCopy, HopperIssuesA4dTensorCopyAndOtherTargetsTheThreadsCopies) {
  const ir::Kernel k = kernel_ir_for("image_box_product", DType::BF16);
  const auto hopper = iron::codegen::compile_kernel(k, TargetProfile::cuda(90, MmaStrategy::Wgmma));
  EXPECT_NE(hopper.source.find("iron_image_copy("), std::string::npos) << hopper.source;
  EXPECT_NE(hopper.source.find("cp.async.bulk.tensor.4d"), std::string::npos);
  ASSERT_EQ(hopper.lowered.tensor_maps.size(), 2u);  // the image's and the weight's
  EXPECT_EQ(hopper.lowered.tensor_maps[0].box_width, kBoxW);
  EXPECT_EQ(hopper.lowered.tensor_maps[1].box_width, 0u);
  for (const TargetProfile& t : {TargetProfile::cuda(90), TargetProfile::metal(31)}) {
    const auto c = iron::codegen::compile_kernel(k, t);
    EXPECT_EQ(c.source.find("iron_image_copy"), std::string::npos) << t.name;
    EXPECT_TRUE(c.lowered.tensor_maps.empty()) << t.name;
  }
}

TEST(ImageTileCopy, HoppersSourceCompilesForSm90a) {
  IRON_REQUIRE_NVRTC();
  const ir::Kernel k = kernel_ir_for("image_box_product", DType::BF16);
  const auto hopper = iron::codegen::compile_kernel(k, TargetProfile::cuda(90, MmaStrategy::Wgmma));
  const auto cubin = iron::runtime::compile_cubin(hopper.source, hopper.symbol, 90,
                                                  /*arch_specific=*/true);
  EXPECT_FALSE(cubin.cubin.empty());
  EXPECT_TRUE(cubin.log.empty()) << cubin.log;
}

/// A device tensor holding `h`'s bytes.
iron::runtime::DeviceTensor on_device(const iron::runtime::HostTensor& h) {
  auto t = iron::runtime::DeviceTensor::allocate(h.dtype, h.count());
  t.upload(h.bytes);
  return t;
}

TEST(ImageTileCopyGpu, TheDevicesPathLandsTheSameBoxes) {
  if (!iron::runtime::cuda_available()) {
    GTEST_SKIP() << "no CUDA: " << iron::runtime::cuda_unavailable_reason();
  }
  const ir::Kernel k = kernel_ir_for("image_box_product", DType::BF16);
  const auto x = on_device(sim_test::make_tensor(DType::BF16, image_values()));
  const auto w = on_device(sim_test::make_tensor(DType::BF16, weight_values()));
  const std::vector<double> poison(std::size_t{kRow} * kRow, -12345.0);
  const auto out = on_device(sim_test::make_tensor(DType::F32, poison));
  const auto stream = iron::runtime::Stream::borrow(nullptr);
  iron::runtime::launch_async(
      k,
      {&x, &w, &out, sim_test::scalar(DType::U32, kImages), sim_test::scalar(DType::U32, kHeight),
       sim_test::scalar(DType::U32, kWidth), sim_test::scalar(DType::U32, kChannels)},
      {{1, 1, 1}, {128, 1, 1}}, stream);
  stream.synchronize();
  std::vector<float> got(std::size_t{kRow} * kRow);
  out.download(std::as_writable_bytes(std::span(got)));
  const std::vector<double> want = expected_product(image_values(), weight_values());
  for (std::size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], want[i]) << "element " << i;
}

}  // namespace
