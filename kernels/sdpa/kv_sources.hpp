/// Where attention's keys and values come from: packed rows of a variable-length batch, or the
/// pages of a paged KV cache. A source says how many keys a sequence has and where key j's row
/// of head_dim elements starts, so one attention body reads both (kernels/sdpa/flash_tile.hpp).
#pragma once

#include <cstdint>
#include <iron/iron.hpp>

namespace iron::kernels::sdpa {

/// Keys and values packed as [total_k, heads_kv, D], sequence b at rows cu_seqlens_k[b] …
/// cu_seqlens_k[b + 1] (read clamped to total_k, so a bad offset cannot reach past the tensor).
template <class T, std::uint32_t D>
struct PackedKv {
  const dsl::Tensor<T>& k;
  const dsl::Tensor<T>& v;
  dsl::Expr<dsl::u32> first;  ///< the sequence's first row
  dsl::Expr<dsl::u32> keys;   ///< its keys
  dsl::Expr<dsl::u32> heads_kv;
  dsl::Expr<dsl::u32> head;  ///< the KV head read

  PackedKv(const dsl::Tensor<T>& k_, const dsl::Tensor<T>& v_, const dsl::Tensor<dsl::u32>& cu,
           const dsl::Expr<dsl::u32>& batch_index, const dsl::Expr<dsl::u32>& total,
           const dsl::Expr<dsl::u32>& heads_kv_, const dsl::Expr<dsl::u32>& head_)
      : k(k_),
        v(v_),
        first(dsl::min(dsl::load(cu[batch_index]), total)),
        keys(dsl::min(dsl::max(dsl::load(cu[batch_index + 1u]), first), total) - first),
        heads_kv(heads_kv_),
        head(head_) {}

  /// The element where key j's row starts (j < keys).
  dsl::Expr<dsl::u32> row(const dsl::Expr<dsl::u32>& j) const {
    return ((first + j) * heads_kv + head) * D;
  }
};

/// Keys and values in pages [num_pages, heads_kv, page_size, D]: key j of sequence b is slot
/// j % page_size of page block_table[b, j / page_size]. Page numbers are read as given (the
/// layout's precondition: each below num_pages); a sequence's length is clamped to its table.
template <class T, std::uint32_t D>
struct PagedKv {
  const dsl::Tensor<T>& k;
  const dsl::Tensor<T>& v;
  const dsl::Tensor<dsl::u32>& block_table;
  dsl::Expr<dsl::u32> table_row;  ///< b · pages_per_seq
  dsl::Expr<dsl::u32> keys;
  dsl::Expr<dsl::u32> heads_kv;
  dsl::Expr<dsl::u32> head;
  dsl::Expr<dsl::u32> page_size;

  PagedKv(const dsl::Tensor<T>& k_, const dsl::Tensor<T>& v_, const dsl::Tensor<dsl::u32>& table,
          const dsl::Tensor<dsl::u32>& seq_lens, const dsl::Expr<dsl::u32>& batch_index,
          const dsl::Expr<dsl::u32>& pages_per_seq, const dsl::Expr<dsl::u32>& page_size_,
          const dsl::Expr<dsl::u32>& heads_kv_, const dsl::Expr<dsl::u32>& head_)
      : k(k_),
        v(v_),
        block_table(table),
        table_row(batch_index * pages_per_seq),
        keys(dsl::min(dsl::load(seq_lens[batch_index]), pages_per_seq * page_size_)),
        heads_kv(heads_kv_),
        head(head_),
        page_size(page_size_) {}

  dsl::Expr<dsl::u32> row(const dsl::Expr<dsl::u32>& j) const {
    auto page = dsl::load(block_table[table_row + j / page_size]);
    return ((page * heads_kv + head) * page_size + j % page_size) * D;
  }
};

}  // namespace iron::kernels::sdpa
