/// The work decomposition of split-KV decode (kernels/sdpa/decode.cpp): the group shape, the
/// query-row blocks, and the one choice of how many splits each sequence's keys are cut into.
/// Host code only (no DSL): the kernels' geometry, their tests and benches and any caller use it.
///
/// The split count is a constexpr (`splits`) of both iron_sdpa_decode[_paged] and
/// iron_sdpa_decode_combine[_lse]: the caller picks it once with `splits()` below and passes the
/// same value to both kernels; it also sizes the partial tensors ([…, splits, head_dim] and
/// […, splits]), whose layouts the dispatch guard checks against it, so the combine always merges
/// exactly the splits the decode wrote.
#pragma once

#include <algorithm>
#include <cstdint>

namespace iron::kernels::sdpa_decode {

inline constexpr std::uint32_t kThreads = 128;  ///< threads a group: four simdgroups
inline constexpr std::uint32_t kWarps = kThreads / 32;
inline constexpr std::uint32_t kRows = 4;          ///< query rows a group (a row block)
inline constexpr std::uint32_t kMaxHeadDim = 256;  ///< head_dim ≤ 256, a multiple of 8
/// 8-element vectors of K (and as many of V) a pipeline stage holds: 32 keys of 128.
inline constexpr std::uint32_t kStageVectors = 512;
inline constexpr std::uint32_t kStages = 3;
/// Keys a split holds are a multiple of this (but the last split's, cut by the length).
inline constexpr std::uint32_t kSplitAlign = 16;
/// A split gets at least this many keys of the longest sequence (fewer splits otherwise).
inline constexpr std::uint32_t kMinSplitKeys = 256;
inline constexpr std::uint32_t kMaxSplits = 64;
/// Groups of iron_sdpa_decode a multiprocessor holds at once: a group's ring of kStages stages
/// (61.5 KB of threadgroup memory with its query rows) against a 9.0 multiprocessor's 228 KB.
inline constexpr std::uint32_t kResidentGroups = 3;

/// Whether a launch takes the tile body (decode_tiles.hpp: tensor-core fragments) rather than
/// the lane body: f16 and bf16 at head_dim 64 and 128. The tests' error bounds follow it.
inline bool takes_tiles(bool sixteen_bit, std::uint64_t head_dim) {
  return sixteen_bit && (head_dim == 64 || head_dim == 128);
}

/// Query rows of one KV head: its q_tokens · (heads_q / heads_kv) (token, query head) pairs.
inline std::uint64_t rows_per_kv_head(std::uint64_t q_tokens, std::uint64_t heads_q,
                                      std::uint64_t heads_kv) {
  return q_tokens * (heads_q / std::max<std::uint64_t>(heads_kv, 1));
}

/// The row blocks of kRows rows a KV head's rows take: the groups along x per split.
inline std::uint64_t row_blocks(std::uint64_t q_tokens, std::uint64_t heads_q,
                                std::uint64_t heads_kv) {
  return std::max<std::uint64_t>(
      (rows_per_kv_head(q_tokens, heads_q, heads_kv) + kRows - 1) / kRows, 1);
}

/// How many splits each sequence's keys are cut into, from the cache length (`max_keys`: max_seq,
/// or pages_per_seq · page_size) and the device: the s of at most kMaxSplits, and no split of
/// the longest sequence under kMinSplitKeys keys, that minimizes rounds(s) · (⌈max_keys / s⌉ +
/// kMinSplitKeys). rounds(s) = ⌈batch · heads_kv · blocks · s / resident⌉ counts the rounds of
/// resident groups (a last round that leaves multiprocessors idle costs a whole round: its groups
/// each stream alone), and kMinSplitKeys stands for a group's fixed cost (its query rows, the
/// first stages of its ring). Ties go to fewer splits. bench/NOTES.md §32 has the measurements.
inline std::uint32_t splits(std::uint64_t batch, std::uint64_t heads_kv, std::uint64_t blocks,
                            std::uint64_t max_keys, std::uint32_t multiprocessors) {
  const std::uint64_t per_split = std::max<std::uint64_t>(batch * heads_kv * blocks, 1);
  const std::uint64_t resident =
      std::max<std::uint64_t>(std::uint64_t{kResidentGroups} * multiprocessors, 1);
  const std::uint64_t most =
      std::min<std::uint64_t>(std::max<std::uint64_t>(max_keys / kMinSplitKeys, 1), kMaxSplits);
  std::uint64_t best = 1;
  std::uint64_t best_cost = ~std::uint64_t{0};
  for (std::uint64_t s = 1; s <= most; ++s) {
    const std::uint64_t rounds = (per_split * s + resident - 1) / resident;
    const std::uint64_t cost = rounds * ((max_keys + s - 1) / s + kMinSplitKeys);
    if (cost < best_cost) {
      best = s;
      best_cost = cost;
    }
  }
  return static_cast<std::uint32_t>(best);
}

}  // namespace iron::kernels::sdpa_decode
