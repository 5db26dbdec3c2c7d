/// Warpgroup products (docs/tensor-cores.md, "Warpgroup products"): the four simdgroups of a
/// warpgroup multiply a 64×K tile of A by a K×N tile of B, both in shared memory, into a 64×N
/// accumulator of which each simdgroup holds 16 rows. Hopper (sm_90a) runs it as one
/// asynchronous `wgmma`; every other target as each simdgroup's own fragment products.
///
///   FragAcc<16, 256> acc;                        // rows 16·(simdgroup % 4) … of the 64×256
///   warpgroup_mma<64>(acc, tile_a, a0, 64, tile_b, b0, 64);  // B as [n, k] (col_major)
///   warpgroup_commit();
///   warpgroup_wait(0, acc);                      // acc ready, tiles free
///
/// A may instead come from each simdgroup's registers (`warpgroup_mma(acc, a_fragment, tile_b,
/// b0, 64)`: Hopper's register form), and B may be row-major ([k, n]) in either form.
///
/// The product is asynchronous: `acc` may not be read, and the tiles not overwritten, until a
/// warpgroup_wait that leaves its group done; a shared write that the product reads needs
/// fence_async_proxy() by its writer before the barrier that publishes it (a pipelined loop
/// puts one after each wait). The simulator reports each breach.
#pragma once

#include <cstdint>
#include <optional>

#include "iron/dsl/fragments.hpp"

