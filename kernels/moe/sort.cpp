/// iron_moe_sort: the (token, k) assignments of topk_ids sorted by expert, stably: each expert's
/// token count, where its rows start in expert-contiguous order, and the permutation both ways.
///
/// ## What it computes
/// Assignment i = t·top_k + k goes to expert topk_ids[t, k]; an id ≥ experts goes nowhere (it is
/// dropped: the router's picks past the experts, or a caller's mask such as 0xFFFFFFFF). With
/// n = tokens·top_k:
/// - `counts[e]`: the assignments to expert e;
/// - `offsets[e]` = Σ_{e' < e} counts[e'], and `offsets[experts]` the assignments kept;
/// - `rows[t, k]`: offsets[e] plus the number of assignments to e before i, so an expert's rows
///   are in token order, then k order; n for a dropped assignment;
/// - `sources[r]`: the assignment i whose row is r, for r < offsets[experts]; n past it.
/// rows and sources are inverse permutations of the kept assignments: iron_moe_permute gathers
/// with rows, a grouped product can read its input rows through sources (the token is
/// sources[r] / top_k), and iron_moe_combine reads the experts' outputs back with rows. The order
/// is fixed by the ids alone, so every backend and every run gives the same rows.
///
/// ## Error bound
/// Exact: integers.
///
/// ## How it runs
/// A group per 8 experts. Each thread takes a contiguous run of ⌈n / tpg⌉ assignments and reads
/// it twice: once to count, for each of the group's experts, the assignments to it (and those to
/// an expert below the group's, and the dropped ones), then, after a scan of those counts across
/// the group in thread order (group_counts.hpp), once to number its assignments to the group's
/// experts and write their rows and sources. Every group reads all n ids, from the L2 after the
/// first: 8·n bytes for each 8 experts, far less than the tokens that iron_moe_permute then moves.
///
/// ## Layout
/// - `topk_ids [tokens, top_k]` u32
/// - `counts   [experts]` u32
/// - `offsets  [experts + 1]` u32
/// - `rows     [tokens, top_k]` u32
/// - `sources  [tokens · top_k]` u32
///
/// ## Dispatch
/// Reduction: ⌈experts / 8⌉ groups, tpg a multiple of 32, 32 ≤ tpg ≤ 1024. experts ≥ 1.
#include <algorithm>
#include <array>
#include <iron/iron.hpp>

#include "group_counts.hpp"

