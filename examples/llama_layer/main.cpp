/// One Llama-style decoder layer in bf16 on the GPU, built only from Iron's library kernels through
/// the device API (iron_layer.hpp): a prefill of a prompt into an empty KV cache and a decode step
/// of one token over a filled cache, each checked against the layer computed on the host in f32
/// (reference_layer.hpp) and timed with CUDA events; the decode step also as a replayed CUDA
/// graph.
///
/// The check: Iron's largest error against the f32 layer must stay within twice that of the same
/// host layer rounded to bf16 wherever Iron stores bf16 (what any bf16 layer loses) plus 1/64.
///
/// Usage: iron_llama_layer [--small] [--repeat N] [--json FILE]
///   --small: a small layer of the same structure, every output row checked (the test's form);
///   default: Llama-3-8B's layer, a prefill of 2048 tokens (4 rows checked) and a decode step at
///   context 4096. Prints "ok" and exits 0 when every form passes; "SKIPPED: …" and 0 without
///   CUDA; 1 on a mismatch or an error.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <exception>
#include <fstream>
#include <iron/core/half.hpp>
#include <iron/iron.hpp>
#include <iron/runtime/device.hpp>
#include <iron/runtime/device_info.hpp>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "iron_layer.hpp"
#include "layer_shape.hpp"
#include "reference_layer.hpp"

namespace {

using llama::LayerShape;

struct Options {
  LayerShape shape = llama::kLlama3_8B;
  bool small = false;
  int repeat = 20;
  std::string json;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--small") {
      o.shape = llama::kSmall;
      o.small = true;
    } else if (arg == "--repeat" && i + 1 < argc) {
      o.repeat = std::max(1, std::atoi(argv[++i]));
    } else if (arg == "--json" && i + 1 < argc) {
      o.json = argv[++i];
    } else {
      throw iron::Error("usage: iron_llama_layer [--small] [--repeat N] [--json FILE] (got '" +
                        arg + "')");
    }
  }
  return o;
}

/// `count` values uniform in ±scale·√3 (standard deviation `scale`) plus `offset`, rounded to
/// bf16, from a splitmix64 sequence of its own seed.
std::vector<float> random_bf16(std::size_t count, float scale, std::uint64_t seed,
                               float offset = 0.0f) {
  std::vector<float> v(count);
  std::uint64_t state = seed * 0x9E3779B97F4A7C15ull + 1;
  for (float& e : v) {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    const double unit = static_cast<double>(z >> 11) / 9007199254740992.0;  // [0, 1)
    e = iron::round_to_bf16(
        static_cast<float>(offset + (2.0 * unit - 1.0) * std::sqrt(3.0) * scale));
  }
  return v;
}

