/// The quantized b sources of gemm::product: a weight [n, k] quantized along k (MLX affine codes,
/// MXFP4), decoded into the b stage and rounded to T, so the tensor cores multiply T operands.
#pragma once

#include <array>
#include <iron/iron.hpp>

#include "../primitives/affine_quant.hpp"
#include "../primitives/mxfp4.hpp"
#include "gemm_tiles.hpp"

namespace iron::kernels::gemm {

/// Consecutive k columns a thread decodes at a time: one word of 4-bit codes, two of 8-bit. Every
/// group and block is a multiple of it, so a piece lies in one of them (one scale, one bias).
inline constexpr dsl::u32 kPiece = 8;

/// MLX affine codes (w = scale · q + bias per group of GROUP columns, BITS-bit codes packed
/// little-endian into u32 words): `packed [n, k · BITS / 32]`, `scales`, `biases [n, k / GROUP]`.
template <class T, dsl::u32 BITS, dsl::u32 GROUP>
struct AffineCodes {
  static constexpr dsl::u32 kCodes = codes_per_word<BITS>;
  static constexpr dsl::u32 kWords = kPiece / kCodes;  // words a piece
  static_assert(kPiece % kCodes == 0 && GROUP % kPiece == 0, "whole words, one group a piece");

  const dsl::Tensor<dsl::u32>& packed;
  const dsl::Tensor<T>& scales;
  const dsl::Tensor<T>& biases;

  /// The f32 weights w[row, col … col + kPiece) (col a multiple of kPiece), each one fma.
  std::array<dsl::Expr<dsl::f32>, kPiece> decode(const dsl::Expr<dsl::u32>& row,
                                                 const dsl::Expr<dsl::u32>& col,
                                                 const dsl::Expr<dsl::u32>& k) const {
    using namespace iron::dsl;
    auto first = row * (k / kCodes) + col / kCodes;
    std::array<Expr<u32>, kWords> words;
    for (u32 j = 0; j < kWords; ++j) words[j] = load(packed[first + j]);
    auto group = row * (k / GROUP) + col / GROUP;
    auto scale = cast<f32>(load(scales[group]));  // traced in this order, on every compiler
    auto bias = cast<f32>(load(biases[group]));
    return values(words, scale, bias);
  }
  /// The f32 weights of one piece from its words and its group's scale and bias.
  static std::array<dsl::Expr<dsl::f32>, kPiece> values(
      const std::array<dsl::Expr<dsl::u32>, kWords>& words, const dsl::Expr<dsl::f32>& scale,
      const dsl::Expr<dsl::f32>& bias) {
    using namespace iron::dsl;
    std::array<Expr<f32>, kPiece> w;
    for (u32 e = 0; e < kPiece; ++e) {
      w[e] =
          fma(code_value(unpack_code<BITS>(words[e / kCodes], Expr<u32>(e % kCodes))), scale, bias);
    }
    return w;
  }
};

/// OCP MXFP4 (E2M1 codes, 8 a word, and one E8M0 power of two per 32 columns):
/// `packed [n, k / 8]` u32, `scales [n, k / 32]` u8. Each decoded weight is exact in f32.
struct Mxfp4Codes {
  static constexpr dsl::u32 kBlock = 32;
  static_assert(kBlock % kPiece == 0, "one block a piece");

  const dsl::Tensor<dsl::u32>& packed;
  const dsl::Tensor<dsl::u8>& scales;

