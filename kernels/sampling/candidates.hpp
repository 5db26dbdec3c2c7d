/// The candidates of a row: the tokens whose key (threshold_select.hpp) is at least a floor,
/// with their penalized logits, gathered into threadgroup memory in index order when there are
/// at most kCandidates of them. Top-k, top-p and the draw then work on the list instead of
/// reading the row again (nine passes from the L2 become work on at most 1024 entries). A row
/// with more candidates keeps them in the row (count 0).
///
/// Index order comes from the threads' contiguous runs (row_walk.hpp's chunks): one pass counts
/// each run's candidates, a group scan gives each run its place, a second pass writes them.
#pragma once

#include <iron/iron.hpp>
#include <type_traits>

#include "../primitives/group_scan.hpp"
#include "threshold_select.hpp"

namespace iron::kernels {

inline constexpr dsl::u32 kCandidates = 1024;

class CandidateList {
 public:
  CandidateList()
      : index_(dsl::shared<dsl::u32>(kCandidates)),
        value_(dsl::shared<dsl::f32>(kCandidates)),
        count_(0u) {}

  /// The number of candidates in the list; 0 when they stay in the row.
  dsl::Expr<dsl::u32> count() const { return count_; }

  /// Gathers the tokens with key ≥ floor when `wanted` and they fit, else leaves the list empty;
  /// run_walk(fn) calls fn(j, x) for this thread's contiguous run of the row in increasing j (x
  /// penalized). All threads of the group must call it (barriers).
  template <class RunWalk>
  void gather(const RunWalk& run_walk, const dsl::Expr<dsl::u32>& floor,
              const dsl::Expr<dsl::boolean>& wanted) {
    using namespace iron::dsl;
    count_ = 0u;
    IRON_IF(wanted) {
      Var<f32> mine = 0.0f;  // exact: at most 2^18 tokens
      run_walk([&](const Expr<u32>&, const Expr<f32>& x) {
        mine += select(order_key(x) >= floor, Expr<f32>(1.0f), Expr<f32>(0.0f));
      });
      const GroupScan counted = group_exclusive_sum(mine);
      IRON_IF(counted.total <= static_cast<float>(kCandidates)) {
        Var<u32> at = cast<u32>(counted.before);
        run_walk([&](const Expr<u32>& j, const Expr<f32>& x) {
          IRON_IF(order_key(x) >= floor) {
            store(index_[at], j);
            store(value_[at], x);
            at += 1u;
          }
        });
        count_ = cast<u32>(counted.total);
      }
    }
    barrier();
  }

  /// A walk for select_threshold: fn(x, valid, lanes_together) over the list, the lanes of a
  /// simdgroup together.
  auto walk() const {
    return [this](const auto& fn) {
      using namespace iron::dsl;
      auto lane = lane_id();
      auto count = this->count();
      for (auto first : range(thread_id<0>() - lane, count, group_size<0>())) {
        auto i = first + lane;
        fn(load(value_[min(i, count - 1u)]), i < count, std::true_type{});
      }
    };
  }

  /// fn(j, x) for this thread's run of the list, in index order.
  template <class Fn>
  void for_each_in_run(const Fn& fn) const {
    using namespace iron::dsl;
    auto count = this->count();
    auto tpg = group_size<0>();
    auto per = (count + tpg - 1u) / tpg;
    auto begin = min(thread_id<0>() * per, count);
    for (auto i : range(begin, min(begin + per, count), 1u)) {
      fn(load(index_[i]), load(value_[i]));
    }
  }

 private:
  dsl::Shared<dsl::u32> index_;
  dsl::Shared<dsl::f32> value_;
  dsl::Var<dsl::u32> count_;
};

}  // namespace iron::kernels
