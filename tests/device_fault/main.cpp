/// A kernel that faults on the GPU, launched through the device API in a process of its own (a
/// fault ends the CUDA context): the next wait must say so, and every later launch must be
/// refused with that first fault. Prints "ok"; "SKIPPED: …" where there is no CUDA.
#include <fmt/format.h>

#include <exception>
#include <iron/iron.hpp>
#include <iron/runtime/device.hpp>
#include <string>

using namespace iron::dsl;

// Writes 4 GiB past the start of `out`, where nothing is mapped: an illegal address.
IRON_KERNEL(device_fault_probe, (Out<f32> out, Constexpr<u32> n)) {
  dispatch(elementwise);
  grid("[<= ceil_div(n, tpg), 1, 1]");
  layout(out, "[n]");
  for (auto i : range(global_id<0>(), n, grid_threads<0>())) {
    store(out[i + 0x40000000u], 1.0f);
  }
}

namespace {

/// The message of what `f` throws, "" when it throws nothing.
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

int main() {
  using namespace iron::runtime;
  if (!cuda_available()) {
    fmt::print("SKIPPED: no CUDA: {}\n", cuda_unavailable_reason());
    return 0;
  }
  const iron::ir::Kernel kernel = kernel_ir_for("device_fault_probe", iron::DType::F32);
  DeviceTensor out = DeviceTensor::allocate(iron::DType::F32, 256);
  const Stream stream = Stream::create();
  const std::vector<DeviceArg> args = {&out, Scalar{.dtype = iron::DType::U32, .i = 256}};
  const std::string launch =
      error_of([&] { launch_async(kernel, args, Grid::elementwise(256, 128), stream); });
  const std::string wait = error_of([&] { stream.synchronize(); });
  const std::string after =
      error_of([&] { launch_async(kernel, args, Grid::elementwise(256, 128), stream); });
  fmt::print("launch: '{}'\nwait: '{}'\nafter: '{}'\n", launch, wait, after);
  const bool right = launch.empty() && has(wait, "the CUDA context is unusable") &&
                     has(after, "device_fault_probe: not run: the CUDA context is unusable");
  fmt::print("{}\n", right ? "ok" : "wrong");
  return right ? 0 : 1;
}
