/// A row of a [rows, n] tensor held in the group's registers, read from memory once: the shared
/// step of softmax, log_softmax, rms_norm, layer_norm and add_rms_norm when the row fits.
///
/// Thread t of a group of tpg holds the row's 16-byte vectors t, t + tpg, t + 2·tpg, t + 3·tpg
/// (kVectors of them: 32 values of a 2-byte type, 16 of f32, held in f32), loaded and stored
/// with one wide access each. Reductions combine a thread's values in registers, then across
/// the group. A row fits when n is a multiple of the lanes of a vector (so every vector is whole
/// and aligned: the row starts at r·n) and n ≤ kElements·tpg; otherwise the kernel streams the
/// row instead (kernels branch on `fits`, which is uniform across the group).
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <iron/iron.hpp>

namespace iron::kernels {

/// One group's row in registers. Every thread of the group must construct it and call its
/// reductions (they reduce across the group).
template <dsl::Element T>
class ResidentRow {
 public:
  /// Elements per 16-byte vector; vectors per thread (64 bytes of loads in flight, and at most
  /// 32 values, which fit the 64 registers a thread of a 1024-thread group has, with room for
  /// the reductions and the streaming path); values per thread.
  static constexpr std::size_t kLanes = 16 / dsl::lane_bytes<T>();
  static constexpr std::size_t kVectors = 4;
  static constexpr std::size_t kElements = kVectors * kLanes;

  /// The lanes of one vector in registers: `lanes[e]` reads or assigns element e.
  using Lanes = std::array<dsl::RegsElement<dsl::f32>, kLanes>;

  /// Whether a row of n elements fits the group's registers (uniform across the group).
  static dsl::Expr<dsl::boolean> fits(const dsl::Expr<dsl::u32>& n) {
    using namespace iron::dsl;
    return (n % static_cast<std::uint32_t>(kLanes) == 0u) &&
           (n <= group_size<0>() * static_cast<std::uint32_t>(kElements));
  }

  /// Reads row[base .. base + n) of `inp` into registers, as f32.
  template <class Tensor>
  ResidentRow(const Tensor& inp, const dsl::Expr<dsl::u32>& base, const dsl::Expr<dsl::u32>& n)
      : ResidentRow(n, [&](const dsl::Expr<dsl::u32>& column, const Lanes& lanes) {
          const auto x = dsl::load_lanes<kLanes>(inp[base + column]);
          for (std::size_t e = 0; e < kLanes; ++e) lanes[e] = dsl::cast<dsl::f32>(x[e]);
        }) {}

  /// A row of n elements that load(column, lanes) computes, one vector at a time (from several
  /// tensors, say, storing what it computes on the way).
  template <class Load>
  ResidentRow(const dsl::Expr<dsl::u32>& n, Load load) : values_(0.0f) {
    using namespace iron::dsl;
    for (std::size_t v = 0; v < kVectors; ++v) {
      column_[v] = (static_cast<std::uint32_t>(v) * group_size<0>() + thread_id<0>()) *
                   static_cast<std::uint32_t>(kLanes);
      present_[v] = column_[v] < n;
    }
    each_vector(load);
  }

  /// Replaces every value x with f(x).
  template <class F>
  void update(F f) {
    each_vector([&](const dsl::Expr<dsl::u32>&, const Lanes& lanes) {
      for (const auto& x : lanes) x = f(x.get());
    });
  }

  /// The sum over the row of f(x) (f32, every thread gets it).
  template <class F>
  dsl::Expr<dsl::f32> sum(F f) const {
    using namespace iron::dsl;
    Expr<f32> local = 0.0f;
    for (std::size_t v = 0; v < kVectors; ++v) {
      Expr<f32> part = f(element(v, 0));
      for (std::size_t e = 1; e < kLanes; ++e) part = part + f(element(v, e));
      local = local + select(present_[v], part, Expr<f32>(0.0f));
    }
    return reduce_sum(local);
  }
  dsl::Expr<dsl::f32> sum() const {
    return sum([](const dsl::Expr<dsl::f32>& x) { return x; });
  }

