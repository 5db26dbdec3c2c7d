/// iron_audio_log_mel_normalize: Whisper's normalization of a batch of log-mel spectrograms,
/// out[b, m, t] = (max(log_mel[b, m, t], top_b − 8) + 4) / 4, where top_b, the clip's maximum
/// over its whole spectrogram, is max_p part_max[b, p]: the parts' maxima that
/// iron_audio_log_mel writes beside the spectrogram (one a group of 16 frames).
///
/// The clip's maximum is a reduction across all the groups of the first kernel, which cannot
/// see each other; rather than a third pass over the spectrogram, each of its groups leaves its
/// own maximum, and each group here reduces the few hundred of its clip (375 for 30 s, 1.5 KB
/// from the L2) before it rewrites its chunk. So the spectrogram is read once and written once,
/// in the output dtype.
///
/// ## Error bound
/// top_b − 8 rounds once, the sum with 4 once, the quarter is exact: the f32 result is within
/// u·(|top_b − 8| + max|log_mel| + 4) / 4 of the exact value (u = 2^-24), then rounded to T.
///
/// ## Layout
/// - `log_mel  [batch, n_mels, frames]` f32
/// - `part_max [batch, parts]` f32
/// - `out      [batch, n_mels, frames]` T (f32, f16 or bf16)
///
/// ## Dispatch
/// Reduction: batch · ceil(n_mels · frames / 8192) groups (a chunk of 8192 elements each), tpg a
/// multiple of 32 up to 1024. Spectrograms of n_mels · frames a multiple of 4 (Whisper's) move
/// 16 bytes of f32 an access.
#include <iron/iron.hpp>
#include <string>

namespace iron::kernels {
using namespace iron::dsl;

namespace audio {
constexpr u32 kNormalizeChunk = 8192;  ///< elements a group
}  // namespace audio

IRON_KERNEL(iron_audio_log_mel_normalize,
            (Tensor<f32> log_mel, Tensor<f32> part_max, Out<T> out, Constexpr<u32> batch,
             Constexpr<u32> n_mels, Constexpr<u32> frames, Constexpr<u32> parts)) {
  constexpr u32 K = audio::kNormalizeChunk;
  dispatch(reduction, {multiple_of(32), at_least(32), at_most(1024)});
  grid("[batch * ceil_div(n_mels * frames, " + std::to_string(K) + "), 1, 1]");
  layout(log_mel, "[batch, n_mels, frames]");
  layout(part_max, "[batch, parts]");
  layout(out, "[batch, n_mels, frames]");
  static_cast<void>(batch);  // the grid and layouts name it; the group id gives the clip

  auto tid = thread_id<0>();
  auto tpg = group_size<0>();
  auto per_clip = n_mels * frames;
  auto chunks = (per_clip + (K - 1)) / K;
  auto clip = program_id<0>() / chunks;
  auto chunk = program_id<0>() % chunks;

  Var<f32> top = -3.0e38f;
  for (auto p : range(tid, parts, tpg)) top = max(Expr<f32>(top), load(part_max[clip * parts + p]));
  auto threshold = reduce_max(Expr<f32>(top)) - 8.0f;

  auto base = clip * per_clip + chunk * K;
  auto count = min(per_clip - chunk * K, K);
  auto normalize = [&](const Expr<f32>& x) { return cast<T>((max(x, threshold) + 4.0f) * 0.25f); };
  IRON_IF(per_clip % 4u == 0u) {
    for (auto j : range(tid * 4u, count, tpg * 4u)) {
      const auto x = load_lanes<4>(log_mel[base + j]);
      std::array<Expr<T>, 4> y;
      for (u32 l = 0; l < 4; ++l) y[l] = normalize(x[l]);
      store_lanes(out[base + j], y);
    }
  }
  IRON_ELSE {
    for (auto j : range(tid, count, tpg)) store(out[base + j], normalize(load(log_mel[base + j])));
  }
}

IRON_GEOMETRY(iron_audio_log_mel_normalize) {
  const std::uint64_t per_clip = q.constant("n_mels") * q.constant("frames");
  const std::uint64_t chunks = (per_clip + audio::kNormalizeChunk - 1) / audio::kNormalizeChunk;
  return Geometry::per_row(q.constant("batch") * chunks, q.threads_per_group(256));
}

}  // namespace iron::kernels

// The tests and benches: compiled into iron_kernel_tests, never into iron_kernels.
#if IRON_KERNEL_TESTS
#include <algorithm>
#include <cmath>
#include <iron/bench/geometry.hpp>
#include <iron/bench/registry.hpp>
#include <iron/testing/geometry.hpp>
#include <iron/testing/registry.hpp>
#include <iron/testing/tolerance.hpp>
#include <vector>

