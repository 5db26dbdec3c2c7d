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

#include <cstdint>

#include "iron/dsl/memory.hpp"

namespace iron::dsl {

namespace detail {
void record_copy_tile(int shared, ir::ValueId at, int param, ir::ValueId base, ir::ValueId height,
                      ir::ValueId width, ir::ValueId row0, ir::ValueId col0, std::uint32_t rows,
                      std::uint32_t cols, DType type);
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

}  // namespace iron::dsl
