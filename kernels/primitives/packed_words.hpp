/// Walking a tensor of packed u32 words (quantized codes) in items of one 16-byte output vector,
/// several items a thread at once: the loop shared by the dequantization kernels (and, through
/// grid_stride_batched, by the KV-cache append).
///
/// An item is the codes whose outputs fill one 16-byte vector: 8 codes into f16/bf16 (one word
/// of 4-bit codes, two of 8-bit ones), 4 into f32 (half a word of 4-bit codes, one word of
/// 8-bit ones). A thread takes U items spaced by the grid's thread count, loads all of them,
/// then decodes and stores each: every load and every store instruction of a simdgroup covers
/// one contiguous span (whole 32-byte sectors for the stores), and a thread keeps U items' words
/// in flight instead of one (a single 4-byte load a thread left the read stream waiting on its
/// latency).
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <iron/iron.hpp>
#include <string>
#include <vector>

namespace iron::kernels {

/// What a kernel's word count must be a multiple of (the guard's rule): a block of 32 codes at
/// 4 bits, a multiple of every item's words (two at most, 8-bit codes into f16/bf16), so every
/// item count below is exact.
inline constexpr dsl::u32 kWordMultiple = 4;

/// Elements an item covers: one 16-byte vector of `output_bytes`-byte outputs.
constexpr dsl::u32 item_elements(std::size_t output_bytes) {
  return static_cast<dsl::u32>(16 / output_bytes);
}

/// The item count of `words` words of PER codes each, as a contract expression over the
/// constexpr `words`: words · PER / E for E elements an item.
inline std::string packed_items_expr(dsl::u32 per, dsl::u32 elements) {
  if (per == elements) return "words";
  return per > elements ? "words * " + std::to_string(per / elements)
                        : "words / " + std::to_string(elements / per);
}

/// The item count of `words` words of PER codes each, E elements an item.
template <dsl::u32 PER, dsl::u32 E>
dsl::Expr<dsl::u32> packed_items(const dsl::Expr<dsl::u32>& words) {
  if constexpr (PER >= E) {
    return words * (PER / E);
  } else {
    return words / (E / PER);
  }
}

/// Items a thread takes at a time for PER codes a word and E elements an item: the most whose
/// loads all issue before the first store. ptxas schedules these kernels for 32 registers a
/// thread and, where the loads of more items would not fit, moves some past the first stores,
/// which costs a second round trip (read off the SASS for every variant and dtype): 3 items
/// into f16/bf16, 4 of half a word or 5 of one word into f32.
constexpr dsl::u32 packed_item_unroll(dsl::u32 per, dsl::u32 elements) {
  if (elements == 8) return 3;
  return per == 8 ? 4 : 5;
}

/// The grid rule of a kernel that walks items: a group count that gives every thread at least
/// one item (more groups would only idle).
inline std::string packed_item_grid(dsl::u32 per, dsl::u32 elements) {
  return "[<= ceil_div(" + packed_items_expr(per, elements) + ", tpg), 1, 1]";
}

/// Grid-stride over `items` items, U at a time. With S threads in the grid, thread t takes the
/// items t + k·U·S + u·S (u < U) while all U lie below the last multiple of U·S, calling fetch
/// on each of the U (the loads) before finish on any (the arithmetic and stores), so a thread's
/// U items are in flight together and each of its instructions is contiguous across a
/// simdgroup; the items past that multiple (fewer than U·S) follow one at a time. With U = 1 it
/// is the plain grid-stride loop. Any grid covers every item exactly once. fetch(item) returns
/// whatever finish(item, fetched) takes.
template <dsl::u32 U, class Fetch, class Finish>
void grid_stride_batched(const dsl::Expr<dsl::u32>& items, Fetch&& fetch, Finish&& finish) {
  using namespace iron::dsl;
  static_assert(U > 0, "a batch holds at least one item");
  auto stride = grid_threads<0>();
  if constexpr (U == 1) {
    for (auto i : range(global_id<0>(), items, stride)) finish(i, fetch(i));
  } else {
    auto batch = stride * U;
    auto whole = items / batch * batch;  // items in whole batches
    for (auto i : range(global_id<0>(), whole, batch)) {
      std::vector<Expr<u32>> item(U, i);
      for (u32 u = 1; u < U; ++u) item[u] = i + stride * u;
      std::vector<decltype(fetch(i))> fetched;
      fetched.reserve(U);
      for (u32 u = 0; u < U; ++u) fetched.push_back(fetch(item[u]));
      for (u32 u = 0; u < U; ++u) finish(item[u], fetched[u]);
    }
    for (auto i : range(whole + global_id<0>(), items, stride)) finish(i, fetch(i));
  }
}

/// The words of item `item` (E elements of PER codes a word): code j of the item (j < E) is code
/// j % PER of w[j / PER]. Two words are one 8-byte load; half a word is the word shifted so that
/// its half's codes come first.
template <dsl::u32 PER, dsl::u32 E>
std::array<dsl::Expr<dsl::u32>, (E >= PER ? E / PER : 1)> load_item_words(
    const dsl::Tensor<dsl::u32>& packed, const dsl::Expr<dsl::u32>& item) {
  using namespace iron::dsl;
  static_assert(PER > 0 && 32 % PER == 0, "codes must tile a u32 word");
  static_assert(E % PER == 0 || PER % E == 0, "an item is whole words or a whole part of one");
  if constexpr (E >= PER) {
    constexpr u32 kWords = E / PER;
    static_assert(kWordMultiple % kWords == 0, "the words must hold whole items");
    if constexpr (kWords == 1) {
      return {load(packed[item])};
    } else {
      return load_lanes<kWords>(packed[item * kWords]);
    }
  } else {
    constexpr u32 kParts = PER / E;  // items a word
    constexpr u32 kPartBits = 32 / kParts;
    return {load(packed[item / kParts]) >> (item % kParts * kPartBits)};
  }
}

/// The launch for kernels that walk items U at a time: groups of 256 (or the caller's size),
/// as many as hold U items a thread, at least one. Fewer groups than that leave whole batches
/// to the threads (each still takes U items at a time); the rest of the items go one a thread.
inline dsl::Geometry batched_item_geometry(const dsl::GeometryQuery& q, std::uint64_t items,
                                           dsl::u32 unroll) {
  const std::uint32_t tpg = q.threads_per_group(256);
  const std::uint64_t groups = std::max<std::uint64_t>(items / (std::uint64_t{unroll} * tpg), 1);
  return dsl::Geometry::elementwise(groups * tpg, tpg);
}

/// The launch for a dequantization of `words` words of PER codes each into q.dtype, taking
/// packed_item_unroll items a thread.
inline dsl::Geometry packed_item_geometry(const dsl::GeometryQuery& q, dsl::u32 per) {
  const dsl::u32 elements = item_elements(dtype_size(q.dtype));
  const std::uint64_t items = static_cast<std::uint64_t>(q.constant("words")) * per / elements;
  return batched_item_geometry(q, items, packed_item_unroll(per, elements));
}

}  // namespace iron::kernels