llama::Weights make_weights(const LayerShape& s) {
  const float in_scale = 1.0f / std::sqrt(static_cast<float>(s.hidden));
  const std::size_t h = s.hidden;
  return {random_bf16(h, 0.1f, 1, 1.0f),
          random_bf16(h, 0.1f, 2, 1.0f),
          random_bf16(s.q_width() * h, in_scale, 3),
          random_bf16(s.kv_width() * h, in_scale, 4),
          random_bf16(s.kv_width() * h, in_scale, 5),
          random_bf16(h * s.q_width(), 1.0f / std::sqrt(static_cast<float>(s.q_width())), 6),
          random_bf16(s.ffn * h, in_scale, 7),
          random_bf16(s.ffn * h, in_scale, 8),
          random_bf16(h * s.ffn, 1.0f / std::sqrt(static_cast<float>(s.ffn)), 9)};
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

/// The median in microseconds of `repeat` runs of `enqueue` on `stream`, each between two events,
/// after two runs that warm the caches (and compile nothing further).
template <class F>
double median_us(const iron::runtime::Stream& stream, int repeat, F&& enqueue) {
  for (int i = 0; i < 2; ++i) enqueue();
  std::vector<double> times;
  for (int i = 0; i < repeat; ++i) {
    iron::runtime::Event start;
    iron::runtime::Event stop;
    start.record(stream);
    enqueue();
    stop.record(stream);
    stop.synchronize();
    times.push_back(1000.0 * stop.elapsed_ms(start));
  }
  return median(times);
}

/// The largest |got[rows[r], i] − want[r][i]| (got [tokens, hidden] flat), NaN counted as ∞.
double max_error(const std::vector<std::vector<float>>& want, const std::vector<float>& got,
                 const std::vector<std::uint32_t>& rows, std::uint32_t hidden) {
  double worst = 0.0;
  for (std::size_t r = 0; r < rows.size(); ++r) {
    for (std::uint32_t i = 0; i < hidden; ++i) {
      const double e = std::abs(double{got[std::size_t{rows[r]} * hidden + i]} - want[r][i]);
      worst = std::isnan(e) ? INFINITY : std::max(worst, e);
    }
  }
  return worst;
}

/// The rows of `rows_of` one after the other, with the row indices 0, 1, … that address them.
std::pair<std::vector<float>, std::vector<std::uint32_t>> flatten(
    const std::vector<std::vector<float>>& rows_of) {
  std::vector<float> flat;
  std::vector<std::uint32_t> index;
  for (const auto& row : rows_of) {
    index.push_back(static_cast<std::uint32_t>(index.size()));
    flat.insert(flat.end(), row.begin(), row.end());
  }
  return {flat, index};
}

/// One form: `tokens` tokens at positions first …, the cache's earlier positions random. Runs it
/// once and checks it, then times it (and, for one token, its replayed graph). Returns its JSON
/// record; clears `passed` when the check fails.
nlohmann::json run_form(const std::string& name, const Options& o, const llama::Weights& w,
                        const llama::DeviceWeights& dw, std::uint32_t first, std::uint32_t tokens,
                        bool& passed) {
  const LayerShape& s = o.shape;
  const iron::runtime::Stream stream = iron::runtime::Stream::create();
  llama::LayerInput in;
  in.first = first;
  in.tokens = tokens;
  in.x = random_bf16(std::size_t{tokens} * s.hidden, 1.0f, 10 + first);
  const std::size_t cache = std::size_t{s.kv_heads} * s.max_seq * s.head_dim;
  in.k_cache = random_bf16(cache, 1.0f, 20 + first);
  in.v_cache = random_bf16(cache, 1.0f, 30 + first);

  const auto x = llama::upload_bf16(in.x);
  auto k_cache = llama::upload_bf16(in.k_cache);
  auto v_cache = llama::upload_bf16(in.v_cache);
  std::vector<std::uint32_t> position_values(tokens);
  for (std::uint32_t t = 0; t < tokens; ++t) position_values[t] = first + t;
  auto positions = iron::runtime::DeviceTensor::allocate(iron::DType::U32, tokens);
  positions.upload(std::as_bytes(std::span(position_values)));
  const std::uint32_t length = first + tokens;
  auto seq_len = iron::runtime::DeviceTensor::allocate(iron::DType::U32, 1);
  seq_len.upload(std::as_bytes(std::span(&length, 1)));

  llama::IronLayer layer(s, tokens);
  const auto enqueue = [&] { layer.enqueue(stream, dw, x, positions, seq_len, k_cache, v_cache); };
  enqueue();
  stream.synchronize();
  const std::vector<float> got = llama::download_bf16(layer.output());

  std::vector<std::uint32_t> rows;
  if (o.small) {
    for (std::uint32_t t = 0; t < tokens; ++t) rows.push_back(t);
  } else {
    rows = {0, tokens / 2, tokens - 1};
    rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
  }
  const auto want = llama::reference_rows(s, w, in, rows, false);
  const auto [rounded, rounded_rows] = flatten(llama::reference_rows(s, w, in, rows, true));
  const double error = max_error(want, got, rows, s.hidden);
  const double bf16_error = max_error(want, rounded, rounded_rows, s.hidden);
  const bool ok = error <= 2.0 * bf16_error + 1.0 / 64.0;
  passed = passed && ok;

  nlohmann::json record = {{"form", name},       {"tokens", tokens},
                           {"context", length},  {"rows_checked", rows.size()},
                           {"max_error", error}, {"bf16_reference_max_error", bf16_error},
                           {"passed", ok}};
  record["iron_us"] = median_us(stream, o.repeat, enqueue);
  std::string line = fmt::format(
      "{}: {} tokens at context {}: max error {:.4g} (a bf16 layer's {:.4g}) {}; {:.1f} us", name,
      tokens, length, error, bf16_error, ok ? "ok" : "MISMATCH", record["iron_us"].get<double>());
  if (tokens == 1) {
    const auto graph = iron::runtime::Graph::capture(stream, enqueue);
    record["iron_graph_us"] = median_us(stream, o.repeat, [&] { graph.replay(stream); });
    line += fmt::format(", as a CUDA graph {:.1f} us", record["iron_graph_us"].get<double>());
  }
  fmt::print("{}\n", line);
  return record;
}

/// "2026-12-03T10:00:00Z".
std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return text;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Options o = parse(argc, argv);
    if (!iron::runtime::cuda_available()) {
      fmt::print("SKIPPED: {}\n", iron::runtime::cuda_unavailable_reason());
      return 0;
    }
    const LayerShape& s = o.shape;
    const llama::Weights w = make_weights(s);
    const llama::DeviceWeights dw(w);
    bool passed = true;
    nlohmann::json forms = nlohmann::json::array();
    forms.push_back(run_form("prefill", o, w, dw, 0, s.prefill_tokens, passed));
    forms.push_back(run_form("decode", o, w, dw, s.context - 1, 1, passed));
    if (!o.json.empty()) {
      const auto& devices = iron::runtime::cuda_report().devices;
      const char* commit = std::getenv("IRON_COMMIT");
      const nlohmann::json report = {{"device", devices.empty() ? "unknown" : devices[0].name},
                                     {"date", utc_now()},
                                     {"commit", commit ? commit : "unknown"},
                                     {"shape",
                                      {{"hidden", s.hidden},
                                       {"heads", s.heads},
                                       {"kv_heads", s.kv_heads},
                                       {"head_dim", s.head_dim},
                                       {"ffn", s.ffn},
                                       {"max_seq", s.max_seq}}},
                                     {"repeat", o.repeat},
                                     {"forms", forms}};
      std::ofstream(o.json) << report.dump(2) << "\n";
    }
    fmt::print("{}\n", passed ? "ok" : "mismatch");
    return passed ? 0 : 1;
  } catch (const std::exception& e) {
    fmt::print(stderr, "{}\n", e.what());
    return 1;
  }
}