namespace iron::kernels {
using namespace iron::dsl;

namespace {
constexpr u32 kSortExperts = 8;  ///< experts per group
}  // namespace

IRON_KERNEL(iron_moe_sort, (Tensor<u32> topk_ids, Out<u32> counts, Out<u32> offsets, Out<u32> rows,
                            Out<u32> sources, Constexpr<u32> tokens, Constexpr<u32> top_k,
                            Constexpr<u32> experts)) {
  dispatch(reduction, {multiple_of(32), at_least(32), at_most(1024)});
  grid("[ceil_div(experts, 8), 1, 1]");
  layout(topk_ids, "[tokens, top_k]");
  layout(counts, "[experts]");
  layout(offsets, "[experts + 1]");
  layout(rows, "[tokens, top_k]");
  layout(sources, "[tokens * top_k]");
  constexpr std::size_t kBelow = kSortExperts;  // the count of ids below the group's experts
  constexpr std::size_t kDropped = kBelow + 1;  // the count of ids ≥ experts
  constexpr std::size_t kCounts = kDropped + 1;
  auto n = tokens * top_k;
  auto tid = thread_id<0>();
  auto group = program_id<0>();
  auto first = group * kSortExperts;
  auto last = min(first + kSortExperts, experts);  // the group's experts: [first, last)
  auto run = (n + group_size<0>() - 1u) / group_size<0>();
  auto begin = min(tid * run, n);
  auto end = min(begin + run, n);
  auto one_if = [](const Expr<boolean>& c) { return select(c, Expr<u32>(1u), Expr<u32>(0u)); };

  // Pass 1: this thread's counts.
  Regs<u32, kCounts> count(0u);
  for (auto i : range(begin, end, 1u)) {
    auto id = load(topk_ids[i]);
    for (u32 g = 0; g < kSortExperts; ++g) count[g] += one_if(id == first + g && id < last);
    count[kBelow] += one_if(id < first);
    count[kDropped] += one_if(id >= experts);
  }
  std::array<Expr<u32>, kCounts> mine;
  for (std::size_t c = 0; c < kCounts; ++c) mine[c] = count[c].get();
  const GroupCounts<kCounts> scan = group_exclusive_counts(mine);

  // The group's experts' counts and offsets; the last group also writes offsets[experts].
  Regs<u32, kSortExperts> next(0u);  // the row of this thread's next assignment to each expert
  Expr<u32> offset = scan.total[kBelow];
  for (u32 g = 0; g < kSortExperts; ++g) {
    IRON_IF(tid == g && first + g < experts) {
      store(counts[first + g], scan.total[g]);
      store(offsets[first + g], offset);
    }
    next[g] = offset + scan.before[g];
    offset = offset + scan.total[g];
  }
  IRON_IF(tid == 0u && last == experts) { store(offsets[experts], offset); }

  // Pass 2: number this thread's assignments to the group's experts, in order.
  for (auto i : range(begin, end, 1u)) {
    auto id = load(topk_ids[i]);
    Expr<u32> row = n;
    for (u32 g = 0; g < kSortExperts; ++g) {
      auto hit = id == first + g;
      row = select(hit, next[g].get(), row);
      next[g] += one_if(hit);
    }
    IRON_IF(id >= first && id < last) {
      store(rows[i], row);
      store(sources[row], i);
    }
    IRON_IF(id >= experts && group == 0u) { store(rows[i], n); }
  }
  // The rows no assignment takes: those past the kept ones.
  IRON_IF(group == 0u) {
    for (auto r : range(n - scan.total[kDropped] + tid, n, group_size<0>())) {
      store(sources[r], n);
    }
  }
}

// A group per 8 experts, of about 8 assignments a thread (whole simdgroups, at most 1024).
IRON_GEOMETRY(iron_moe_sort) {
  const std::uint64_t experts = std::max<std::uint64_t>(q.constant("experts"), 1);
  const std::uint64_t n = q.tensor_elements("topk_ids");
  return Geometry::per_row((experts + kSortExperts - 1) / kSortExperts,
                           q.threads_per_group(whole_simdgroups((n + 7) / 8, 1024)));
}

}  // namespace iron::kernels

// The tests and benches: compiled into iron_kernel_tests, never into iron_kernels.
#if IRON_KERNEL_TESTS
#include <iron/bench/geometry.hpp>
#include <iron/bench/registry.hpp>
#include <iron/testing/geometry.hpp>
#include <iron/testing/registry.hpp>

#include "assignments.hpp"

