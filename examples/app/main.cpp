/// An application of Iron: a kernel of its own and one of the library's, traced, compiled and
/// run on the best backend here (the GPU when there is one, else the simulator), and, on a GPU,
/// the library's softmax on device tensors through its generated entry point (iron::lib), each
/// checked against the same math computed on the host. Prints "ok" and exits 0 when all match.
#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <exception>
#include <iron/iron.hpp>
#include <iron/runtime/backend.hpp>
#include <iron/runtime/device.hpp>
#include <vector>

#include "iron_kernels.hpp"

using namespace iron::dsl;

// y[i] = a · x[i] + y[i] for i < n.
IRON_KERNEL(app_axpy, (Tensor<T> x, InOut<T> y, Constexpr<f32> a, Constexpr<u32> n)) {
  dispatch(elementwise);
  grid("[<= ceil_div(n, tpg), 1, 1]");
  layout(x, "[n]");
  layout(y, "[n]");
  for (auto i : range(global_id<0>(), n, grid_threads<0>())) {
    store(y[i], cast<T>(a * cast<f32>(load(x[i])) + cast<f32>(load(y[i]))));
  }
}

namespace {

iron::runtime::HostTensor f32_tensor(const std::vector<float>& values) {
  iron::runtime::HostTensor t{iron::DType::F32, std::vector<std::byte>(values.size() * 4)};
  std::memcpy(t.bytes.data(), values.data(), t.bytes.size());
  return t;
}

std::vector<float> values_of(const iron::runtime::HostTensor& t) {
  std::vector<float> v(t.count());
  std::memcpy(v.data(), t.bytes.data(), t.bytes.size());
  return v;
}

iron::runtime::Scalar u32(std::uint32_t v) {
  return {.dtype = iron::DType::U32, .i = static_cast<std::int64_t>(v)};
}

/// The largest |got - want| over the elements.
double max_error(const std::vector<float>& got, const std::vector<double>& want) {
  double worst = 0.0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    worst = std::max(worst, std::abs(static_cast<double>(got[i]) - want[i]));
  }
  return worst;
}

double run_axpy(iron::runtime::Backend& backend) {
  constexpr std::uint32_t kN = 1000;
  std::vector<float> x(kN), y(kN);
  std::vector<double> want(kN);
  for (std::uint32_t i = 0; i < kN; ++i) {
    x[i] = static_cast<float>(i % 17) - 8.0f;
    y[i] = static_cast<float>(i % 5);
    want[i] = 0.5 * x[i] + y[i];
  }
  const iron::ir::Kernel kernel = kernel_ir_for("app_axpy", iron::DType::F32);
  iron::runtime::HostTensor tx = f32_tensor(x), ty = f32_tensor(y);
  const iron::runtime::Scalar a{.dtype = iron::DType::F32, .f = 0.5};
  backend.run({&kernel, {&tx, &ty, a, u32(kN)}, iron::runtime::Grid::elementwise(kN, 128)});
  return max_error(values_of(ty), want);
}

constexpr std::uint32_t kRows = 3, kN = 300;

std::vector<float> softmax_input() {
  std::vector<float> x(kRows * kN);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 23) / 7.0f;
  return x;
}

std::vector<double> softmax_of(const std::vector<float>& x) {
  std::vector<double> want(x.size());
  for (std::uint32_t r = 0; r < kRows; ++r) {
    double top = -INFINITY, sum = 0.0;
    for (std::uint32_t c = 0; c < kN; ++c) top = std::max(top, double{x[r * kN + c]});
    for (std::uint32_t c = 0; c < kN; ++c) sum += std::exp(x[r * kN + c] - top);
    for (std::uint32_t c = 0; c < kN; ++c) want[r * kN + c] = std::exp(x[r * kN + c] - top) / sum;
  }
  return want;
}

double run_library_softmax(iron::runtime::Backend& backend) {
  const std::vector<float> x = softmax_input();
  const std::vector<double> want = softmax_of(x);
  const iron::ir::Kernel kernel = kernel_ir_for("iron_softmax", iron::DType::F32);
  iron::runtime::HostTensor in = f32_tensor(x), out = f32_tensor(std::vector<float>(x.size()));
  GeometryQuery query;
  query.constants["n"] = kN;
  query.elements["inp"] = x.size();
  query.elements["out"] = x.size();
  const auto geometry = geometry_for("iron_softmax", query);
  if (!geometry) throw iron::Error("iron_softmax has no geometry");
  const iron::runtime::Grid grid{{geometry->groups.x, geometry->groups.y, geometry->groups.z},
                                 {geometry->threads.x, geometry->threads.y, geometry->threads.z}};
  backend.run({&kernel, {&in, &out, u32(kN)}, grid});
  return max_error(values_of(out), want);
}

/// The same softmax on device tensors, through the generated entry point: its grid from the
/// kernel's geometry function, enqueued on a stream of Iron's.
double run_device_softmax() {
  const std::vector<float> x = softmax_input();
  iron::runtime::DeviceTensor in =
      iron::runtime::DeviceTensor::allocate(iron::DType::F32, x.size());
  iron::runtime::DeviceTensor out =
      iron::runtime::DeviceTensor::allocate(iron::DType::F32, x.size());
  in.upload(std::as_bytes(std::span(x)));
  const iron::runtime::Stream stream = iron::runtime::Stream::create();
  iron::lib::iron_softmax_f32(stream, in, out, kN);
  stream.synchronize();
  std::vector<float> got(x.size());
  out.download(std::as_writable_bytes(std::span(got)));
  return max_error(got, softmax_of(x));
}

}  // namespace

int main() {
  try {
    const auto backend = iron::runtime::make_backend("auto");
    const double axpy = run_axpy(*backend);
    const double softmax = run_library_softmax(*backend);
    fmt::print("backend {}: app_axpy max error {:g}, iron_softmax max error {:g}\n",
               backend->name(), axpy, softmax);
    double device = 0.0;
    if (iron::runtime::cuda_available()) {
      device = run_device_softmax();
      fmt::print("device tensors: iron::lib::iron_softmax_f32 max error {:g}\n", device);
    } else {
      fmt::print("device tensors: skipped ({})\n", iron::runtime::cuda_unavailable_reason());
    }
    if (axpy > 0.0 || softmax > 1e-6 || device > 1e-6) {
      fmt::print("mismatch\n");
      return 1;
    }
    fmt::print("ok\n");
    return 0;
  } catch (const std::exception& e) {
    fmt::print(stderr, "{}\n", e.what());
    return 1;
  }
}
