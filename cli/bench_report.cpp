/// The `iron bench` table and JSON.
#include "bench_report.hpp"

#include <fmt/format.h>

#include <optional>
#include <string>
#include <utility>

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

/// A reference's median µs and Iron's speed-up over it, as two table cells ("-" when none).
std::pair<std::string, std::string> reference_cells(const std::optional<bench::ReferenceResult>& r,
                                                    const bench::BenchTiming& iron) {
  if (!r) return {"-", "-"};
  if (!r->unavailable.empty()) return {"-", "n/a"};
  return {fmt::format("{:.1f}", r->timing.us.median),
          r->matches ? fmt::format("{:.2f}x", r->timing.us.median / iron.us.median) : "MISMATCH"};
}

nlohmann::json reference_json(const bench::ReferenceResult& r) {
  if (!r.unavailable.empty()) return {{"name", r.name}, {"unavailable", r.unavailable}};
  return {{"name", r.name},
          {"matches", r.matches},
          {"max_abs_error", r.max_abs_error},
          {"message", r.message},
          {"timing", timing_json(r.timing)}};
}

}  // namespace

void print_bench_table(const BenchRun& run) {
  fmt::print("\n{} · {} · median of {} runs\n", run.device, run.date, run.repeat);
  double copy = 0.0;
  if (run.ceilings) {
    copy = run.ceilings->copy_gbps;
    fmt::print("ceilings: copy {:.0f} GB/s (1 GiB device-to-device); ", copy);
    if (run.ceilings->gemm.tflops) {
      fmt::print("cuBLAS bf16 {}^3 {:.0f} TFLOP/s", run.ceilings->gemm_n,
                 *run.ceilings->gemm.tflops);
    } else {
      fmt::print("no cuBLAS figure ({})", run.ceilings->gemm.reason);
    }
    if (run.ceilings->mma_sync_tflops) {
      fmt::print("; mma.sync bf16 {:.0f} TFLOP/s", *run.ceilings->mma_sync_tflops);
    }
    fmt::print("\n");
  }
  fmt::print("\n{:<40} {:<5} {:>10} {:>19} {:>8} {:>8} {:>6} {:>10} {:>8} {:>10} {:>8}\n", "bench",
             "dtype", "us", "min-max", "GB/s", "TFLOP/s", "%copy", "ref us", "vs ref", "lib us",
             "vs lib");
  for (const auto& r : run.results) {
    if (!r.error.empty()) {
      fmt::print("{:<40} {:<5} FAILED: {}\n", r.name, dtype_name(r.dtype), r.error);
      continue;
    }
    const auto [ref_us, ref_ratio] = reference_cells(r.reference, r.iron);
    const auto [lib_us, lib_ratio] = reference_cells(r.library, r.iron);
    const std::string tflops = r.flops > 0 ? fmt::format("{:.2f}", r.iron.tflops) : "-";
    fmt::print("{:<40} {:<5} {:>10.1f} {:>19} {:>8.0f} {:>8} {:>6} {:>10} {:>8} {:>10} {:>8}\n",
               r.name, dtype_name(r.dtype), r.iron.us.median,
               fmt::format("{:.1f}-{:.1f}", r.iron.us.min, r.iron.us.max), r.iron.gbps, tflops,
               percent_of(r.iron.gbps, copy), ref_us, ref_ratio, lib_us, lib_ratio);
    for (const auto* ref : {&r.reference, &r.library}) {
      if (*ref && (*ref)->unavailable.empty() && !(*ref)->matches) {
        fmt::print("    {}: {}\n", (*ref)->name, (*ref)->message);
      }
    }
    if (r.library && !r.library->unavailable.empty()) {
      fmt::print("    {}: not run: {}\n", r.library->name, r.library->unavailable);
    }
    if (!r.tuning.empty()) fmt::print("    tuned: {}\n", r.tuning);
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
    j["ceilings"] = {
        {"copy_gbps", c.copy_gbps},
        {"copy_bytes", c.copy_bytes},
        {"gemm_tflops", c.gemm.tflops ? nlohmann::json(*c.gemm.tflops) : nullptr},
        {"gemm_n", c.gemm_n},
        {"mma_sync_tflops", c.mma_sync_tflops ? nlohmann::json(*c.mma_sync_tflops) : nullptr},
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
        {"tuning", r.tuning},
        {"buffer_sets", r.buffer_sets},
        {"working_set_bytes", r.working_set},
        {"all_written", r.all_written}};
    if (!r.error.empty()) {
      e["error"] = r.error;
    } else {
      e["iron"] = timing_json(r.iron);
    }
    if (r.reference) e["reference"] = reference_json(*r.reference);
    if (r.library) e["library"] = reference_json(*r.library);
    j["results"].push_back(std::move(e));
  }
  return j;
}

}  // namespace iron::cli
