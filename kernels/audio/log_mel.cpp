/// iron_audio_log_mel_n{400,512}: the log-mel spectrogram of a batch of audio clips, every step
/// of a speech front end in one kernel: framing, window, real FFT, power spectrum, mel filterbank,
/// log. For clip b, frame t < frames = samples / hop and mel m:
///   x_t[n]  = audio[b, reflect(t·hop + n − N/2)] · w[n], n < N, w[n] = 0.5 − 0.5·cos(2πn/N)
///   P_t[k]  = |Σ_n x_t[n]·e^(−2πi·nk/N)|², k ≤ N/2
///   log_mel[b, m, t] = log10(max(Σ_k filters[m, k]·P_t[k], 1e-10))
/// and part_max[b, p] = max over m and the frames t of part p (16p ≤ t < 16p + 16) of log_mel.
///
/// This is torch.stft(center=True, pad_mode="reflect", periodic Hann window) followed by
/// |X|², the last frame dropped (samples / hop frames, where torch.stft gives one more), the
/// mel product and the floor at 1e-10: Whisper's log_mel_spectrogram up to its normalization,
/// at N = 400 (n_fft), hop 160, 80 or 128 mels, which iron_audio_log_mel_normalize finishes
/// ((max(x, max_b − 8) + 4) / 4 with max_b the clip's maximum over the whole spectrogram). The
/// clip's maximum needs every group of the clip, so it is a reduction across groups: each group
/// writes its part's maximum here, and the normalizing kernel reduces the clip's few hundred
/// parts before it rewrites the spectrogram (see its doc comment). n512 is the power-of-two
/// front end (radix-4/2 throughout), with the hop and filters of the caller's model.
///
/// ## How it runs
/// A group takes 16 frames of one clip. It stages the samples they span, reflect-padded, in
/// threadgroup memory, and builds its tables there: the window, the twiddles e^(−2πi·n2·k1/N)
/// and, for each mel, the span of bins where its filter is nonzero (the terms outside it are
/// exact zeros, so the sum over the span is the sum over every bin; a Slaney filter covers a
/// handful of bins, and the product costs about 2 terms a bin instead of n_mels).
/// The FFT is the four-step Cooley–Tukey split N = 16·N2 (N2 = 25 for 400 = 2^4·5^2, 32 for 512),
/// n = N2·n1 + n2, k = k1 + 16·k2:
///   step 1: a thread a (frame, n2): the 16-point real DFT over n1 in registers (radix 4), of
///           which outputs k1 ≤ 8 are kept (the rest are their conjugates);
///   step 2: a thread a (frame, k1): each input times the twiddle e^(−2πi·n2·k1/N), then the
///           N2-point DFT over n2 in registers (radix 5 for 25, radix 4/2 for 32), of which only
///           the bins k ≤ N/2 are computed, squared and summed into the power spectrum.
/// So 400 needs no padding to a power of two and no general-length DFT: a direct DFT of 400
/// real points costs 201·400 multiply-adds a frame, this split about a tenth of that, all in f32
/// registers with trace-time constants. Then a thread a (mel, frame) sums the filter's span,
/// takes the log and stores; the group's maximum goes to part_max.
///
/// ## Error bound
/// Let A_t = Σ_n |x_t[n]| (the windowed frame's absolute sum, on the samples as given). Each
/// real and imaginary part of X_t[k] is within γ_K·A_t of the exact value, K = 64: the window
/// (its cosine on a rounded argument, 2π·u·4 + 4u, and two roundings: 11u), the 16-point
/// transform (two radix-4 levels: 7u), the twiddle from the table (its sin/cos as the window's
/// plus the complex product: 27u), the N2-point transform (radix 5: two levels of at most 6u
/// and a twiddle level, 15u), with margin. So |ΔX| ≤ E_t = √2·γ_K·A_t and
/// ΔP_t[k] ≤ 2|X_t[k]|·E_t + E_t² + γ_3·P_t[k]. The mel sum of positive terms adds
/// γ_(N/2+2) relative: ΔM ≤ Σ_k f[m, k]·ΔP_t[k] + γ_(N/2+2)·M. The log: log10 of the interval
/// M ± ΔM (floored at 1e-10), plus log2's 1 ulp and the product by log10(2): (kLogU + 2)·u·|y|.
/// part_max is a maximum of such values: the same bound.
///
/// ## Layout
/// - `audio    [batch, samples]` T (f32, f16 or bf16 samples); samples > N/2 (reflect padding
///   needs it, as torch.stft's does) and samples ≥ hop (one frame at least)
/// - `filters  [n_mels, N/2 + 1]` f32 (librosa/Whisper's mel filters, any values)
/// - `log_mel  [batch, n_mels, samples / hop]` f32 (Whisper's [n_mels, frames] per clip)
/// - `part_max [batch, ceil(frames / 16)]` f32
/// - 1 ≤ hop ≤ N/2 (the staged samples of 16 frames); the FFT and every sum are f32 whatever T
///   is. The contract requires these ranges: the dispatch guard refuses a launch outside them
///
/// ## Dispatch
/// Reduction: batch · ceil(frames / 16) groups, tpg a multiple of 32 up to 256 (256 by the
/// geometry: 16 frames · 16 columns of the second step; the bound leaves a thread the registers
/// of its transform). n_mels beyond 256 run with the full
/// bin range instead of the span.
#include <cmath>
#include <iron/iron.hpp>
#include <numbers>
#include <string>

