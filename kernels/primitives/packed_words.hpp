/// Walking a tensor of packed u32 words (quantized codes) a few words at a time: the loop shared
/// by the dequantization kernels.
///
/// A thread reads the fewest consecutive words whose outputs fill a 16-byte vector (one word of
/// eight 4-bit codes into f16/bf16, two words of four 8-bit codes), in one load, and writes their
/// outputs to consecutive elements, which vectorize merges into 16-byte stores. Consecutive
/// threads take consecutive chunks, so a simdgroup's loads and its stores each cover one
/// contiguous span, every store instruction writing whole 32-byte sectors.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <iron/iron.hpp>
#include <string>

namespace iron::kernels {

/// Words a kernel's words must be a multiple of: the most a chunk takes.
inline constexpr dsl::u32 kMaxWordsPerChunk = 4;

/// Words per chunk for PER codes a word decoded to outputs of `output_bytes` bytes: the fewest
/// whose outputs fill 16 bytes (at least one, at most kMaxWordsPerChunk).
constexpr dsl::u32 words_per_chunk(dsl::u32 per, std::size_t output_bytes) {
  const std::size_t bytes = per * output_bytes;
  return bytes >= 16 ? 1
                     : static_cast<dsl::u32>(std::min<std::size_t>(16 / bytes, kMaxWordsPerChunk));
}

/// The grid rule of a kernel that walks chunks of `chunk_words` words: a group count that never
/// gives a thread nothing to do.
inline std::string word_chunk_grid(dsl::u32 chunk_words) {
  return "[<= ceil_div(words / " + std::to_string(chunk_words) + ", tpg), 1, 1]";
}

/// Grid-stride over `words` words of PER codes each, WORDS at a time (the kernel requires
/// `words` to be a multiple of kMaxWordsPerChunk), calling chunk(first, w) with the flat index
/// of the chunk's first element (chunk index · WORDS · PER) and its words, w[c] holding elements
/// first + c · PER … first + c · PER + PER - 1.
template <dsl::u32 PER, dsl::u32 WORDS, class Chunk>
void for_each_word_chunk(const dsl::Tensor<dsl::u32>& packed, const dsl::Expr<dsl::u32>& words,
                         Chunk&& chunk) {
  using namespace iron::dsl;
  static_assert(PER > 0 && 32 % PER == 0, "codes must tile a u32 word");
  static_assert(kMaxWordsPerChunk % WORDS == 0, "chunks must tile the words' required multiple");
  for (auto c : range(global_id<0>(), words / WORDS, grid_threads<0>())) {
    auto first_word = c * WORDS;
    std::array<Expr<u32>, WORDS> w;
    for (u32 k = 0; k < WORDS; ++k) w[k] = load(packed[first_word + k]);
    chunk(first_word * PER, w);
  }
}

/// The launch for_each_word_chunk wants for PER codes a word: one chunk per thread in groups of
/// 256.
inline dsl::Geometry word_chunk_geometry(const dsl::GeometryQuery& q, dsl::u32 per) {
  const std::uint64_t chunks = q.constant("words") / words_per_chunk(per, dtype_size(q.dtype));
  return dsl::Geometry::elementwise(std::max<std::uint64_t>(chunks, 1), q.threads_per_group(256));
}

}  // namespace iron::kernels
