/// Repetition, frequency and presence penalties from a row's token history, for the sampling
/// passes.
///
/// The history is a list of (token, count) slots; a slot of count 0 is unused and a token at or
/// past the vocabulary is ignored. A token may be in at most one used slot of its row (a token
/// listed twice is penalized once per slot). A logit x of a token with count c > 0 becomes
///   (x > 0 ? x / repetition : x · repetition) − (frequency · c + presence),
/// any other logit stays x.
///
/// A pass over the row takes the listed tokens apart from the rest, so that reading an element
/// costs one threadgroup load and never a search of the list. The group sets a bitmap in
/// threadgroup memory, one bit per pair of tokens 2i, 2i + 1 (kPenaltyBitmapWords words: 2^18
/// tokens in 16 KB, which leaves room under Metal's 32 KB), set when either is listed; a pass
/// skips the elements of flagged pairs, and visits both tokens of each listed token's pair from
/// the slots (for_each_listed): the listed one with its penalized logit, its partner, when not
/// listed itself, with its own (a search of the list, per slot, not per element). Only the
/// draw's final walk, one thread over one chunk, looks a token up in the list (apply).
#pragma once

#include <iron/iron.hpp>

namespace iron::kernels {

inline constexpr dsl::u32 kPenaltyBitmapWords = 4096;  ///< 2^17 bits of token pairs, 16 KB
inline constexpr dsl::u32 kMostPenalizedVocabulary = kPenaltyBitmapWords * 32 * 2;

class Penalties {
 public:
  /// Builds the bitmap of row slots history[start .. start + h); all threads of the group must
  /// construct it (two barriers). n ≤ kMostPenalizedVocabulary (larger rows alias, harmlessly
  /// for memory, and the kernel refuses them).
  Penalties(const dsl::Tensor<dsl::u32>& history, const dsl::Tensor<dsl::u32>& counts,
            const dsl::Expr<dsl::u32>& start, const dsl::Expr<dsl::u32>& h,
            const dsl::Expr<dsl::u32>& n, const dsl::Expr<dsl::f32>& repetition,
            const dsl::Expr<dsl::f32>& frequency, const dsl::Expr<dsl::f32>& presence)
      : history_(history),
        counts_(counts),
        start_(start),
        h_(h),
        n_(n),
        repetition_(repetition),
        frequency_(frequency),
        presence_(presence),
        bits_(dsl::shared<dsl::u32>(kPenaltyBitmapWords)) {
    using namespace iron::dsl;
    auto tid = thread_id<0>();
    auto tpg = group_size<0>();
    auto words = min((n >> 6u) + 1u, kPenaltyBitmapWords);
    for (auto w : range(tid, words, tpg)) store(bits_[w], 0u);
    barrier();
    for (auto s : range(tid, h, tpg)) {
      auto token = load(history[start + s]);
      IRON_IF(load(counts[start + s]) > 0u && token < n) {
        atomic_or(bits_[word_of(token)], 1u << ((token >> 1u) & 31u));
      }
    }
    barrier();
  }

  /// Whether token j or its partner (j xor 1) is in a used slot: a pass leaves j to the slots.
  dsl::Expr<dsl::boolean> flagged(const dsl::Expr<dsl::u32>& j) const {
    using namespace iron::dsl;
    return ((load(bits_[word_of(j)]) >> ((j >> 1u) & 31u)) & 1u) != 0u;
  }

  /// fn(token, logit) for the flagged pairs of the used slots tid, tid + tpg, … of the row.
  template <class T, class Fn>
  void for_each_listed(const dsl::Tensor<T>& logits, const dsl::Expr<dsl::u32>& base,
                       const Fn& fn) const {
    using namespace iron::dsl;
    for (auto s : range(thread_id<0>(), h_, group_size<0>())) visit(logits, base, s, true, fn);
  }

  /// fn(token, logit) for the flagged pairs of the used slots whose token is in [lo, hi) (even
  /// bounds: a pair is wholly in or out), by this thread.
  template <class T, class Fn>
  void for_each_listed_in(const dsl::Tensor<T>& logits, const dsl::Expr<dsl::u32>& base,
                          const dsl::Expr<dsl::u32>& lo, const dsl::Expr<dsl::u32>& hi,
                          const Fn& fn) const {
    using namespace iron::dsl;
    for (auto s : range(0u, h_, 1u)) {
      auto token = load(history_[start_ + s]);
      visit(logits, base, s, token >= lo && token < hi, fn);
    }
  }

  /// Token j's logit x, penalized if j is listed: a search of the list.
  dsl::Expr<dsl::f32> apply(const dsl::Expr<dsl::u32>& j, const dsl::Expr<dsl::f32>& x) const {
    using namespace iron::dsl;
    Var<f32> value = x;
    IRON_IF(flagged(j)) {
      for (auto s : range(0u, h_, 1u)) {
        auto c = load(counts_[start_ + s]);
        IRON_IF(c > 0u && load(history_[start_ + s]) == j) { value = penalized(x, c); }
      }
    }
    return value;
  }

 private:
  static dsl::Expr<dsl::u32> word_of(const dsl::Expr<dsl::u32>& token) {
    return (token >> 6u) & (kPenaltyBitmapWords - 1u);
  }

  /// Whether token t is in a used slot: a search of the list.
  dsl::Expr<dsl::boolean> in_list(const dsl::Expr<dsl::u32>& t) const {
    using namespace iron::dsl;
    Var<u32> found = 0u;
    for (auto s : range(0u, h_, 1u)) {
      IRON_IF(load(counts_[start_ + s]) > 0u && load(history_[start_ + s]) == t) { found = 1u; }
    }
    return Expr<u32>(found) != 0u;
  }

  dsl::Expr<dsl::f32> penalized(const dsl::Expr<dsl::f32>& x, const dsl::Expr<dsl::u32>& c) const {
    using namespace iron::dsl;
    auto scaled = select(x > 0.0f, x / repetition_, x * repetition_);
    return scaled - fma(frequency_, cast<f32>(c), presence_);
  }

  template <class T, class Fn>
  void visit(const dsl::Tensor<T>& logits, const dsl::Expr<dsl::u32>& base,
             const dsl::Expr<dsl::u32>& s, const dsl::Expr<dsl::boolean>& wanted,
             const Fn& fn) const {
    using namespace iron::dsl;
    auto token = load(history_[start_ + s]);
    auto c = load(counts_[start_ + s]);
    IRON_IF(wanted && c > 0u && token < n_) {
      fn(token, penalized(cast<f32>(load(logits[base + token])), c));
      auto partner = token ^ 1u;
      IRON_IF(partner < n_) {
        IRON_IF(!in_list(partner)) { fn(partner, cast<f32>(load(logits[base + partner]))); }
      }
    }
  }

  const dsl::Tensor<dsl::u32>& history_;
  const dsl::Tensor<dsl::u32>& counts_;
  dsl::Expr<dsl::u32> start_;
  dsl::Expr<dsl::u32> h_;
  dsl::Expr<dsl::u32> n_;
  dsl::Expr<dsl::f32> repetition_;
  dsl::Expr<dsl::f32> frequency_;
  dsl::Expr<dsl::f32> presence_;
  dsl::Shared<dsl::u32> bits_;
};

}  // namespace iron::kernels