#include "small_dft.hpp"

namespace iron::kernels {
using namespace iron::dsl;

namespace audio {
constexpr u32 kFrames = 16;     ///< frames a group
constexpr u32 kColumns = 16;    ///< N1: the first step's transform length
constexpr u32 kMaxSpans = 256;  ///< mels whose nonzero span a group keeps
}  // namespace audio

IRON_KERNEL_TEMPLATE(iron_audio_log_mel, (u32 N),
                     (Tensor<T> audio, Tensor<f32> filters, Out<f32> log_mel, Out<f32> part_max,
                      Constexpr<u32> batch, Constexpr<u32> samples, Constexpr<u32> hop,
                      Constexpr<u32> n_mels)) {
  using audio::Complex;
  constexpr u32 F = audio::kFrames;
  constexpr u32 N1 = audio::kColumns;
  constexpr u32 N2 = N / N1;
  constexpr u32 B = N / 2 + 1;   // bins
  constexpr u32 C = N1 / 2 + 1;  // first-step outputs kept
  constexpr u32 S = N2 | 1u;     // twiddle row stride (odd: no bank conflicts)
  constexpr u32 kStage = (F + 1) * N / 2;
  static_assert(N % N1 == 0 && F * B <= kStage);
  const std::string parts_of = "ceil_div(samples / hop, " + std::to_string(F) + ")";
  dispatch(reduction, {multiple_of(32), at_least(32), at_most(256)});
  // The stage holds 16 frames' samples at a hop up to N/2; reflect padding needs a clip longer
  // than N/2, and a frame needs samples ≥ hop.
  require_at_least(hop, "1");
  require_at_most(hop, std::to_string(N / 2));
  require_at_least(samples, std::to_string(N / 2 + 1));
  require_at_least(samples, "hop");
  grid("[batch * " + parts_of + ", 1, 1]");
  layout(audio, "[batch, samples]");
  layout(filters, "[n_mels, " + std::to_string(B) + "]");
  layout(log_mel, "[batch, n_mels, samples / hop]");
  layout(part_max, "[batch, " + parts_of + "]");
  static_cast<void>(batch);  // the grid and layouts name it; the group id gives the clip

  auto tid = thread_id<0>();
  auto tpg = group_size<0>();
  auto frames = samples / hop;
  auto parts = (frames + (F - 1)) / F;
  auto clip = program_id<0>() / parts;
  auto part = program_id<0>() % parts;
  auto first = part * F;  // the group's first frame
  const f32 turn = static_cast<f32>(2.0 * std::numbers::pi / N);

  auto staged = shared<f32>(kStage);   // the samples, later the power spectra [F, B]
  auto zre = shared<f32>(F * N2 * C);  // first step: [F, N2, C]
  auto zim = shared<f32>(F * N2 * C);
  auto wre = shared<f32>(N1 * S);  // e^(−2πi·n2·k1/N) = wre − i·wim at k1·S + n2
  auto wim = shared<f32>(N1 * S);
  auto window = shared<f32>(N);
  auto span_lo = shared<u32>(audio::kMaxSpans);
  auto span_hi = shared<u32>(audio::kMaxSpans);

  // Tables: the periodic Hann window and the twiddles.
  for (auto j : range(tid, N, tpg)) {
    store(window[j], 0.5f - 0.5f * cos(cast<f32>(j) * turn));
  }
  for (auto j : range(tid, N1 * N2, tpg)) {
    auto k1 = j / N2;
    auto n2 = j % N2;
    auto angle = cast<f32>(k1 * n2) * turn;
    store(wre[k1 * S + n2], cos(angle));
    store(wim[k1 * S + n2], sin(angle));
  }

  // Each mel's nonzero span [lo, hi) of bins: a simdgroup a mel.
  auto lane = lane_id();
  for (auto m : range(simdgroup_id(), min(n_mels, audio::kMaxSpans), simdgroup_count())) {
    Var<u32> lo = B;
    Var<u32> hi = 0u;
    for (auto k : range(lane, B, 32u)) {
      IRON_IF(load(filters[m * B + k]) != 0.0f) {
        lo = min(Expr<u32>(lo), k);
        hi = max(Expr<u32>(hi), k + 1u);
      }
    }
    auto all_lo = simd_min(Expr<u32>(lo));
    auto all_hi = simd_max(Expr<u32>(hi));
    IRON_IF(lane == 0u) {
      store(span_lo[m], all_lo);
      store(span_hi[m], all_hi);
    }
  }

  // The samples of the group's frames, reflect-padded by N/2 on both sides.
  auto base = clip * samples;
  auto last = cast<i32>(samples) * 2 - 2;
  auto count = min((F - 1) * hop + N, kStage);
  for (auto j : range(tid, count, tpg)) {
    auto s = abs(cast<i32>(first * hop + j) - static_cast<int>(N / 2));
    auto r = max(min(s, last - s), 0);
    store(staged[j], cast<f32>(load(audio[base + cast<u32>(r)])));
  }
  barrier();

  // Step 1: a (frame, n2) pair a thread, the 16-point real DFT over n1.
  for (auto task : range(tid, F * N2, tpg)) {
    auto f = task / N2;
    auto n2 = task % N2;
    auto at = f * hop + n2;
    std::vector<Complex> x;
    for (u32 n1 = 0; n1 < N1; ++n1) {
      x.push_back({load(staged[at + N2 * n1]) * load(window[n2 + N2 * n1]), std::nullopt});
    }
    const auto y = audio::small_dft(x);
    for (u32 k1 = 0; k1 < C; ++k1) {
      store(zre[task * C + k1], y[k1].re.value_or(Expr<f32>(0.0f)));
      store(zim[task * C + k1], y[k1].im.value_or(Expr<f32>(0.0f)));
    }
  }
  barrier();

  // Step 2: a (frame, k1) pair a thread: twiddles, the N2-point DFT over n2, |X|² of the bins
  // k1 + 16·k2 ≤ N/2 into the staging buffer.
  for (auto task : range(tid, F * N1, tpg)) {
    auto f = task / N1;
    auto k1 = task % N1;
    auto upper = k1 > N1 / 2;  // columns past N1/2 are the conjugates of N1 − k1
    auto column = select(upper, N1 - k1, k1);
    auto sign = select(upper, Expr<f32>(-1.0f), Expr<f32>(1.0f));
    auto zbase = f * (N2 * C) + column;
    std::vector<Complex> z;
    for (u32 n2 = 0; n2 < N2; ++n2) {
      auto re = load(zre[zbase + n2 * C]);
      auto im = sign * load(zim[zbase + n2 * C]);
      if (n2 == 0) {
        z.push_back({re, im});
        continue;
      }
      auto c = load(wre[k1 * S + n2]);
      auto s = load(wim[k1 * S + n2]);
      // (re + i·im)(c − i·s)
      z.push_back({fma(re, c, im * s), fma(im, c, -(re * s))});
    }
    const auto X = audio::small_dft(z);
    for (u32 k2 = 0; k2 < N2 && N1 * k2 <= N / 2; ++k2) {
      const Expr<f32> re = X[k2].re.value_or(Expr<f32>(0.0f));
      const Expr<f32> im = X[k2].im.value_or(Expr<f32>(0.0f));
      auto power = fma(re, re, im * im);
      auto bin = k1 + N1 * k2;
      if (N1 * k2 + N1 - 1 <= N / 2) {
        store(staged[f * B + bin], power);
      } else {
        IRON_IF(bin <= N / 2) { store(staged[f * B + bin], power); }
      }
    }
  }
  barrier();

  // The mel sums over each filter's span, the log, the part's maximum.
  Var<f32> top = -3.0e38f;
  for (auto task : range(tid, n_mels * F, tpg)) {
    auto m = task / F;
    auto f = task % F;
    auto t = first + f;
    auto kept = m < audio::kMaxSpans;
    auto slot = min(m, audio::kMaxSpans - 1u);
    auto lo = select(kept, load(span_lo[slot]), Expr<u32>(0u));
    auto hi = select(kept, load(span_hi[slot]), Expr<u32>(B));
    Var<f32> mel = 0.0f;
    for (auto k : range(lo, hi, 1u)) {
      mel = fma(load(filters[m * B + k]), load(staged[f * B + k]), Expr<f32>(mel));
    }
    IRON_IF(t < frames) {
      auto y = log2(max(Expr<f32>(mel), 1e-10f)) *
               static_cast<f32>(std::numbers::ln2 / std::numbers::ln10);
      store(log_mel[(clip * n_mels + m) * frames + t], y);
      top = max(Expr<f32>(top), y);
    }
  }
  auto group_max = reduce_max(Expr<f32>(top));
  IRON_IF(tid == 0u) { store(part_max[clip * parts + part], group_max); }
}
IRON_KERNEL_VARIANT(iron_audio_log_mel, n400, 400);
IRON_KERNEL_VARIANT(iron_audio_log_mel, n512, 512);

namespace audio {
/// A group of 256 threads for each 16 frames of a clip.
inline Geometry log_mel_geometry(const GeometryQuery& q) {
  const std::uint64_t frames = q.constant("samples") / q.constant("hop");
  const std::uint64_t parts = (frames + kFrames - 1) / kFrames;
  return Geometry::per_row(q.constant("batch") * parts, q.threads_per_group(256));
}
}  // namespace audio

IRON_GEOMETRY(iron_audio_log_mel_n400) { return audio::log_mel_geometry(q); }
IRON_GEOMETRY(iron_audio_log_mel_n512) { return audio::log_mel_geometry(q); }

}  // namespace iron::kernels