namespace iron::dsl {

namespace detail {
void record_wg_mma(ir::ValueId d, int a_alloc, ir::ValueId a_offset, ir::ValueId a_stride,
                   int b_alloc, ir::ValueId b_offset, ir::ValueId b_stride, ir::ValueId b_panel,
                   MatrixLayout b_layout, std::uint32_t k);
void record_wg_mma_registers(ir::ValueId d, ir::ValueId a, int b_alloc, ir::ValueId b_offset,
                             ir::ValueId b_stride, ir::ValueId b_panel, MatrixLayout b_layout,
                             std::uint32_t k);
void record_wg_commit();
void record_wg_wait(ir::ValueId d, std::int64_t pending);
void record_fence_proxy_async();
void record_wg_turn(ir::TurnStep step, std::uint32_t warpgroups);

/// A row-major B's panel stride as recorded: the one given, else 0 (a B of one panel), located
/// at the call; none for a column-major B.
inline ir::ValueId panel_id(MatrixLayout b_layout, const std::optional<Index>& panel,
                            SourceLocation where) {
  if (b_layout != MatrixLayout::RowMajor) return ir::kNoValue;
  return panel ? panel->id() : Expr<u32>(0u, where).id();
}
}  // namespace detail

/// The columns of K one Hopper instruction takes for operands of T (32 bytes of 8-bit floats, 16
/// of everything else), and the most a product takes (one 128-byte row).
template <Element T>
constexpr std::uint32_t warpgroup_k_step() {
  return lane_bytes<T>() == 1 ? 32 : 16;
}
template <Element T>
constexpr std::uint32_t warpgroup_k_max() {
  return 4 * warpgroup_k_step<T>();
}

/// Starts d += rows 16·(s % 4) … 16·(s % 4) + 15 of A · B for simdgroup s: A row-major, 64×K
/// from a[a_offset] (rows a_stride apart); B K×N from b[b_offset], column-major ((k, n) at
/// b_offset + n·b_stride + k, the layout of a weight [n, k]) or row-major in panels of b_stride
/// columns, b_panel elements apart ((k, n) at b_offset + (n / b_stride)·b_panel + k·b_stride +
/// n % b_stride: a [k, n] tile wider than one 128-byte row, as its TMA boxes land; b_panel is
/// unused where N ≤ b_stride). Every simdgroup of the warpgroup reaches it with the same offsets
/// and strides; K is 16, 32, 48 or 64 (32, 64, 96 or 128 for the 8-bit floats). f16 and bf16
/// operands may run as one Hopper instruction; f32 ones always run as fragment products; 8-bit
/// floats (both operands of one type, B column-major) run only as the Hopper instruction, so
/// another target's path converts them first.
template <std::uint32_t K, Element T, std::uint32_t N>
requires(K % warpgroup_k_step<T>() == 0 && K >= warpgroup_k_step<T>() &&
         K <= warpgroup_k_max<T>() && N % 8 == 0 &&
         N <= 256) void warpgroup_mma(FragAcc<16, N>& d, const Shared<T>& a, detail::Index a_offset,
                                      detail::Index a_stride, const Shared<T>& b,
                                      detail::Index b_offset, detail::Index b_stride,
                                      MatrixLayout b_layout = col_major,
                                      std::optional<detail::Index> b_panel = std::nullopt,
                                      SourceLocation where = SourceLocation::current()) {
  detail::at(where);
  detail::record_wg_mma(d.id(), a.alloc(), a_offset.id(), a_stride.id(), b.alloc(), b_offset.id(),
                        b_stride.id(), detail::panel_id(b_layout, b_panel, where), b_layout, K);
}

/// Starts d += a · B for simdgroup s, its A rows 16·(s % 4) … of the warpgroup's 64×K held in its
/// own registers (an accumulator made an operand by to_a, as attention's weights are): B K×N
/// from b[b_offset], row-major (the layout of values [keys, d]; in panels of b_stride columns
/// b_panel apart, as above) or column-major. `a` may not be written until a warpgroup_wait
/// leaves the group done. f16 and bf16 operands may run as one Hopper instruction per 16
/// columns of K.
template <Element T, std::uint32_t K, std::uint32_t N>
requires(K % 16 == 0 && K >= 16 && K <= 256 && N % 8 == 0 &&
         N <= 256) void warpgroup_mma(FragAcc<16, N>& d, const FragA<T, 16, K>& a,
                                      const Shared<T>& b, detail::Index b_offset,
                                      detail::Index b_stride, MatrixLayout b_layout = row_major,
                                      std::optional<detail::Index> b_panel = std::nullopt,
                                      SourceLocation where = SourceLocation::current()) {
  detail::at(where);
  detail::record_wg_mma_registers(d.id(), a.id(), b.alloc(), b_offset.id(), b_stride.id(),
                                  detail::panel_id(b_layout, b_panel, where), b_layout, K);
}

/// Closes the calling simdgroup's group of started warpgroup products.
inline void warpgroup_commit(SourceLocation where = SourceLocation::current()) {
  detail::at(where);
  detail::record_wg_commit();
}

/// Waits until at most `pending` (0 … 7) of the simdgroup's product groups are unfinished; the
/// products into `d` of the finished groups are then in `d`.
template <std::uint32_t N>
void warpgroup_wait(std::int64_t pending, FragAcc<16, N>& d,
                    SourceLocation where = SourceLocation::current()) {
  detail::at(where);
  detail::record_wg_wait(d.id(), pending);
}

/// Orders the calling thread's earlier shared-memory writes (stores, landed copies) before later
/// reads by warpgroup products: `fence.proxy.async` on Hopper, nothing elsewhere.
inline void fence_async_proxy(SourceLocation where = SourceLocation::current()) {
  detail::at(where);
  detail::record_fence_proxy_async();
}

/// Warpgroups 0 … W-1 take turns (FlashAttention-3's ping-pong): begin_turns<W>() once, then
/// take_turn<W>(f) as often as each needs: a warpgroup waits for its turn (warpgroup 0 first,
/// then 1, …, W-1, then 0 again), runs f and passes the turn on. Products started in one's turn
/// run on the tensor cores while the others do what lies between their turns (a softmax), so
/// their issue alternates instead of colliding. Every thread of the W warpgroups, and no other,
/// reaches each call (so each warpgroup takes as many turns as the others); the simulator
/// reports a breach, which would hang the group on a GPU. Only an order of issue (named barriers
/// on Hopper): it publishes no memory, and targets whose warpgroup products are each simdgroup's
/// fragment products drop it.
template <std::uint32_t W>
requires(W >= 2 && W <= ir::kMaxTurnWarpgroups) void begin_turns(
    SourceLocation where = SourceLocation::current()) {
  detail::at(where);
  detail::record_wg_turn(ir::TurnStep::Begin, W);
}
template <std::uint32_t W, class F>
requires(W >= 2 && W <= ir::kMaxTurnWarpgroups) void take_turn(
    F&& f, SourceLocation where = SourceLocation::current()) {
  detail::at(where);
  detail::record_wg_turn(ir::TurnStep::Wait, W);
  f();
  detail::at(where);
  detail::record_wg_turn(ir::TurnStep::Pass, W);
}

}  // namespace iron::dsl
