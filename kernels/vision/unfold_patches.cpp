/// iron_vision_unfold_patches_p{14,16}: the P×P patches (stride P) of a batch of CHW images as
/// rows, in the order of a conv weight [embed, 3, P, P] flattened:
/// patches[b·N + py·(width / P) + px, (c·P + ky)·P + kx] = image[b, c, py·P + ky, px·P + kx],
/// N = (height / P)·(width / P) patches an image (rows and columns past the last whole patch
/// are left out, as a conv2d of stride P leaves them).
///
/// A vision transformer's patch embedding is then one product with a bias:
/// iron_gemm_bias_nk(a = patches [batch·N, 3·P·P], b = the conv weight viewed as
/// [embed, 3·P·P], bias [embed], m = batch·N, n = embed, k = 3·P·P, alpha = 1) gives
/// [batch·N, embed], which is [batch, N, embed]: conv2d(image, weight, bias, stride=P) with its
/// spatial dimensions flattened and moved last.
///
/// ## Error bound
/// Exact: values of T are copied, no arithmetic.
///
/// ## How it runs
/// One group per patch: its threads stride over the 3·P·P elements of the patch's row, so
/// writes are contiguous; each channel's P rows of P consecutive elements are read, the
/// neighbouring patch reading the rest of each sector. P is a template constant, so the
/// decomposition of a column into (c, ky, kx) is multiplications; the patch's (b, py, px) is
/// found once per thread.
///
/// ## Layout
/// - `image   [batch, 3, height, width]` T
/// - `patches [batch · (height / P) · (width / P), 3 · P · P]` T
///
/// ## Dispatch
/// Reduction: batch · (height / P) · (width / P) groups, tpg a multiple of 32 up to 1024.
#include <iron/iron.hpp>
#include <string>

namespace iron::kernels {
using namespace iron::dsl;

IRON_KERNEL_TEMPLATE(iron_vision_unfold_patches, (u32 P),
                     (Tensor<T> image, Out<T> patches, [[maybe_unused]] Constexpr<u32> batch,
                      Constexpr<u32> height, Constexpr<u32> width)) {
  constexpr u32 kCols = 3 * P * P;
  const std::string p = std::to_string(P);
  const std::string count = "batch * (height / " + p + ") * (width / " + p + ")";
  dispatch(reduction, {multiple_of(32), at_most(1024)});
  grid("[" + count + ", 1, 1]");
  layout(image, "[batch, 3, height, width]");
  layout(patches, "[" + count + ", " + std::to_string(kCols) + "]");
  auto row = program_id<0>();
  auto across = width / P;
  auto per_image = height / P * across;
  auto b = row / per_image;
  auto patch = row % per_image;
  auto top = patch / across * P;
  auto left = patch % across * P;
  for (auto col : range(thread_id<0>(), kCols, group_size<0>())) {
    auto channel = col / (P * P);
    auto ky = col % (P * P) / P;
    auto kx = col % P;
    auto at = ((b * 3u + channel) * height + top + ky) * width + left + kx;
    store(patches[row * kCols + col], load(image[at]));
  }
}

IRON_KERNEL_VARIANT(iron_vision_unfold_patches, p14, 14);
IRON_KERNEL_VARIANT(iron_vision_unfold_patches, p16, 16);

namespace vision {
/// One group per patch, of up to 256 threads (a patch of 14 is 588 elements, of 16 768).
inline Geometry unfold_geometry(const GeometryQuery& q, std::uint64_t p) {
  const auto rows = q.constant("batch") * (q.constant("height") / p) * (q.constant("width") / p);
  return Geometry::per_row(rows, q.threads_per_group(whole_simdgroups(3 * p * p, 256)));
}
}  // namespace vision

IRON_GEOMETRY(iron_vision_unfold_patches_p14) { return vision::unfold_geometry(q, 14); }
IRON_GEOMETRY(iron_vision_unfold_patches_p16) { return vision::unfold_geometry(q, 16); }

}  // namespace iron::kernels

// The tests and benches: compiled into iron_kernel_tests, never into iron_kernels.
#if IRON_KERNEL_TESTS
#include <iron/bench/geometry.hpp>
#include <iron/bench/registry.hpp>
#include <iron/testing/geometry.hpp>
#include <iron/testing/registry.hpp>
#include <vector>