// The tests and benches: compiled into iron_kernel_tests, never into iron_kernels.
#if IRON_KERNEL_TESTS
#include <algorithm>
#include <complex>
#include <iron/bench/geometry.hpp>
#include <iron/bench/registry.hpp>
#include <iron/testing/geometry.hpp>
#include <iron/testing/registry.hpp>
#include <iron/testing/tolerance.hpp>
#include <vector>

#include "mel_filters.hpp"

namespace iron::kernels {

namespace {

struct LogMelShape {
  std::size_t n_fft, batch, samples, hop, n_mels;
  std::size_t frames() const { return samples / hop; }
  std::size_t parts() const { return (frames() + audio::kFrames - 1) / audio::kFrames; }
  std::size_t bins() const { return n_fft / 2 + 1; }
};

struct LogMelWant {
  std::vector<float> log_mel, part_max;
  double bound = 0.0;  ///< the error bound's largest value over the outputs
};

/// The definition in double: reflect-padded frames, the periodic Hann window, a direct DFT from
/// its sum, |X|², the mel product, log10 of the floored value; and the error bound of the doc
/// comment evaluated on this data.
LogMelWant log_mel_oracle(const std::vector<float>& x, const std::vector<float>& filters,
                          const LogMelShape& s) {
  namespace tol = testing::tolerance;
  const std::size_t n = s.n_fft;
  const std::size_t bins = s.bins();
  const std::size_t frames = s.frames();
  const auto size = static_cast<double>(n);
  const auto half = static_cast<std::int64_t>(n / 2);
  const auto len = static_cast<std::int64_t>(s.samples);
  const double pi = std::numbers::pi;
  const double u = tol::unit_roundoff(DType::F32);
  LogMelWant want;
  want.log_mel.resize(s.batch * s.n_mels * frames);
  want.part_max.assign(s.batch * s.parts(), -1e30f);
  for (std::size_t b = 0; b < s.batch; ++b) {
    for (std::size_t t = 0; t < frames; ++t) {
      std::vector<double> frame(n);
      double abs_sum = 0.0;
      for (std::size_t i = 0; i < n; ++i) {
        std::int64_t at = static_cast<std::int64_t>(t * s.hop + i) - half;
        if (at < 0) at = -at;
        if (at >= len) at = 2 * (len - 1) - at;
        const double w = 0.5 - 0.5 * std::cos(2.0 * pi * static_cast<double>(i) / size);
        frame[i] = x[b * s.samples + static_cast<std::size_t>(at)] * w;
        abs_sum += std::abs(frame[i]);
      }
      const double e = std::sqrt(2.0) * tol::gamma(64) * abs_sum;
      std::vector<double> power(bins);
      std::vector<double> power_err(bins);
      for (std::size_t k = 0; k < bins; ++k) {
        std::complex<double> sum = 0.0;
        for (std::size_t i = 0; i < n; ++i) {
          sum += frame[i] * std::polar(1.0, -2.0 * pi * static_cast<double>(i * k % n) / size);
        }
        power[k] = std::norm(sum);
        power_err[k] = 2.0 * std::abs(sum) * e + e * e + tol::gamma(3) * power[k];
      }
      for (std::size_t m = 0; m < s.n_mels; ++m) {
        double mel = 0.0;
        double mel_err = 0.0;
        for (std::size_t k = 0; k < bins; ++k) {
          mel += filters[m * bins + k] * power[k];
          mel_err += filters[m * bins + k] * power_err[k];
        }
        mel_err += tol::gamma(bins + 1) * mel;
        const double y = std::log10(std::max(mel, 1e-10));
        const double lo = std::log10(std::max(mel - mel_err, 1e-10));
        const double hi = std::log10(std::max(mel + mel_err, 1e-10));
        want.bound =
            std::max(want.bound, std::max(hi - y, y - lo) + (tol::kLogU + 2) * u * std::abs(y));
        want.log_mel[(b * s.n_mels + m) * frames + t] = static_cast<float>(y);
        float& top = want.part_max[b * s.parts() + t / audio::kFrames];
        top = std::max(top, static_cast<float>(y));
      }
    }
  }
  return want;
}

std::string log_mel_name(std::size_t n_fft) {
  return "iron_audio_log_mel_n" + std::to_string(n_fft);
}

testing::TestSetup log_mel_setup(const LogMelShape& s, DType dt, testing::Rng& rng) {
  namespace tol = testing::tolerance;
  const auto x = testing::round_through(rng.uniform(s.batch * s.samples, -1.0f, 1.0f), dt);
  const auto filters = audio::slaney_mel_filters(16000.0, s.n_fft, s.n_mels);
  const LogMelWant want = log_mel_oracle(x, filters, s);
  testing::TestSetup setup(log_mel_name(s.n_fft), dt);
  setup.input("audio", x)
      .input("filters", filters)
      .output("log_mel", want.log_mel.size())
      .output("part_max", want.part_max.size())
      .constant("batch", static_cast<double>(s.batch))
      .constant("samples", static_cast<double>(s.samples))
      .constant("hop", static_cast<double>(s.hop))
      .constant("n_mels", static_cast<double>(s.n_mels))
      .expect("log_mel", want.log_mel)
      .expect("part_max", want.part_max)
      .tolerance(tol::stored(DType::F32, want.bound, 0.0));
  return setup.grid(testing::geometry_grid(setup));
}

bench::BenchSetup log_mel_bench(const LogMelShape& s, DType dt) {
  bench::BenchSetup setup(log_mel_name(s.n_fft), dt);
  setup.random("audio", s.batch * s.samples)
      .input("filters", audio::slaney_mel_filters(16000.0, s.n_fft, s.n_mels))
      .output("log_mel", s.batch * s.n_mels * s.frames())
      .output("part_max", s.batch * s.parts())
      .constant("batch", static_cast<double>(s.batch))
      .constant("samples", static_cast<double>(s.samples))
      .constant("hop", static_cast<double>(s.hop))
      .constant("n_mels", static_cast<double>(s.n_mels));
  // The samples read once, the filters once, the spectrogram and the parts' maxima written once.
  return setup.grid(bench::geometry_grid(setup))
      .bytes_moved(s.batch * s.samples * dtype_size(dt) + 4 * s.n_mels * s.bins() +
                   4 * s.batch * (s.n_mels * s.frames() + s.parts()))
      .peer("audio_log_mel", {{"batch", static_cast<double>(s.batch)},
                              {"samples", static_cast<double>(s.samples)},
                              {"n_fft", static_cast<double>(s.n_fft)},
                              {"hop", static_cast<double>(s.hop)},
                              {"n_mels", static_cast<double>(s.n_mels)}});
}

}  // namespace

// Whisper's front end: two clips of 2000 samples (12 frames: the hop does not divide the length,
// the last group's frames run past the clip), 80 mels; 128 mels (large-v3) on 10 whole hops.
IRON_TEST(iron_audio_log_mel_n400, two_clips_80_mels, F32, F16, BF16) {
  return log_mel_setup({400, 2, 2000, 160, 80}, dt, rng);
}
IRON_TEST(iron_audio_log_mel_n400, mels_128, F32, F16, BF16) {
  return log_mel_setup({400, 1, 1600, 160, 128}, dt, rng);
}
// A clip shorter than n_fft: one frame, reflected at both ends.
IRON_TEST(iron_audio_log_mel_n400, short_clip_one_frame, F32, F16, BF16) {
  return log_mel_setup({400, 3, 260, 160, 80}, dt, rng);
}
// More than one group a clip: 37 frames, three parts, the last of 5.
IRON_TEST(iron_audio_log_mel_n400, frames_37, F32) {
  return log_mel_setup({400, 1, 6000, 160, 80}, dt, rng);
}
// The power-of-two transform: 512 points (hop 128, 64 mels), and a short clip of one frame.
IRON_TEST(iron_audio_log_mel_n512, hop_128_mels_64, F32, F16, BF16) {
  return log_mel_setup({512, 2, 1500, 128, 64}, dt, rng);
}
IRON_TEST(iron_audio_log_mel_n512, short_clip_one_frame, F32, BF16) {
  return log_mel_setup({512, 1, 300, 160, 80}, dt, rng);
}

// 32 clips of Whisper's 30 s at 16 kHz (3000 frames each), 80 and 128 mels.
IRON_BENCH(iron_audio_log_mel_n400, whisper_b32_30s_80_mels, F32, F16, BF16) {
  return log_mel_bench({400, 32, 480000, 160, 80}, dt);
}
IRON_BENCH(iron_audio_log_mel_n400, whisper_b32_30s_128_mels, F32) {
  return log_mel_bench({400, 32, 480000, 160, 128}, dt);
}
IRON_BENCH(iron_audio_log_mel_n512, b32_30s_hop_160_80_mels, F32) {
  return log_mel_bench({512, 32, 480000, 160, 80}, dt);
}

}  // namespace iron::kernels
#endif  // IRON_KERNEL_TESTS
