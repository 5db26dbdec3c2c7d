/// The GPU decoder layer (iron_layer.hpp) on the generated entry points of the library kernels.
#include "iron_layer.hpp"

#include <cmath>
#include <iron/core/half.hpp>
#include <span>

#include "iron_kernels.hpp"
#include "kernels/sdpa/decode_splits.hpp"

namespace llama {
namespace {

using iron::DType;

DeviceTensor allocate(DType dtype, std::size_t count) {
  return DeviceTensor::allocate(dtype, count);
}

/// The split count of iron_sdpa_decode for one sequence of one query token, as its own geometry
/// plans it for this device.
std::uint32_t decode_splits(const LayerShape& s) {
  namespace sd = iron::kernels::sdpa_decode;
  return sd::splits(1, s.kv_heads, sd::row_blocks(1, s.heads, s.kv_heads), s.max_seq,
                    iron::runtime::cuda_multiprocessors());
}

}  // namespace

DeviceTensor upload_bf16(const std::vector<float>& values) {
  std::vector<std::uint16_t> bits(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) bits[i] = iron::f32_to_bf16_bits(values[i]);
  DeviceTensor tensor = allocate(DType::BF16, values.size());
  tensor.upload(std::as_bytes(std::span(bits)));
  return tensor;
}

std::vector<float> download_bf16(const DeviceTensor& tensor) {
  std::vector<std::uint16_t> bits(tensor.count());
  tensor.download(std::as_writable_bytes(std::span(bits)));
  std::vector<float> values(bits.size());
  for (std::size_t i = 0; i < bits.size(); ++i) values[i] = iron::bf16_bits_to_f32(bits[i]);
  return values;
}

DeviceWeights::DeviceWeights(const Weights& w)
    : attn_norm(upload_bf16(w.attn_norm)),
      ffn_norm(upload_bf16(w.ffn_norm)),
      q(upload_bf16(w.q)),
      k(upload_bf16(w.k)),
      v(upload_bf16(w.v)),
      o(upload_bf16(w.o)),
      gate(upload_bf16(w.gate)),
      up(upload_bf16(w.up)),
      down(upload_bf16(w.down)) {}

IronLayer::IronLayer(const LayerShape& s, std::uint32_t tokens)
    : shape_(s),
      tokens_(tokens),
      splits_(tokens == 1 ? decode_splits(s) : 1),
      h_(allocate(DType::BF16, std::size_t{tokens} * s.hidden)),
      q_(allocate(DType::BF16, std::size_t{tokens} * s.q_width())),
      k_(allocate(DType::BF16, std::size_t{tokens} * s.kv_width())),
      v_(allocate(DType::BF16, std::size_t{tokens} * s.kv_width())),
      attn_(allocate(DType::BF16, std::size_t{tokens} * s.q_width())),
      o_(allocate(DType::BF16, std::size_t{tokens} * s.hidden)),
      x2_(allocate(DType::BF16, std::size_t{tokens} * s.hidden)),
      h2_(allocate(DType::BF16, std::size_t{tokens} * s.hidden)),
      gate_(allocate(DType::BF16, std::size_t{tokens} * s.ffn)),
      up_(allocate(DType::BF16, std::size_t{tokens} * s.ffn)),
      act_(allocate(DType::BF16, std::size_t{tokens} * s.ffn)),
      down_(allocate(DType::BF16, std::size_t{tokens} * s.hidden)),
      y_(allocate(DType::BF16, std::size_t{tokens} * s.hidden)),
      sinks_(allocate(DType::F32, s.heads)),
      cu_seqlens_(allocate(DType::U32, 2)),
      partial_out_(allocate(DType::F32, std::size_t{tokens} * s.heads * splits_ * s.head_dim)),
      partial_lse_(allocate(DType::F32, std::size_t{tokens} * s.heads * splits_)) {
  // No attention sinks: −inf leaves the softmax as it is. One sequence of all the tokens.
  const std::vector<float> no_sinks(s.heads, -INFINITY);
  sinks_.upload(std::as_bytes(std::span(no_sinks)));
  const std::uint32_t cu_seqlens[2] = {0, tokens};
  cu_seqlens_.upload(std::as_bytes(std::span(cu_seqlens)));
}

void IronLayer::project(const Stream& stream, const DeviceTensor& in, const DeviceTensor& weight,
                        DeviceTensor& out, std::uint32_t n, std::uint32_t k) const {
  if (tokens_ == 1) {
    iron::lib::iron_gemv_bf16(stream, in, weight, out, 1, n, k);
  } else {
    iron::lib::iron_gemm_warpgroup_nk_bf16(stream, in, weight, out, tokens_, n, k, 1.0f);
  }
}

void IronLayer::enqueue(const Stream& stream, const DeviceWeights& w, const DeviceTensor& x,
                        const DeviceTensor& positions, const DeviceTensor& seq_len,
                        DeviceTensor& k_cache, DeviceTensor& v_cache) {
  namespace lib = iron::lib;
  const LayerShape& s = shape_;
  const std::uint32_t t = tokens_;
  lib::iron_rms_norm_bf16(stream, x, w.attn_norm, h_, s.hidden, s.eps);
  project(stream, h_, w.q, q_, s.q_width(), s.hidden);
  project(stream, h_, w.k, k_, s.kv_width(), s.hidden);
  project(stream, h_, w.v, v_, s.kv_width(), s.hidden);
  lib::iron_rope_qk_inplace_neox_bf16(stream, q_, k_, positions, t, s.heads, s.kv_heads, s.head_dim,
                                      s.head_dim, s.rope_base);
  lib::iron_kv_append_bf16(stream, k_, v_, positions, k_cache, v_cache, t, s.kv_heads, s.head_dim,
                           s.max_seq);
  const float scale = 1.0f / std::sqrt(static_cast<float>(s.head_dim));
  if (t == 1) {
    lib::iron_sdpa_decode_bf16(stream, q_, k_cache, v_cache, seq_len, partial_out_, partial_lse_, 1,
                               1, s.heads, s.kv_heads, s.head_dim, s.max_seq, splits_, 0, scale);
    lib::iron_sdpa_decode_combine_bf16(stream, partial_out_, partial_lse_, sinks_, attn_, 1, 1,
                                       s.heads, s.head_dim, splits_);
  } else {
    lib::iron_sdpa_prefill_d128_bf16(stream, q_, k_, v_, cu_seqlens_, cu_seqlens_, sinks_, attn_, 1,
                                     s.heads, s.kv_heads, t, t, t, 1, 0, scale);
  }
  project(stream, attn_, w.o, o_, s.hidden, s.q_width());
  lib::iron_add_rms_norm_bf16(stream, o_, x, w.ffn_norm, x2_, h2_, s.hidden, s.eps);
  project(stream, h2_, w.gate, gate_, s.ffn, s.hidden);
  project(stream, h2_, w.up, up_, s.ffn, s.hidden);
  lib::iron_swiglu_bf16(stream, gate_, up_, act_, t * s.ffn);
  project(stream, act_, w.down, down_, s.hidden, s.ffn);
  lib::iron_add_bf16(stream, x2_, down_, y_, t * s.hidden);
}

}  // namespace llama
