/// Walking a tensor of packed u32 words (quantized codes) element by element with coalesced
/// stores: the loop shared by the dequantization kernels.
///
/// One thread per word would write its PER outputs as PER scattered narrow stores (a simdgroup's
/// store spans 32 words of output); instead a simdgroup loads 32 consecutive words (one
/// coalesced load), and for each k < PER every lane takes, by shuffle, the word holding element
/// 32k + lane of the chunk, so each store of the body is 32 consecutive elements.
#pragma once

#include <iron/iron.hpp>

namespace iron::kernels {

/// Grid-stride over `words` words of PER codes each, a simdgroup 32 words at a time, calling
/// body(element, word, slot) with the flat element index, the word that holds it and the
/// element's code position in that word (element = word index * PER + slot). The last chunk may
/// be partial: loads are clamped to the last word and elements past the end are skipped. The
/// group size must be a multiple of 32 (a simdgroup runs its iterations together).
template <dsl::u32 PER, class Body>
void for_each_packed_element(const dsl::Tensor<dsl::u32>& packed, const dsl::Expr<dsl::u32>& words,
                             Body&& body) {
  using namespace iron::dsl;
  static_assert(PER > 0 && 32 % PER == 0, "codes must tile a u32 word");
  auto lane = lane_id();
  auto slot = lane % PER;
  auto first = global_id<0>() - lane;  // this simdgroup's first thread, so its first word
  for (auto w0 : range(first, words, grid_threads<0>())) {
    auto mine = load(packed[min(w0 + lane, words - 1u)]);
    for (u32 k = 0; k < PER; ++k) {
      auto source = lane / PER + k * (32 / PER);  // the lane that loaded element 32k + lane's word
      auto word = simd_shuffle(mine, source);
      IRON_IF(w0 + source < words) { body((w0 + source) * PER + slot, word, slot); }
    }
  }
}

}  // namespace iron::kernels