  /// The f32 weights w[row, col … col + kPiece) (col a multiple of kPiece): one word of codes.
  std::array<dsl::Expr<dsl::f32>, kPiece> decode(const dsl::Expr<dsl::u32>& row,
                                                 const dsl::Expr<dsl::u32>& col,
                                                 const dsl::Expr<dsl::u32>& k) const {
    using namespace iron::dsl;
    auto word = load(packed[row * (k / kPiece) + col / kPiece]);
    return values(word, cast<u32>(load(scales[row * (k / kBlock) + col / kBlock])));
  }
  /// The f32 weights of one piece from its word of codes and its block's E8M0 byte.
  static std::array<dsl::Expr<dsl::f32>, kPiece> values(const dsl::Expr<dsl::u32>& word,
                                                        const dsl::Expr<dsl::u32>& scale_byte) {
    using namespace iron::dsl;
    auto scale = decode_e8m0(scale_byte);
    std::array<Expr<f32>, kPiece> w;
    for (u32 e = 0; e < kPiece; ++e) w[e] = decode_e2m1(word >> (4 * e)) * scale;
    return w;
  }
};

/// A b source ([n, k], col_major stages) of weights in a quantized `Codes` format (AffineCodes,
/// Mxfp4Codes): each thread decodes pieces of kPiece columns of the stage's kBN weight rows
/// and writes them, rounded to T, with ordinary shared stores; rows past n and columns past k
/// are zeros. The format's k must be a multiple of kPiece (the kernels require a whole group).
///
/// Synchronous stores are safe inside product's ring. product calls `start` for a stage only
/// after the barrier that ends every simdgroup's reads of that stage, and multiplies it only
/// after the barrier that follows the step's async wait: an asynchronous copy, which may land any
/// time between its issue and that wait, needs both barriers, and a store that lands at its issue
/// is one of those times. The first barrier orders the stores after the last reads of the stage;
/// the second makes them visible to every simdgroup, as it does the other threads' copies.
/// `copy` runs between the same two barriers.
template <class T, class Codes>
struct QuantB {
  static constexpr dsl::MatrixLayout layout = dsl::col_major;
  /// 32-column steps: the decode's registers would not fit beside a 64-column step's.
  static constexpr bool wide_steps = false;
  Codes codes;

  /// The a tiles still take 16-byte asynchronous copies; the b stage never needs them.
  static dsl::Expr<bool> async_ok(const dsl::Expr<dsl::u32>& /*n*/,
                                  const dsl::Expr<dsl::u32>& /*k*/) {
    return {true};
  }
  void start(const dsl::Shared<T>& tile, const dsl::Expr<dsl::u32>& at,
             const dsl::Expr<dsl::u32>& p0, const dsl::Expr<dsl::u32>& col0,
             const dsl::Expr<dsl::u32>& n, const dsl::Expr<dsl::u32>& k) const {
    fill(tile, at, p0, col0, n, k);
  }
  void copy(const dsl::Shared<T>& tile, const dsl::Expr<dsl::u32>& p0,
            const dsl::Expr<dsl::u32>& col0, const dsl::Expr<dsl::u32>& n,
            const dsl::Expr<dsl::u32>& k) const {
    fill(tile, dsl::Expr<dsl::u32>(0u), p0, col0, n, k);
  }

 private:
  /// Decodes the stage of k step p0 for out columns col0 … into `tile` at `at`. Pieces outside
  /// the weight read a clamped piece inside it (never past the tensors) and store zeros.
  void fill(const dsl::Shared<T>& tile, const dsl::Expr<dsl::u32>& at,
            const dsl::Expr<dsl::u32>& p0, const dsl::Expr<dsl::u32>& col0,
            const dsl::Expr<dsl::u32>& n, const dsl::Expr<dsl::u32>& k) const {
    using namespace iron::dsl;
    constexpr u32 kPitch = pitch_b<T, col_major, wide_steps>();
    constexpr u32 kPiecesARow = step_k<T, wide_steps>() / kPiece;
    constexpr u32 kPieces = kBN * kPiecesARow;
    constexpr u32 kRounds = (kPieces + kThreads - 1) / kThreads;
    static_assert(step_k<T, wide_steps>() % kPiece == 0, "whole pieces a step");
    for (u32 j = 0; j < kRounds; ++j) {
      auto v = thread_id<0>() + j * kThreads;
      const auto piece = [&] {
        auto r = v / kPiecesARow;
        auto c = v % kPiecesARow * kPiece;
        auto inside = col0 + r < n && p0 + c < k;
        auto w = codes.decode(min(col0 + r, n - 1u), min(p0 + c, k - kPiece), k);
        // 16-byte stores: a piece of 16-bit T in one, of f32 in two.
        constexpr u32 kLanes = 16 / lane_bytes<T>();
        for (u32 h = 0; h < kPiece / kLanes; ++h) {
          std::array<Expr<T>, kLanes> values;
          for (u32 e = 0; e < kLanes; ++e) {
            values[e] = cast<T>(select(inside, w[h * kLanes + e], Expr<f32>(0.0f)));
          }
          store_lanes(tile[at + r * kPitch + c + h * kLanes], values);
        }
      };
      if constexpr (kPieces % kThreads == 0) {
        piece();
      } else {
        IRON_IF(v < kPieces) { piece(); }
      }
    }
  }
};

}  // namespace iron::kernels::gemm
