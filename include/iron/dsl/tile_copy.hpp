/// Tile copies (docs/tensor-cores.md, "Tile copies"): the group copies a Rows×Cols box of a
/// row-major matrix in a tensor to shared memory, in the background.
///
///   copy_tile_async<128, 64>(tile, slot * 8192u, a, 0u, m, k, row0, p0);
///
/// Inside a pipeline's load block the pipeline waits for the copy; elsewhere async_commit and
/// async_wait do. On Hopper (sm_90a) a copy in a pipeline's load block is one tensor-memory-
/// accelerator copy (TMA) that one thread issues and an mbarrier tracks; everywhere else each
/// thread starts its share of the box as 16-byte copy_async.
#pragma once

#include <array>
#include <cstdint>

#include "iron/dsl/memory.hpp"

namespace iron::dsl {

namespace detail {
void record_copy_tile(int shared, ir::ValueId at, int param, ir::ValueId base, ir::ValueId height,
                      ir::ValueId width, ir::ValueId row0, ir::ValueId col0, std::uint32_t rows,
                      std::uint32_t cols, DType type);
void record_copy_image_tile(int shared, ir::ValueId at, int param,
                            const std::array<ir::ValueId, 5>& extent, ir::ValueId image,
                            ir::ValueId y0, ir::ValueId x0, ir::ValueId c0, std::uint32_t box_h,
                            std::uint32_t box_w, std::uint32_t cols, DType type);
}  // namespace detail

/// Starts copying rows row0 … row0 + Rows - 1 and columns col0 … col0 + Cols - 1 of the matrix
/// of `height` rows of `width` elements that starts at src[base] to dst[at …], Cols elements a
/// row (in the allocation's placement: swizzled rows stay swizzled); elements outside the matrix
/// land as zeros. Every thread of the group reaches it with the same operands. base and width are
/// multiples of the elements of 16 bytes (the simulator reports a copy that is not).
template <std::uint32_t Rows, std::uint32_t Cols, Element T, ir::ParamKind Kind>
requires(Rows >= 1 && Rows <= 256 && Cols >= 1 && Cols <= 256 &&
         Cols * lane_bytes<T>() % 16 ==
             0) void copy_tile_async(const Shared<T>& dst, const Expr<u32>& at,
                                     const TensorParam<T, Kind>& src, const Expr<u32>& base,
                                     const Expr<u32>& height, const Expr<u32>& width,
                                     const Expr<u32>& row0, const Expr<u32>& col0,
                                     SourceLocation where = SourceLocation::current()) {
  detail::at(where);
  detail::record_copy_tile(dst.alloc(), at.id(), src.param(), base.id(), height.id(), width.id(),
                           row0.id(), col0.id(), Rows, Cols, dtype_of<T>);
}

/// The NHWC images an image tile copy reads: `images` images of height × width pixels of
/// `channels` elements each, from src[base].
struct ImageExtent {
  Expr<u32> base;
  Expr<u32> images;
  Expr<u32> height;
  Expr<u32> width;
  Expr<u32> channels;
};

/// Starts copying a BoxH × BoxW box of pixels of image `image`, from pixel row y0 and column x0
/// (either may be negative), channels c0 … c0 + Cols - 1 each, to dst[at …]: BoxH·BoxW rows of
/// Cols elements in (y, x) order, in the allocation's placement; pixels outside the image and
/// channels past `channels` land as zeros (a convolution's padding). Otherwise as
/// copy_tile_async: on Hopper a pipeline's load block makes it one four-dimensional TMA copy.
template <std::uint32_t BoxH, std::uint32_t BoxW, std::uint32_t Cols, Element T, ir::ParamKind Kind>
requires(BoxH >= 1 && BoxW >= 1 && BoxH * BoxW <= 256 && Cols >= 1 && Cols <= 256 &&
         Cols * lane_bytes<T>() % 16 ==
             0) void copy_image_tile_async(const Shared<T>& dst, const Expr<u32>& at,
                                           const TensorParam<T, Kind>& src,
                                           const ImageExtent& extent, const Expr<u32>& image,
                                           const Expr<i32>& y0, const Expr<i32>& x0,
                                           const Expr<u32>& c0,
                                           SourceLocation where = SourceLocation::current()) {
  detail::at(where);
  detail::record_copy_image_tile(dst.alloc(), at.id(), src.param(),
                                 {extent.base.id(), extent.images.id(), extent.height.id(),
                                  extent.width.id(), extent.channels.id()},
                                 image.id(), y0.id(), x0.id(), c0.id(), BoxH, BoxW, Cols,
                                 dtype_of<T>);
}

}  // namespace iron::dsl
