/// The decoder layer on the host, from its definition, for checking the GPU's: f32 values and
/// products summed in f32 partial sums (double across them), optionally rounded to bf16 wherever
/// the Iron layer stores a bf16 intermediate (the error a bf16 layer cannot avoid).
#pragma once

#include <cstdint>
#include <vector>

#include "layer_shape.hpp"

namespace llama {

/// The layer's weights as f32 values (each a bf16 value): norms [hidden]; projections [out, in].
struct Weights {
  std::vector<float> attn_norm, ffn_norm, q, k, v, o, gate, up, down;
};

/// One form's input: `tokens` new tokens at positions first … first + tokens − 1, and the KV
/// cache [kv_heads, max_seq, head_dim] whose positions before `first` hold earlier keys.
struct LayerInput {
  std::uint32_t first = 0, tokens = 0;
  std::vector<float> x;  ///< [tokens, hidden]
  std::vector<float> k_cache, v_cache;
};

/// The output rows y[t, :] of the tokens t in `rows` (each < tokens), in that order. With
/// `round_bf16` every intermediate the Iron layer keeps in bf16 is rounded to bf16 here too.
std::vector<std::vector<float>> reference_rows(const LayerShape& shape, const Weights& w,
                                               const LayerInput& in,
                                               const std::vector<std::uint32_t>& rows,
                                               bool round_bf16);

}  // namespace llama