namespace iron::kernels {

namespace {

/// The definition: the patch at (py, px) of image b, channel by channel, row by row, as the
/// weight of a conv2d of kernel and stride p meets it.
std::vector<float> unfold_oracle(const std::vector<float>& image, std::size_t batch,
                                 std::size_t height, std::size_t width, std::size_t p) {
  std::vector<float> rows;
  for (std::size_t b = 0; b < batch; ++b) {
    for (std::size_t py = 0; py + p <= height; py += p) {
      for (std::size_t px = 0; px + p <= width; px += p) {
        for (std::size_t c = 0; c < 3; ++c) {
          for (std::size_t y = py; y < py + p; ++y) {
            for (std::size_t x = px; x < px + p; ++x) {
              rows.push_back(image[((b * 3 + c) * height + y) * width + x]);
            }
          }
        }
      }
    }
  }
  return rows;
}

testing::TestSetup unfold_setup(const std::string& kernel, std::size_t p, std::size_t batch,
                                std::size_t height, std::size_t width, DType dt,
                                testing::Rng& rng) {
  const auto image =
      testing::round_through(rng.uniform(batch * 3 * height * width, -2.0f, 2.0f), dt);
  const auto rows = unfold_oracle(image, batch, height, width, p);
  testing::TestSetup setup(kernel, dt);
  setup.input("image", image)
      .output("patches", rows.size())
      .constant("batch", static_cast<double>(batch))
      .constant("height", static_cast<double>(height))
      .constant("width", static_cast<double>(width))
      .expect("patches", rows)
      .tolerance(testing::tolerance::exact());
  return setup.grid(testing::geometry_grid(setup));
}

/// Bench: the image read once, the patches written once (the same bytes when the size is a
/// multiple of p).
bench::BenchSetup unfold_bench(const std::string& kernel, std::size_t p, std::size_t size,
                               DType dt) {
  const std::size_t batch = 32;
  const std::size_t elements = batch * 3 * size * size;
  bench::BenchSetup setup(kernel, dt);
  setup.random("image", elements)
      .output("patches", elements)
      .constant("batch", static_cast<double>(batch))
      .constant("height", static_cast<double>(size))
      .constant("width", static_cast<double>(size));
  return setup.grid(bench::geometry_grid(setup))
      .bytes_moved(2 * elements * dtype_size(dt))
      .peer("vision_unfold_patches", {{"batch", static_cast<double>(batch)},
                                      {"height", static_cast<double>(size)},
                                      {"width", static_cast<double>(size)},
                                      {"patch", static_cast<double>(p)}});
}

}  // namespace

// Two images of 3×2 patches; a size that is not a multiple of the patch (the remainder is left
// out); a single patch.
IRON_TEST(iron_vision_unfold_patches_p14, two_images_42x28, F32, F16, BF16) {
  return unfold_setup("iron_vision_unfold_patches_p14", 14, 2, 42, 28, dt, rng);
}
IRON_TEST(iron_vision_unfold_patches_p14, ragged_31x45, F32, F16, BF16) {
  return unfold_setup("iron_vision_unfold_patches_p14", 14, 1, 31, 45, dt, rng);
}
IRON_TEST(iron_vision_unfold_patches_p14, single_patch, F32, F16, BF16) {
  return unfold_setup("iron_vision_unfold_patches_p14", 14, 1, 14, 14, dt, rng);
}
IRON_TEST(iron_vision_unfold_patches_p16, two_images_48x32, F32, F16, BF16) {
  return unfold_setup("iron_vision_unfold_patches_p16", 16, 2, 48, 32, dt, rng);
}
IRON_TEST(iron_vision_unfold_patches_p16, ragged_17x33, F32, F16, BF16) {
  return unfold_setup("iron_vision_unfold_patches_p16", 16, 1, 17, 33, dt, rng);
}

// LLaVA's CLIP ViT-L/14 at 336 (576 patches) and ViT-B/16 at 224 (196 patches), 32 images.
IRON_BENCH(iron_vision_unfold_patches_p14, b32_336, F32, BF16) {
  return unfold_bench("iron_vision_unfold_patches_p14", 14, 336, dt);
}
IRON_BENCH(iron_vision_unfold_patches_p16, b32_224, BF16) {
  return unfold_bench("iron_vision_unfold_patches_p16", 16, 224, dt);
}

}  // namespace iron::kernels
#endif  // IRON_KERNEL_TESTS