  /// The largest value of the row (every thread gets it).
  dsl::Expr<dsl::f32> max() const {
    using namespace iron::dsl;
    Expr<f32> local = -infinity;
    for (std::size_t v = 0; v < kVectors; ++v) {
      Expr<f32> part = element(v, 0);
      for (std::size_t e = 1; e < kLanes; ++e) part = dsl::max(part, element(v, e));
      local = dsl::max(local, select(present_[v], part, Expr<f32>(-infinity)));
    }
    return reduce_max(local);
  }

  /// Calls body(column, lanes) for each vector of the row this thread holds, inside a branch
  /// taken only where the vector is part of the row: `column` is its first column (a multiple
  /// of kLanes), `lanes` its values.
  template <class Body>
  void each_vector(Body body) const {
    for (std::size_t v = 0; v < kVectors; ++v) {
      IRON_IF(present_[v]) { body(column_[v], lanes(v)); }
    }
  }

  /// The values of one vector, as written: what store() takes from its function.
  using Vector = std::array<dsl::Expr<T>, kLanes>;

  /// Writes row[base .. base + n) of `out`, one wide store per vector: g(column, lanes) gives
  /// the Vector for the vector at `column`.
  template <class Out, class G>
  void store(const Out& out, const dsl::Expr<dsl::u32>& base, G g) const {
    each_vector([&](const dsl::Expr<dsl::u32>& column, const Lanes& lanes) {
      dsl::store_lanes(out[base + column], g(column, lanes));
    });
  }

  /// store() for a g that reads other tensors at the vector's columns: fetch(column) makes those
  /// loads and g(column, lanes, fetched) combines them. A thread that holds all kVectors vectors
  /// makes every fetch before its first store, so the loads are in flight together rather than
  /// one after each store.
  template <class Out, class Fetch, class G>
  void store_fetching(const Out& out, const dsl::Expr<dsl::u32>& base, Fetch fetch, G g) const {
    IRON_IF(present_[kVectors - 1]) {
      std::array<decltype(fetch(column_[0])), kVectors> fetched;
      for (std::size_t v = 0; v < kVectors; ++v) fetched[v] = fetch(column_[v]);
      for (std::size_t v = 0; v < kVectors; ++v) {
        dsl::store_lanes(out[base + column_[v]], g(column_[v], lanes(v), fetched[v]));
      }
    }
    IRON_ELSE {
      each_vector([&](const dsl::Expr<dsl::u32>& column, const Lanes& lanes) {
        dsl::store_lanes(out[base + column], g(column, lanes, fetch(column)));
      });
    }
  }

 private:
  dsl::Expr<dsl::f32> element(std::size_t v, std::size_t e) const {
    return values_[static_cast<std::uint32_t>(v * kLanes + e)].get();
  }

  Lanes lanes(std::size_t v) const { return make_lanes(v, std::make_index_sequence<kLanes>{}); }
  template <std::size_t... E>
  Lanes make_lanes(std::size_t v, std::index_sequence<E...>) const {
    return {values_[static_cast<std::uint32_t>(v * kLanes + E)]...};
  }

  dsl::Regs<dsl::f32, kElements> values_;
  std::array<dsl::Expr<dsl::u32>, kVectors> column_;
  std::array<dsl::Expr<dsl::boolean>, kVectors> present_;
};

/// The launch a row kernel over [rows, n] wants: one group per row (rows = the elements of
/// tensor `rows_of` over n), of the fewest whole simdgroups that give each thread at most
/// kVectors 16-byte vectors of the row (so the row is resident in registers whenever it can
/// be), up to 1024 threads.
inline dsl::Geometry resident_row_geometry(const dsl::GeometryQuery& q, const char* rows_of) {
  const std::uint64_t n = std::max<std::uint64_t>(q.constant("n"), 1);
  const std::uint64_t vectors = dsl::vector_count(n, q.dtype);
  constexpr std::uint64_t kVectors = ResidentRow<dsl::f32>::kVectors;  // the same for every T
  const std::uint32_t tpg = dsl::whole_simdgroups((vectors + kVectors - 1) / kVectors, 1024);
  return dsl::Geometry::per_row(q.tensor_elements(rows_of) / n, q.threads_per_group(tpg));
}

}  // namespace iron::kernels
