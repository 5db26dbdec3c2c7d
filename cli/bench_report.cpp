/// The `iron bench` table and JSON.
#include "bench_report.hpp"

#include <fmt/format.h>

namespace iron::cli {
namespace {

nlohmann::json timing_json(const bench::BenchTiming& t) {
  return {{"median_us", t.us.median},
          {"min_us", t.us.min},
          {"max_us", t.us.max},
          {"gbps", t.gbps},
          {"tflops", t.tflops}};
}

std::string percent_of(double value, double ceiling) {
  return ceiling > 0.0 && value > 0.0 ? fmt::format("{:.0f}%", 100.0 * value / ceiling) : "-";
}

}  // namespace

void print_bench_table(const BenchRun& run) {
  fmt::print("\n{} · {} · median of {} runs\n", run.device, run.date, run.repeat);
  double copy = 0.0;
  if (run.ceilings) {
    copy = run.ceilings->copy_gbps;
    fmt::print("ceilings: copy {:.0f} GB/s (1 GiB device-to-device); ", copy);
    if (run.ceilings->gemm.tflops) {
      fmt::print("cuBLAS bf16 {}^3 {:.0f} TFLOP/s\n", run.ceilings->gemm_n,
                 *run.ceilings->gemm.tflops);
    } else {
      fmt::print("no cuBLAS figure ({})\n", run.ceilings->gemm.reason);
    }
  }
  fmt::print("\n{:<40} {:<5} {:>10} {:>19} {:>8} {:>8} {:>6} {:>10} {:>7}\n", "bench", "dtype",
             "us", "min-max", "GB/s", "TFLOP/s", "%copy", "ref us", "vs ref");
  for (const auto& r : run.results) {
    if (!r.error.empty()) {
      fmt::print("{:<40} {:<5} FAILED: {}\n", r.name, dtype_name(r.dtype), r.error);
      continue;
    }
    std::string ref_us = "-";
    std::string ratio = "-";
    if (r.reference) {
      ref_us = fmt::format("{:.1f}", r.reference->timing.us.median);
      ratio = r.reference->matches
                  ? fmt::format("{:.2f}x", r.reference->timing.us.median / r.iron.us.median)
                  : "MISMATCH";
    }
    const std::string tflops = r.flops > 0 ? fmt::format("{:.2f}", r.iron.tflops) : "-";
    fmt::print("{:<40} {:<5} {:>10.1f} {:>19} {:>8.0f} {:>8} {:>6} {:>10} {:>7}\n", r.name,
               dtype_name(r.dtype), r.iron.us.median,
               fmt::format("{:.1f}-{:.1f}", r.iron.us.min, r.iron.us.max), r.iron.gbps, tflops,
               percent_of(r.iron.gbps, copy), ref_us, ratio);
    if (r.reference && !r.reference->matches) fmt::print("    {}\n", r.reference->message);
  }
}

nlohmann::json bench_json(const BenchRun& run) {
  nlohmann::json j;
  j["device"] = run.device;
  j["date"] = run.date;
  j["commit"] = run.commit;
  j["repeat"] = run.repeat;
  if (run.ceilings) {
    const auto& c = *run.ceilings;
    j["ceilings"] = {{"copy_gbps", c.copy_gbps},
                     {"copy_bytes", c.copy_bytes},
                     {"gemm_tflops", c.gemm.tflops ? nlohmann::json(*c.gemm.tflops) : nullptr},
                     {"gemm_n", c.gemm_n},
                     {"gemm_library", c.gemm.library},
                     {"gemm_reason", c.gemm.reason}};
  }
  j["results"] = nlohmann::json::array();
  for (const auto& r : run.results) {
    nlohmann::json e{
        {"bench", r.name},
        {"kernel", r.kernel},
        {"dtype", std::string(dtype_name(r.dtype))},
        {"bytes", r.bytes},
        {"flops", r.flops},
        {"peer_op", r.peer_op},
        {"peer_dims", r.peer_dims},
        {"grid",
         {{"groups", {r.grid.groups.x, r.grid.groups.y, r.grid.groups.z}},
          {"group_size", {r.grid.group_size.x, r.grid.group_size.y, r.grid.group_size.z}}}},
        {"buffer_sets", r.buffer_sets},
        {"working_set_bytes", r.working_set},
        {"all_written", r.all_written}};
    if (!r.error.empty()) {
      e["error"] = r.error;
    } else {
      e["iron"] = timing_json(r.iron);
    }
    if (r.reference) {
      e["reference"] = {{"name", r.reference->name},
                        {"matches", r.reference->matches},
                        {"max_abs_error", r.reference->max_abs_error},
                        {"message", r.reference->message},
                        {"timing", timing_json(r.reference->timing)}};
    }
    j["results"].push_back(std::move(e));
  }
  return j;
}

}  // namespace iron::cli
