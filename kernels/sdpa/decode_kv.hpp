/// Where split-KV decode (kernels/sdpa/decode.cpp) finds a key's row: the "KV sources" its one
/// body reads through, so the contiguous and the paged forms cannot drift apart.
///
/// A source holds the K and V tensors and gives `row(key)`, the element offset of the head's row
/// for key position `key` of the group's sequence (the same offset in K and in V); the row's
/// head_dim elements follow it.
#pragma once

#include <iron/iron.hpp>

namespace iron::kernels::sdpa_decode {

/// k_cache, v_cache [batch, heads_kv, max_seq, head_dim]: key `key` of (b, h) is row
/// (b · heads_kv + h) · max_seq + key.
template <class T>
struct ContiguousKv {
  const dsl::Tensor<T>& k;
  const dsl::Tensor<T>& v;
  dsl::Expr<dsl::u32> first_row;  ///< (b · heads_kv + h) · max_seq
  dsl::Expr<dsl::u32> head_dim;

  dsl::Expr<dsl::u32> row(const dsl::Expr<dsl::u32>& key) const {
    return (first_row + key) * head_dim;
  }
};

/// k_pages, v_pages [num_pages, heads_kv, page_size, head_dim] and block_table [batch,
/// pages_per_seq]: key `key` of (b, h) lives in physical page block_table[b, key / page_size], at
/// row key % page_size of head h. page_size is a power of two (page_shift its log2).
template <class T>
struct PagedKv {
  const dsl::Tensor<T>& k;
  const dsl::Tensor<T>& v;
  const dsl::Tensor<dsl::u32>& block_table;
  dsl::Expr<dsl::u32> table_row;  ///< b · pages_per_seq
  dsl::Expr<dsl::u32> head;       ///< h
  dsl::Expr<dsl::u32> heads_kv, page_size, page_shift, head_dim;

  dsl::Expr<dsl::u32> row(const dsl::Expr<dsl::u32>& key) const {
    using namespace iron::dsl;
    auto page = load(block_table[table_row + (key >> page_shift)]);
    return ((page * heads_kv + head) * page_size + (key & (page_size - 1u))) * head_dim;
  }
};

/// log2 of a power of two page_size ≤ 256, without a loop: the count of 2, 4, … 256 it reaches.
inline dsl::Expr<dsl::u32> page_shift_of(const dsl::Expr<dsl::u32>& page_size) {
  using namespace iron::dsl;
  Expr<u32> shift = select(page_size >= 2u, Expr<u32>(1u), Expr<u32>(0u));
  for (u32 j = 2; j <= 8; ++j)
    shift = shift + select(page_size >= (1u << j), Expr<u32>(1u), Expr<u32>(0u));
  return shift;
}

}  // namespace iron::kernels::sdpa_decode
