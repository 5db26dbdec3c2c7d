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
  /// Every key's row is a row of one matrix, [total_k, heads_kv · D]: tile copies reach them.
  static constexpr bool kTileCopies = true;

  const dsl::Tensor<T>& k;
  const dsl::Tensor<T>& v;
  dsl::Expr<dsl::u32> first;  ///< the sequence's first row
  dsl::Expr<dsl::u32> keys;   ///< its keys
  dsl::Expr<dsl::u32> heads_kv;
  dsl::Expr<dsl::u32> head;   ///< the KV head read
  dsl::Expr<dsl::u32> total;  ///< total_k, the rows of k and v

  PackedKv(const dsl::Tensor<T>& k_, const dsl::Tensor<T>& v_, const dsl::Tensor<dsl::u32>& cu,
           const dsl::Expr<dsl::u32>& batch_index, const dsl::Expr<dsl::u32>& total_,
           const dsl::Expr<dsl::u32>& heads_kv_, const dsl::Expr<dsl::u32>& head_)
      : k(k_),
        v(v_),
        first(dsl::min(dsl::load(cu[batch_index]), total_)),
        keys(dsl::min(dsl::max(dsl::load(cu[batch_index + 1u]), first), total_) - first),
        heads_kv(heads_kv_),
        head(head_),
        total(total_) {}

  /// The element where key j's row starts (j < keys).
  dsl::Expr<dsl::u32> row(const dsl::Expr<dsl::u32>& j) const {
    return ((first + j) * heads_kv + head) * D;
  }
  /// Starts copying columns col … col + COLS − 1 of keys j … j + ROWS − 1 of `src` (k or v)
  /// to dst[at …], a row of COLS elements a key (copy_tile_async: TMA on sm_90a). Rows past the
  /// sequence's keys are the next sequence's (zeros past total_k): a step that holds them masks
  /// their weights to 0, so they add nothing where they are finite.
  template <std::uint32_t ROWS, std::uint32_t COLS>
  void copy_rows(const dsl::Shared<T>& dst, const dsl::Expr<dsl::u32>& at,
                 const dsl::Tensor<T>& src, const dsl::Expr<dsl::u32>& j,
                 const dsl::Expr<dsl::u32>& col) const {
    dsl::copy_tile_async<ROWS, COLS>(dst, at, src, dsl::Expr<dsl::u32>(0u), total, heads_kv * D,
                                     first + j, head * D + col);
  }
  /// Calls f(row) with row(j) as above: the copy loops of a KV tile are traced once.
  template <class F>
  void with_rows(F&& f) const {
    f([this](const dsl::Expr<dsl::u32>& j) { return row(j); });
  }
};

/// Keys and values in pages [num_pages, heads_kv, page_size, D]: key j of sequence b is slot
/// j % page_size of page block_table[b, j / page_size]. Page numbers are read as given (the
/// layout's precondition: each below num_pages); a sequence's length is clamped to its table.
///
/// A page size that is a power of two (the usual one) finds a key's page and slot by a shift
/// and a mask; any other size divides, which on CUDA is some twenty instructions a key row that
/// every KV tile's copies repeat (bench/NOTES.md §35). The two forms are two copies of the
/// caller's loop under one uniform branch (`with_rows`).
template <class T, std::uint32_t D>
struct PagedKv {
  /// A key's row is found through the block table, row by row: no tile copies.
  static constexpr bool kTileCopies = false;

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
        page_size(page_size_),
        // floor(log2(page_size)) from its f32 exponent (exact below 2^24).
        shift((dsl::bitcast<dsl::u32>(dsl::cast<dsl::f32>(page_size_)) >> 23u) - 127u),
        power_of_two(page_size_ != 0u && (1u << shift) == page_size_) {}

  /// The element where key j's row starts (j < keys), in either form.
  dsl::Expr<dsl::u32> row(const dsl::Expr<dsl::u32>& j) const {
    return at(j / page_size, j % page_size);
  }
  /// Calls f(row) under a uniform branch on the page size: its shift-and-mask form for a power
  /// of two, else the dividing one.
  template <class F>
  void with_rows(F&& f) const {
    using namespace iron::dsl;
    IRON_IF(specialized(power_of_two)) {
      f([this](const dsl::Expr<dsl::u32>& j) { return at(j >> shift, j & (page_size - 1u)); });
    }
    IRON_ELSE {
      f([this](const dsl::Expr<dsl::u32>& j) { return row(j); });
    }
  }

 private:
  dsl::Expr<dsl::u32> shift;
  dsl::Expr<dsl::boolean> power_of_two;

  dsl::Expr<dsl::u32> at(const dsl::Expr<dsl::u32>& page_index,
                         const dsl::Expr<dsl::u32>& slot) const {
    auto page = dsl::load(block_table[table_row + page_index]);
    return ((page * heads_kv + head) * page_size + slot) * D;
  }
};

}  // namespace iron::kernels::sdpa
