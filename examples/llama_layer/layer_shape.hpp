/// The shape of a Llama-style decoder layer and of the two forms the example runs: a prefill of
/// `prefill_tokens` tokens into an empty KV cache, and a decode step of one token whose KV cache
/// already holds `context - 1` positions.
#pragma once

#include <cstdint>

namespace llama {

struct LayerShape {
  std::uint32_t hidden, heads, kv_heads, head_dim, ffn;
  float rope_base, eps;
  std::uint32_t max_seq, prefill_tokens, context;

  std::uint32_t q_width() const { return heads * head_dim; }
  std::uint32_t kv_width() const { return kv_heads * head_dim; }
};

/// Llama-3-8B's layer: hidden 4096, 32 query heads on 8 KV heads of 128, FFN 14336; a prefill of
/// 2048 tokens and a decode step at context 4096.
inline constexpr LayerShape kLlama3_8B{4096, 32, 8, 128, 14336, 500000.0f, 1e-5f, 4096, 2048, 4096};

/// A small layer with the same structure (GQA 4 → 2, head_dim 128) for a quick check: every
/// output row is checked against the host reference.
inline constexpr LayerShape kSmall{512, 4, 2, 128, 1024, 10000.0f, 1e-5f, 256, 96, 200};

}  // namespace llama