namespace iron::kernels {

namespace {

struct NormalizeShape {
  std::size_t batch, n_mels, frames;
  std::size_t parts() const { return (frames + 15) / 16; }
};

/// The parts' maxima of a spectrogram, 16 frames a part, as iron_audio_log_mel writes them.
std::vector<float> part_maxima(const std::vector<float>& x, const NormalizeShape& s) {
  std::vector<float> top(s.batch * s.parts(), -1e30f);
  for (std::size_t b = 0; b < s.batch; ++b) {
    for (std::size_t m = 0; m < s.n_mels; ++m) {
      for (std::size_t t = 0; t < s.frames; ++t) {
        float& p = top[b * s.parts() + t / 16];
        p = std::max(p, x[(b * s.n_mels + m) * s.frames + t]);
      }
    }
  }
  return top;
}

testing::TestSetup normalize_setup(const NormalizeShape& s, DType dt, testing::Rng& rng) {
  namespace tol = testing::tolerance;
  const std::size_t per_clip = s.n_mels * s.frames;
  // Log-mel values as the first kernel gives them: −10 (silence) to a few, so that a part of
  // each clip falls more than 8 below its maximum.
  const auto x = rng.uniform(s.batch * per_clip, -10.0f, 2.5f);
  const auto parts = part_maxima(x, s);
  std::vector<float> want(x.size());
  double worst = 0.0;
  for (std::size_t b = 0; b < s.batch; ++b) {
    double top = -1e30;
    for (std::size_t p = 0; p < s.parts(); ++p)
      top = std::max<double>(top, parts[b * s.parts() + p]);
    for (std::size_t i = 0; i < per_clip; ++i) {
      const double v = x[b * per_clip + i];
      want[b * per_clip + i] = static_cast<float>((std::max(v, top - 8.0) + 4.0) / 4.0);
      worst = std::max(worst, (std::abs(top - 8.0) + std::abs(v) + 4.0) / 4.0);
    }
  }
  testing::TestSetup setup("iron_audio_log_mel_normalize", dt);
  setup.input("log_mel", x)
      .input("part_max", parts)
      .output("out", x.size())
      .constant("batch", static_cast<double>(s.batch))
      .constant("n_mels", static_cast<double>(s.n_mels))
      .constant("frames", static_cast<double>(s.frames))
      .constant("parts", static_cast<double>(s.parts()))
      .expect("out", want)
      .tolerance(tol::stored(dt, tol::unit_roundoff(DType::F32) * worst, 0.0));
  return setup.grid(testing::geometry_grid(setup));
}

}  // namespace

// Two clips of 80 mels × 37 frames (three parts, 16-byte accesses); a clip of 80 × 200 in two
// chunks, the second partial; 3 mels × 7 frames (21 elements: one element an access).
IRON_TEST(iron_audio_log_mel_normalize, two_clips_80x37, F32, F16, BF16) {
  return normalize_setup({2, 80, 37}, dt, rng);
}
IRON_TEST(iron_audio_log_mel_normalize, two_chunks_80x200, F32, BF16) {
  return normalize_setup({1, 80, 200}, dt, rng);
}
IRON_TEST(iron_audio_log_mel_normalize, odd_3x7, F32, F16, BF16) {
  return normalize_setup({2, 3, 7}, dt, rng);
}

// Whisper's 32 clips of 30 s: 80 mels × 3000 frames, the 188 parts of each clip.
IRON_BENCH(iron_audio_log_mel_normalize, whisper_b32_80x3000, F32, F16, BF16) {
  const NormalizeShape s{32, 80, 3000};
  const std::size_t n = s.batch * s.n_mels * s.frames;
  bench::BenchSetup setup("iron_audio_log_mel_normalize", dt);
  setup.random("log_mel", n, -10.0f, 2.5f)
      .random("part_max", s.batch * s.parts(), 1.0f, 2.5f)
      .output("out", n)
      .constant("batch", static_cast<double>(s.batch))
      .constant("n_mels", static_cast<double>(s.n_mels))
      .constant("frames", static_cast<double>(s.frames))
      .constant("parts", static_cast<double>(s.parts()));
  // The spectrogram read once and written once in T, the parts' maxima read once.
  return setup.grid(bench::geometry_grid(setup))
      .bytes_moved(n * (4 + dtype_size(dt)) + 4 * s.batch * s.parts())
      .peer("audio_log_mel_normalize", {{"batch", static_cast<double>(s.batch)},
                                        {"n_mels", static_cast<double>(s.n_mels)},
                                        {"frames", static_cast<double>(s.frames)}});
}

}  // namespace iron::kernels
#endif  // IRON_KERNEL_TESTS
