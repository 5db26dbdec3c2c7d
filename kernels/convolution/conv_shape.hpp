/// The shape of a convolution over NHWC images as symbolic sizes, and the implicit GEMM it is:
/// m = batch · oh · ow output pixels, n = c_out / groups output channels and k = kh · kw ·
/// c_in / groups taps a group. conv1d is the shape with h = kh = 1 (an NLC sequence is a batch of
/// images one row high).
#pragma once

#include <iron/iron.hpp>

namespace iron::kernels::convolution {

/// The sizes of a convolution: batch, input height, width and channels, output channels, the
/// kernel's height and width, and stride, padding and dilation along each axis.
struct Shape {
  dsl::Expr<dsl::u32> batch, h, w, c_in, c_out, kh, kw;
  dsl::Expr<dsl::u32> stride_h, stride_w, pad_h, pad_w, dil_h, dil_w, groups;

  /// Output rows and columns: the positions where the dilated kernel lies inside the padded
  /// input.
  dsl::Expr<dsl::u32> oh() const {
    return (h + 2u * pad_h - dil_h * (kh - 1u) - 1u) / stride_h + 1u;
  }
  dsl::Expr<dsl::u32> ow() const {
    return (w + 2u * pad_w - dil_w * (kw - 1u) - 1u) / stride_w + 1u;
  }
  dsl::Expr<dsl::u32> cin_g() const { return c_in / groups; }
  dsl::Expr<dsl::u32> cout_g() const { return c_out / groups; }
};

/// The contract's expressions for the output's height and width of conv2d (over the kernel's
/// constexprs by name).
inline constexpr const char* kOutHeight = "((h + 2 * pad_h - dil_h * (kh - 1) - 1) / stride_h + 1)";
inline constexpr const char* kOutWidth = "((w + 2 * pad_w - dil_w * (kw - 1) - 1) / stride_w + 1)";
/// The output's length of conv1d.
inline constexpr const char* kOutLength =
    "((length + 2 * padding - dilation * (kernel_size - 1) - 1) / stride + 1)";

}  // namespace iron::kernels::convolution