namespace iron::kernels {

namespace {

/// The case for these ids; tpg 0 takes the kernel's geometry.
testing::TestSetup sort_setup(const std::vector<std::uint32_t>& ids, std::size_t tokens,
                              std::size_t top_k, std::size_t experts, std::uint32_t tpg, DType dt) {
  const SortedAssignments want = sort_oracle(ids, experts);
  testing::TestSetup setup("iron_moe_sort", dt);
  setup.input_u32("topk_ids", ids)
      .output("counts", experts)
      .output("offsets", experts + 1)
      .output("rows", ids.size())
      .output("sources", ids.size())
      .constant("tokens", static_cast<double>(tokens))
      .constant("top_k", static_cast<double>(top_k))
      .constant("experts", static_cast<double>(experts))
      .expect("counts", as_floats(want.counts))
      .expect("offsets", as_floats(want.offsets))
      .expect("rows", as_floats(want.rows))
      .expect("sources", as_floats(want.sources))
      .tolerance(testing::tolerance::exact());
  if (tpg == 0) return setup.grid(testing::geometry_grid(setup));
  return setup.grid_rows(static_cast<std::uint32_t>((experts + kSortExperts - 1) / kSortExperts),
                         tpg);
}

bench::BenchSetup sort_bench(std::size_t tokens, std::size_t experts, std::size_t top_k, DType dt) {
  const std::size_t n = tokens * top_k;
  bench::BenchSetup setup("iron_moe_sort", dt);
  setup.input_u32("topk_ids", bench_routing(tokens, experts, top_k))
      .output("counts", experts)
      .output("offsets", experts + 1)
      .output("rows", n)
      .output("sources", n)
      .constant("tokens", static_cast<double>(tokens))
      .constant("top_k", static_cast<double>(top_k))
      .constant("experts", static_cast<double>(experts));
  // The ids read once, rows and sources written once (the counts and offsets are a few words).
  return setup.grid(bench::geometry_grid(setup))
      .bytes_moved(3 * n * 4 + (2 * experts + 1) * 4)
      .peer("moe_sort", {{"tokens", static_cast<double>(tokens)},
                         {"experts", static_cast<double>(experts)},
                         {"top_k", static_cast<double>(top_k)}});
}

}  // namespace

// Mixtral's shape: 8 experts, top-2, one group.
IRON_TEST(iron_moe_sort, top2_of_8, F32) {
  return sort_setup(random_routing(64, 8, 2, rng), 64, 2, 8, 0, dt);
}

// 128 experts in 16 groups, top-8.
IRON_TEST(iron_moe_sort, top8_of_128, F32) {
  return sort_setup(random_routing(40, 128, 8, rng), 40, 8, 128, 0, dt);
}

// An expert every token chooses, one that one token chooses, one that none does; 10 experts in
// two groups, the second with two experts.
IRON_TEST(iron_moe_sort, all_one_and_no_tokens, F32) {
  return sort_setup(edge_routing(48, 10, 3, rng), 48, 3, 10, 0, dt);
}

// top_k = 1, and top_k = experts (every expert gets every token).
IRON_TEST(iron_moe_sort, top_k_1, F32) {
  return sort_setup(random_routing(50, 12, 1, rng), 50, 1, 12, 0, dt);
}
IRON_TEST(iron_moe_sort, top_k_equals_experts, F32) {
  return sort_setup(random_routing(20, 6, 6, rng), 20, 6, 6, 0, dt);
}

// One token: most threads have no assignment.
IRON_TEST(iron_moe_sort, single_token, F32) {
  return sort_setup(random_routing(1, 64, 8, rng), 1, 8, 64, 0, dt);
}

// Runs of 16 assignments a thread (64 threads for 1024), so the scan crosses simdgroups with
// counts that are not 0 or 1.
IRON_TEST(iron_moe_sort, long_runs, F32) {
  return sort_setup(random_routing(128, 16, 8, rng), 128, 8, 16, 64, dt);
}

// Dropped assignments: ids experts, experts + 3 and 0xFFFFFFFF go nowhere (rows n), and the
// rows past the kept ones have source n.
IRON_TEST(iron_moe_sort, dropped_ids, F32) {
  auto ids = random_routing(30, 9, 3, rng);
  ids[0] = 9;
  ids[7] = 12;
  ids[40] = 0xFFFFFFFFu;
  ids[89] = 9;
  return sort_setup(ids, 30, 3, 9, 0, dt);
}

// The routings of Mixtral's layer (8 experts, top-2) and of a many-expert one (128, top-8),
// 4096 tokens each.
IRON_BENCH(iron_moe_sort, tokens4096_experts8_top2, F32) { return sort_bench(4096, 8, 2, dt); }
IRON_BENCH(iron_moe_sort, tokens4096_experts128_top8, F32) { return sort_bench(4096, 128, 8, dt); }

}  // namespace iron::kernels
#endif  // IRON_KERNEL_TESTS
