/// The candidates of a row: the tokens whose key (threshold_select.hpp) is at least a floor,
/// with their penalized logits, gathered into threadgroup memory in index order when there are
/// at most kCandidates of them. Top-k, top-p and the draw then work on the list instead of
/// reading the row again (nine passes from the L2 become work on at most 1024 entries). A row
/// with more candidates keeps them in the row (count 0).
///
/// One pass appends the candidates with an atomic counter (a thread that finds the list full
/// appends no more, so a row with many candidates costs at most kCandidates + tpg atomics); a
/// bitonic sort of the list by token index then puts them in index order.
#pragma once

#include <iron/iron.hpp>
#include <type_traits>

#include "threshold_select.hpp"

namespace iron::kernels {

inline constexpr dsl::u32 kCandidateBits = 10;
inline constexpr dsl::u32 kCandidates = 1u << kCandidateBits;

class CandidateList {
 public:
  CandidateList()
      : index_(dsl::shared<dsl::u32>(kCandidates)),
        value_(dsl::shared<dsl::f32>(kCandidates)),
        count_(0u) {}

  /// The number of candidates in the list; 0 when they stay in the row.
  dsl::Expr<dsl::u32> count() const { return count_; }

  /// Gathers the tokens with key ≥ floor when `wanted` and they fit, else leaves the list empty.
  /// walk(fn) is a pass over the row: fn(j, x, valid, lanes_together) as in sample.cpp (x
  /// penalized; lanes_together a std::bool_constant). All threads of the group must call it
  /// (barriers).
  template <class Walk>
  void gather(const Walk& walk, const dsl::Expr<dsl::u32>& floor,
              const dsl::Expr<dsl::boolean>& wanted) {
    using namespace iron::dsl;
    count_ = 0u;
    IRON_IF(wanted) {
      auto appended = shared<u32>(1);
      IRON_IF(thread_id<0>() == 0u) { store(appended[0u], 0u); }
      barrier();
      Var<u32> full = 0u;  // this thread saw the list full: it appends no more
      walk([&](const Expr<u32>& j, const Expr<f32>& x, const Expr<boolean>& valid, auto) {
        IRON_IF(valid && full == 0u && order_key(x) >= floor) {
          auto at = atomic_add(appended[0u], 1u);
          IRON_IF(at < kCandidates) {
            store(index_[at], j);
            store(value_[at], x);
          }
          IRON_ELSE { full = 1u; }
        }
      });
      barrier();
      auto total = load(appended[0u]);
      IRON_IF(total <= kCandidates) {
        sort_by_index(total);
        count_ = total;
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
  /// Sorts the first `count` entries by token index: a bitonic sort of the next power of two,
  /// the entries past `count` padded with index 0xFFFFFFFF (they sort last).
  void sort_by_index(const dsl::Expr<dsl::u32>& count) {
    using namespace iron::dsl;
    auto tid = thread_id<0>();
    auto tpg = group_size<0>();
    Var<u32> size = 1u;
    for (auto step : range(0u, kCandidateBits, 1u)) {
      (void)step;
      IRON_IF(size < count) { size = size << 1u; }
    }
    for (auto i : range(count + tid, size, tpg)) {
      store(index_[i], 0xFFFFFFFFu);
      store(value_[i], -dsl::infinity);
    }
    barrier();
    for (auto stage : range(1u, kCandidateBits + 1u, 1u)) {
      auto block = 1u << stage;  // bitonic blocks of this size are merged
      IRON_IF(block <= size) {
        for (auto sub : range(0u, stage, 1u)) {
          auto stride = 1u << (stage - 1u - sub);
          for (auto i : range(tid, size, tpg)) {
            auto partner = i ^ stride;
            IRON_IF(partner > i) {
              auto a = load(index_[i]);
              auto b = load(index_[partner]);
              auto ascending = (i & block) == 0u;
              IRON_IF((a > b) == ascending) {
                auto va = load(value_[i]);
                store(index_[i], b);
                store(index_[partner], a);
                store(value_[i], load(value_[partner]));
                store(value_[partner], va);
              }
            }
          }
          barrier();
        }
      }
    }
  }

  dsl::Shared<dsl::u32> index_;
  dsl::Shared<dsl::f32> value_;
  dsl::Var<dsl::u32> count_;
};

}  // namespace iron::kernels
