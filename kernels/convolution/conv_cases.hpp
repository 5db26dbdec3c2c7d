/// The convolution family's test and bench shapes (test code only): a convolution's sizes as the
/// kernels' constexprs and as the dims of the `conv2d` / `conv1d` peers (bench/peer_ops.py).
#pragma once

#include <cstddef>
#include <map>
#include <string>

#include "conv_oracle.hpp"

namespace iron::kernels::convolution {

/// A square conv2d: batch, size × size × c_in → c_out, a k × k kernel.
inline Sizes square(std::size_t batch, std::size_t size, std::size_t c_in, std::size_t c_out,
                    std::size_t k, std::size_t stride, std::size_t pad, std::size_t dil = 1,
                    std::size_t groups = 1) {
  return {batch, size, size, c_in, c_out, k, k, stride, stride, pad, pad, dil, dil, groups};
}

/// A conv1d: batch, length × c_in → c_out, a kernel of `k` (an image one row high).
inline Sizes line(std::size_t batch, std::size_t length, std::size_t c_in, std::size_t c_out,
                  std::size_t k, std::size_t stride, std::size_t pad, std::size_t dil = 1,
                  std::size_t groups = 1) {
  return {batch, 1, length, c_in, c_out, 1, k, 1, stride, 0, pad, 1, dil, groups};
}

/// The constexprs of iron_conv2d's forms (with `groups` when `grouped`), or of iron_conv1d when
/// `one_d`.
template <class Setup>
void set_constants(Setup& setup, const Sizes& s, bool one_d, bool grouped = true) {
  const auto c = [&](const char* name, std::size_t v) {
    setup.constant(name, static_cast<double>(v));
  };
  c("batch", s.batch);
  c("c_in", s.c_in);
  c("c_out", s.c_out);
  if (grouped) c("group_count", s.groups);
  if (one_d) {
    c("length", s.w);
    c("kernel_size", s.kw);
    c("stride", s.stride_w);
    c("padding", s.pad_w);
    c("dilation", s.dil_w);
    return;
  }
  c("h", s.h);
  c("w", s.w);
  c("kh", s.kh);
  c("kw", s.kw);
  c("stride_h", s.stride_h);
  c("stride_w", s.stride_w);
  c("pad_h", s.pad_h);
  c("pad_w", s.pad_w);
  c("dil_h", s.dil_h);
  c("dil_w", s.dil_w);
}

/// The dims of the conv2d and conv1d peers (square strides, padding and dilation).
inline std::map<std::string, double> peer_dims(const Sizes& s) {
  const auto v = [](std::size_t x) { return static_cast<double>(x); };
  return {
      {"batch", v(s.batch)}, {"h", v(s.h)},       {"w", v(s.w)},          {"c_in", v(s.c_in)},
      {"c_out", v(s.c_out)}, {"kh", v(s.kh)},     {"kw", v(s.kw)},        {"stride", v(s.stride_w)},
      {"pad", v(s.pad_w)},   {"dil", v(s.dil_w)}, {"groups", v(s.groups)}};
}

/// The multiply-adds of a convolution, twice.
inline std::size_t flops(const Sizes& s) {
  return 2 * s.batch * s.oh() * s.ow() * s.c_out * s.taps();
}

}  // namespace iron::kernels::convolution
