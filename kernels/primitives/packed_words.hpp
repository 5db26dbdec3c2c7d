/// Walking a tensor of packed u32 words (quantized codes) four words at a time: the loop shared
/// by the dequantization kernels.
///
/// A thread reads four consecutive words with one 16-byte load and writes their 4 · PER codes'
/// outputs to consecutive elements, which vectorize merges into 16-byte stores (two to eight
/// of them, by output type and code width). Consecutive threads take consecutive chunks, so a
/// simdgroup's loads cover 512 contiguous bytes and its stores 32 times a chunk's outputs.
#pragma once

#include <algorithm>
#include <array>
#include <iron/iron.hpp>

namespace iron::kernels {

/// Words a thread takes per iteration: one 16-byte load.
inline constexpr dsl::u32 kWordsPerChunk = 4;

/// Grid-stride over `words` words of PER codes each, kWordsPerChunk at a time (the kernel
/// requires `words` to be a multiple of kWordsPerChunk), calling chunk(first, w) with the flat
/// index of the chunk's first element (chunk index · kWordsPerChunk · PER) and its words, w[c]
/// holding elements first + c · PER … first + c · PER + PER - 1.
template <dsl::u32 PER, class Chunk>
void for_each_word_chunk(const dsl::Tensor<dsl::u32>& packed, const dsl::Expr<dsl::u32>& words,
                         Chunk&& chunk) {
  using namespace iron::dsl;
  static_assert(PER > 0 && 32 % PER == 0, "codes must tile a u32 word");
  for (auto c : range(global_id<0>(), words / kWordsPerChunk, grid_threads<0>())) {
    auto first_word = c * kWordsPerChunk;
    std::array<Expr<u32>, kWordsPerChunk> w;
    for (u32 k = 0; k < kWordsPerChunk; ++k) w[k] = load(packed[first_word + k]);
    chunk(first_word * PER, w);
  }
}

/// The launch for_each_word_chunk wants: one chunk per thread in groups of 256.
inline dsl::Geometry word_chunk_geometry(const dsl::GeometryQuery& q) {
  const std::uint64_t chunks = q.constant("words") / kWordsPerChunk;
  return dsl::Geometry::elementwise(std::max<std::uint64_t>(chunks, 1), q.threads_per_group(256));
}

}  // namespace iron::kernels
