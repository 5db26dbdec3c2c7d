/// `iron device`: every backend Iron knows, whether it can run here and, if not, why; each CUDA
/// device with its numbers; and NVRTC.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "commands.hpp"
#include "iron/runtime/backend.hpp"
#include "iron/runtime/device_info.hpp"
#include "iron/runtime/nvrtc.hpp"
#include "target_options.hpp"

namespace iron::cli {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
constexpr double kMiB = 1024.0 * 1024.0;

void print_backends() {
  const std::string_view best = runtime::auto_backend().name;
  fmt::print("backends:\n");
  for (const auto& s : runtime::backend_statuses()) {
    if (s.available) {
      fmt::print("  {:<6} available{}\n", s.name,
                 s.name == best ? " (--backend auto uses it)" : "");
    } else {
      fmt::print("  {:<6} unavailable: {}\n", s.name, s.reason);
    }
  }
}

void print_cuda_devices() {
  const runtime::CudaReport& report = runtime::cuda_report();
  if (report.driver_loaded) {
    fmt::print("\nCUDA driver {} ({})\n", runtime::cuda_version_text(report.driver_version),
               report.driver_library);
  }
  for (const runtime::CudaDeviceInfo& d : report.devices) {
    fmt::print("\nCUDA device {}: {}\n", d.ordinal, d.name);
    fmt::print("  compute capability  {}.{} (sm_{})\n", d.major, d.minor, d.sm());
    fmt::print("  multiprocessors     {}\n", d.multiprocessors);
    fmt::print("  memory              {:.1f} GiB\n", static_cast<double>(d.memory_bytes) / kGiB);
    fmt::print("  L2 cache            {:.1f} MiB\n", static_cast<double>(d.l2_bytes) / kMiB);
    fmt::print("  SM clock            {} MHz\n", d.sm_clock_khz / 1000);
    fmt::print("  memory clock        {} MHz\n", d.memory_clock_khz / 1000);
    fmt::print("  memory bus          {} bits\n", d.bus_width_bits);
    try {
      const std::string plain = codegen::TargetProfile::cuda_device(d.sm()).name;
      const std::string warpgroup = codegen::TargetProfile::cuda_device(d.sm(), true).name;
      fmt::print("  kernels compiled as {}", plain);
      if (warpgroup != plain) fmt::print(" ({} for kernels with warpgroup products)", warpgroup);
      fmt::print("\n");
    } catch (const Error& e) {
      fmt::print("  kernels compiled as unknown: {}\n", e.what());
    }
  }
  if (!report.reason.empty() && !report.devices.empty()) {
    fmt::print("  (not every device could be described: {})\n", report.reason);
  }
}

void print_nvrtc() {
  const runtime::NvrtcStatus& nvrtc = runtime::nvrtc_status();
  if (nvrtc.available) {
    fmt::print("\nNVRTC {}.{} ({})\n", nvrtc.major, nvrtc.minor, nvrtc.library_path);
  } else {
    fmt::print("\nNVRTC unavailable: {}\n", nvrtc.reason);
  }
}

int list_devices() {
  print_backends();
  print_cuda_devices();
  print_nvrtc();
  return 0;
}

}  // namespace

Command add_device_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "device",
      fmt::format("List the backends ({}) and whether each can run here (if not, why); each "
                  "CUDA device (name, compute capability, multiprocessors, memory, L2, clocks, "
                  "bus width); and the NVRTC library that compiles CUDA kernels",
                  fmt::join(backend_names(), ", ")));
  return {cmd, list_devices};
}

}  // namespace iron::cli
