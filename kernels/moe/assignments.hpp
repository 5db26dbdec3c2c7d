/// The tests' routings and iron_moe_sort's sort from its definition (test-only): each token's
/// top_k distinct experts at random or with the edges the moe tests pin (an expert that every
/// token chooses, one that one token chooses, one that none does), and the counts, offsets and
/// both directions of the permutation that sorting the assignments by expert, stably, gives.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iron/testing/data.hpp>
#include <numeric>
#include <utility>
#include <vector>

namespace iron::kernels {

/// The sort of the assignments i = t·top_k + k by expert, in i order within an expert; an id ≥
/// experts is dropped (rows[i] = n, and sources past the kept assignments are n).
struct SortedAssignments {
  std::vector<std::uint32_t> counts;
  std::vector<std::uint32_t> offsets;
  std::vector<std::uint32_t> rows;
  std::vector<std::uint32_t> sources;
};

inline SortedAssignments sort_oracle(const std::vector<std::uint32_t>& ids, std::size_t experts) {
  const auto n = static_cast<std::uint32_t>(ids.size());
  SortedAssignments s{std::vector<std::uint32_t>(experts, 0),
                      {},
                      std::vector<std::uint32_t>(n, n),
                      std::vector<std::uint32_t>(n, n)};
  for (std::uint32_t id : ids) {
    if (id < experts) ++s.counts[id];
  }
  s.offsets.assign(experts + 1, 0);
  std::partial_sum(s.counts.begin(), s.counts.end(), s.offsets.begin() + 1);
  std::uint32_t row = 0;
  for (std::size_t e = 0; e < experts; ++e) {
    for (std::uint32_t i = 0; i < n; ++i) {
      if (ids[i] != e) continue;
      s.rows[i] = row;
      s.sources[row] = i;
      ++row;
    }
  }
  return s;
}

/// `count` distinct values of `pool`, in random order (a partial Fisher–Yates); pool.size() ≥
/// count.
inline std::vector<std::uint32_t> draw_distinct(std::vector<std::uint32_t> pool, std::size_t count,
                                                testing::Rng& rng) {
  for (std::size_t i = 0; i < count; ++i) {
    const auto left = static_cast<std::uint32_t>(pool.size() - i);
    std::swap(pool[i], pool[i + rng.integers(1, 0, left)[0]]);
  }
  pool.resize(count);
  return pool;
}

/// Each token's top_k distinct experts, uniformly at random: topk_ids [tokens, top_k].
inline std::vector<std::uint32_t> random_routing(std::size_t tokens, std::size_t experts,
                                                 std::size_t top_k, testing::Rng& rng) {
  std::vector<std::uint32_t> all(experts);
  std::iota(all.begin(), all.end(), 0u);
  std::vector<std::uint32_t> ids;
  for (std::size_t t = 0; t < tokens; ++t) {
    const auto picks = draw_distinct(all, top_k, rng);
    ids.insert(ids.end(), picks.begin(), picks.end());
  }
  return ids;
}

/// Expert 0 in every token, expert 1 in token 0 alone (top_k ≥ 2), expert experts − 1 in none;
/// the other picks at random from experts 2 … experts − 2, each token's picks in random order.
/// Needs top_k ≤ experts − 2.
inline std::vector<std::uint32_t> edge_routing(std::size_t tokens, std::size_t experts,
                                               std::size_t top_k, testing::Rng& rng) {
  std::vector<std::uint32_t> middle(experts - 3);
  std::iota(middle.begin(), middle.end(), 2u);
  std::vector<std::uint32_t> ids;
  for (std::size_t t = 0; t < tokens; ++t) {
    std::vector<std::uint32_t> picks{0};
    if (t == 0 && top_k >= 2) picks.push_back(1);
    const auto rest = draw_distinct(middle, top_k - picks.size(), rng);
    picks.insert(picks.end(), rest.begin(), rest.end());
    picks = draw_distinct(picks, top_k, rng);
    ids.insert(ids.end(), picks.begin(), picks.end());
  }
  return ids;
}

/// A fixed routing for the benches, the same every run: each token's experts uniformly at random.
inline std::vector<std::uint32_t> bench_routing(std::size_t tokens, std::size_t experts,
                                                std::size_t top_k) {
  testing::Rng rng(17);
  return random_routing(tokens, experts, top_k, rng);
}

/// u32 values as the test runner compares them.
inline std::vector<float> as_floats(const std::vector<std::uint32_t>& words) {
  return {words.begin(), words.end()};
}

}  // namespace iron::kernels
