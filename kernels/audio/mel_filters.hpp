/// The Slaney-normalized mel filterbank, from its formula in double: what
/// librosa.filters.mel(sr, n_fft, n_mels) returns (htk=False, norm="slaney", fmin 0, fmax sr/2)
/// and Whisper ships as mel_filters.npz. The tests and benches give it to the log-mel kernels as
/// their `filters` input.
///
/// The Slaney mel scale is linear below 1 kHz (3 mels per 200 Hz) and logarithmic above
/// (27 mels per factor 6.4); filter m is the triangle over the mel points m, m + 1, m + 2 (of
/// n_mels + 2 points evenly spaced in mels from 0 to sr/2), sampled at the FFT bins'
/// frequencies and scaled by 2 / (its width in Hz), so each has unit area.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

namespace iron::kernels::audio {

inline double hz_to_slaney_mel(double hz) {
  const double f_sp = 200.0 / 3.0;
  const double min_log_hz = 1000.0;
  const double min_log_mel = min_log_hz / f_sp;
  const double logstep = std::log(6.4) / 27.0;
  return hz < min_log_hz ? hz / f_sp : min_log_mel + std::log(hz / min_log_hz) / logstep;
}

inline double slaney_mel_to_hz(double mel) {
  const double f_sp = 200.0 / 3.0;
  const double min_log_hz = 1000.0;
  const double min_log_mel = min_log_hz / f_sp;
  const double logstep = std::log(6.4) / 27.0;
  return mel < min_log_mel ? mel * f_sp : min_log_hz * std::exp(logstep * (mel - min_log_mel));
}

/// filters[m, k] for m < n_mels, k ≤ n_fft / 2, row-major, rounded to f32.
inline std::vector<float> slaney_mel_filters(double sample_rate, std::size_t n_fft,
                                             std::size_t n_mels) {
  const std::size_t bins = n_fft / 2 + 1;
  const double top = hz_to_slaney_mel(sample_rate / 2.0);
  std::vector<double> points(n_mels + 2);
  for (std::size_t i = 0; i < points.size(); ++i) {
    points[i] = slaney_mel_to_hz(top * static_cast<double>(i) / static_cast<double>(n_mels + 1));
  }
  std::vector<float> filters(n_mels * bins);
  for (std::size_t m = 0; m < n_mels; ++m) {
    const double scale = 2.0 / (points[m + 2] - points[m]);
    for (std::size_t k = 0; k < bins; ++k) {
      const double hz = sample_rate / 2.0 * static_cast<double>(k) / static_cast<double>(bins - 1);
      const double rising = (hz - points[m]) / (points[m + 1] - points[m]);
      const double falling = (points[m + 2] - hz) / (points[m + 2] - points[m + 1]);
      filters[m * bins + k] = static_cast<float>(scale * std::max(0.0, std::min(rising, falling)));
    }
  }
  return filters;
}

}  // namespace iron::kernels::audio
