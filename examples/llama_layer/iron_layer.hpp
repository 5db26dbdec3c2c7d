/// The decoder layer on the GPU, built only from Iron's library kernels through their generated
/// device entry points (iron::lib): every buffer allocated once, every launch enqueued on the
/// caller's stream, so a decode step can be captured into a CUDA graph and replayed.
#pragma once

#include <cstdint>
#include <iron/runtime/device.hpp>

#include "layer_shape.hpp"
#include "reference_layer.hpp"

namespace llama {

using iron::runtime::DeviceTensor;
using iron::runtime::Stream;

/// A host tensor of f32 values uploaded as bf16.
DeviceTensor upload_bf16(const std::vector<float>& values);
/// A device bf16 tensor downloaded as f32 values.
std::vector<float> download_bf16(const DeviceTensor& tensor);

/// The weights on the device, bf16.
struct DeviceWeights {
  explicit DeviceWeights(const Weights& w);
  DeviceTensor attn_norm, ffn_norm, q, k, v, o, gate, up, down;
};

/// The layer for `tokens` new tokens: q/k/v, output and feed-forward projections on
/// iron_gemm_warpgroup_nk (iron_gemv for one token), iron_rope_qk_inplace_neox, iron_kv_append,
/// iron_sdpa_prefill_d128 over the new tokens (a prefill into an empty cache) or
/// iron_sdpa_decode + iron_sdpa_decode_combine over the cache (one token), iron_rms_norm,
/// iron_add_rms_norm, iron_swiglu and iron_add.
class IronLayer {
 public:
  IronLayer(const LayerShape& shape, std::uint32_t tokens);

  /// Enqueues the layer on `stream`: x [tokens, hidden] at `positions` (u32 [tokens]); the caches
  /// [kv_heads, max_seq, head_dim] get the new keys and values. One token attends to the cache's
  /// first seq_len[0] positions (u32 [1]); several are a prompt from position 0, attending to
  /// each other only (a prompt continued after cached positions would need the cache's keys as
  /// well, which this layer does not read). The result is output() once the stream gets there.
  void enqueue(const Stream& stream, const DeviceWeights& w, const DeviceTensor& x,
               const DeviceTensor& positions, const DeviceTensor& seq_len, DeviceTensor& k_cache,
               DeviceTensor& v_cache);
  const DeviceTensor& output() const { return y_; }

 private:
  void project(const Stream& stream, const DeviceTensor& in, const DeviceTensor& weight,
               DeviceTensor& out, std::uint32_t n, std::uint32_t k) const;

  LayerShape shape_;
  std::uint32_t tokens_, splits_;
  DeviceTensor h_, q_, k_, v_, attn_, o_, x2_, h2_, gate_, up_, act_, down_, y_;
  DeviceTensor sinks_, cu_seqlens_, partial_out_, partial_lse_;
};

}  // namespace llama
