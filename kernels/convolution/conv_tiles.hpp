/// The product every implicit-GEMM convolution form shares: group g's tile of im2col(x) ·
/// weightᵀ (kernels/convolution/im2col_a.hpp) on gemm::product_from's tensor-core tiles, each
/// sum turned into its output by the form's value(channel, sum) and written to out as T.
#pragma once

#include <cstdint>
#include <iron/iron.hpp>
#include <string>
#include <type_traits>

#include "../gemm/gemm_tiles.hpp"
#include "conv_shape.hpp"
#include "im2col_a.hpp"
#include "image_product.hpp"
#include "narrow_groups.hpp"
#include "pointwise.hpp"

namespace iron::kernels::convolution {

/// The dispatch every implicit-GEMM form declares: gemm's kThreads threads, a group per
/// kBM × kBN tile of one group's output (pixels × channels), the convolution's groups along z.
/// `pixels` and `channels` are contract expressions (batch · oh · ow and c_out / groups).
inline void declare_tiles(const std::string& pixels, const std::string& channels,
                          const std::string& groups) {
  using namespace iron::dsl;
  dispatch(tiled, {exactly(gemm::kThreads)});
  grid("[ceil_div(" + channels + ", " + std::to_string(gemm::kBN) + "), ceil_div(" + pixels + ", " +
       std::to_string(gemm::kBM) + "), " + groups + "]");
}

/// Declares a dense conv2d form's dispatch and grid over its constexprs: the pointwise path's
/// (requiring a plain 1×1 of every launch) or the image path's (requiring stride 1 and one
/// group) where this trace takes it, else declare_tiles'.
template <class T>
void declare_dense_conv2d(const dsl::Constexpr<dsl::u32>& c_in, const dsl::Constexpr<dsl::u32>& kh,
                          const dsl::Constexpr<dsl::u32>& kw,
                          const dsl::Constexpr<dsl::u32>& stride_h,
                          const dsl::Constexpr<dsl::u32>& stride_w,
                          const dsl::Constexpr<dsl::u32>& pad_h,
                          const dsl::Constexpr<dsl::u32>& pad_w,
                          const dsl::Constexpr<dsl::u32>& group_count) {
  if (pointwise<T>()) {
    declare_pointwise<T>("batch * h * w", c_in, {kh, kw, stride_h, stride_w, group_count},
                         {pad_h, pad_w});
  } else if (image_path<T>()) {
    declare_image(kOutHeight, kOutWidth, c_in, {stride_h, stride_w, group_count});
  } else {
    declare_tiles("batch * " + std::string(kOutHeight) + " * " + kOutWidth, "c_out / group_count",
                  "group_count");
  }
}

/// The launch: a group per tile of m pixels × n channels of each of `groups`.
inline dsl::Geometry tile_geometry(std::uint64_t pixels, std::uint64_t channels,
                                   std::uint64_t groups) {
  return {{dsl::tile_count(channels, gemm::kBN), dsl::tile_count(pixels, gemm::kBM),
           static_cast<std::uint32_t>(groups)},
          {gemm::kThreads, 1, 1}};
}

/// The output's height or width for an input `size` with the kernel `kernel` (padding, dilation,
/// stride along the axis).
inline std::uint64_t out_span(std::uint64_t size, std::uint64_t pad, std::uint64_t dil,
                              std::uint64_t kernel, std::uint64_t stride) {
  return (size + 2 * pad - dil * (kernel - 1) - 1) / stride + 1;
}

/// The launch of iron_conv2d's forms (`groups` 1 where the form has none): a group per tile of
/// each group's pixels × channels.
inline dsl::Geometry conv2d_geometry(const dsl::GeometryQuery& q, bool grouped = true) {
  const auto oh = out_span(q.constant("h"), q.constant("pad_h"), q.constant("dil_h"),
                           q.constant("kh"), q.constant("stride_h"));
  const auto ow = out_span(q.constant("w"), q.constant("pad_w"), q.constant("dil_w"),
                           q.constant("kw"), q.constant("stride_w"));
  const std::uint64_t groups = grouped ? q.constant("group_count") : 1;
  return tile_geometry(q.constant("batch") * oh * ow, q.constant("c_out") / groups, groups);
}

/// The launch of a dense conv2d form: the pointwise or image path's where its knob is on, else
/// conv2d_geometry's.
inline dsl::Geometry dense_conv2d_geometry(const dsl::GeometryQuery& q) {
  const auto pixels = q.constant("batch") * q.constant("h") * q.constant("w");
  if (auto pointwise = pointwise_geometry(q, pixels)) return *pointwise;
  const auto oh = out_span(q.constant("h"), q.constant("pad_h"), q.constant("dil_h"),
                           q.constant("kh"), q.constant("stride_h"));
  const auto ow = out_span(q.constant("w"), q.constant("pad_w"), q.constant("dil_w"),
                           q.constant("kw"), q.constant("stride_w"));
  return image_geometry(q, oh, ow).value_or(conv2d_geometry(q));
}

/// The launch of iron_conv1d: a sequence is an image one row high; the pointwise path's where
/// the knob is on.
inline dsl::Geometry conv1d_geometry(const dsl::GeometryQuery& q) {
  if (auto pointwise = pointwise_geometry(q, q.constant("batch") * q.constant("length"))) {
    return *pointwise;
  }
  const auto ol = out_span(q.constant("length"), q.constant("padding"), q.constant("dilation"),
                           q.constant("kernel_size"), q.constant("stride"));
  if (auto image = image_geometry(q, 1, ol)) return *image;
  const auto groups = q.constant("group_count");
  return tile_geometry(q.constant("batch") * ol, q.constant("c_out") / groups, groups);
}

/// This group's tile of convolution group g = program_id<2>(): the weight rows of the group from
/// make_b(g, n, k) (a b source of [n, k] rows), each output element inside out written as
/// value(channel, sum) rounded to T (channel counted across all groups).
template <class T, class MakeB, class Value>
void conv_product(const dsl::Tensor<T>& x, const dsl::Out<T>& out, const Shape& s, MakeB&& make_b,
                  Value&& value) {
  using namespace iron::dsl;
  auto g = program_id<2>();
  auto n = s.cout_g();
  auto cin_g = s.cin_g();
  auto k = s.kh * s.kw * cin_g;
  auto m = s.batch * s.oh() * s.ow();
  const auto [row0, col0] = gemm::banded_tile(gemm::kBM, gemm::kBN);
  const auto bsrc = make_b(g, n, k);
  constexpr std::uint32_t kCols =
      gemm::step_k<T, std::remove_cvref_t<decltype(bsrc)>::wide_steps>();
  auto first = g * n;
  gemm::product_from(
      make_im2col_a<T, kCols>(x, s, g * cin_g, row0, m), bsrc, m, n, k, row0, col0,
      [&](const Expr<u32>& r, const Expr<u32>& c, const Expr<f32>& sum) {
        store(out[r * s.c_out + first + c], cast<T>(value(first + c, sum)));
      },
      n % 8u == 0u && s.c_out % 8u == 0u);  // out's rows whole 16-byte runs
}

/// conv_product with a plain weight [c_out, kh, kw, cin_g]: group g's rows as gemm's [n, k]
/// DenseB; narrow groups (narrow_groups.hpp) on their own body, a launch's module holding one;
/// a trace for the pointwise or image path (pointwise.hpp, image_product.hpp) the warpgroup
/// product.
template <class T, class Value>
void dense_product(const dsl::Tensor<T>& x, const dsl::Tensor<T>& weight, const dsl::Out<T>& out,
                   const Shape& s, Value&& value) {
  using namespace iron::dsl;
  if (pointwise<T>()) {
    pointwise_product(x, weight, out, s.batch * s.h * s.w, s, value);
    return;
  }
  if (image_path<T>()) {
    image_product(x, weight, out, s, value);
    return;
  }
  // The tiled body is the usual side (specializations bind true as usual).
  IRON_IF(specialized(!narrow_groups<T>(s))) {
    conv_product(
        x, out, s,
        [&](const Expr<u32>& g, const Expr<u32>& n, const Expr<u32>& k) {
          return gemm::DenseB<T, col_major>{weight, g * n * k, n * k};
        },
        value);
  }
  IRON_ELSE { narrow_group_product(x, weight, out, s, value); }
}

}  // namespace iron::kernels::convolution
