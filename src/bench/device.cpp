/// BenchDevice on CUDA: resident buffers, prepared launches, event timing and the two ceilings.
#include "iron/bench/device.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <random>

// The bench drives the CUDA driver directly, through the runtime's own CUDA layer.
#include "../runtime/cuda/cuda_backend.hpp"
#include "../runtime/cuda/cuda_module_cache.hpp"
#include "../runtime/cuda/kernel_params.hpp"
#include "cublas.hpp"
#include "iron/codegen/compile.hpp"
#include "iron/core/error.hpp"
#include "iron/core/half.hpp"
#include "iron/runtime/dispatch_guard.hpp"
#include "iron/runtime/launch_specialization.hpp"
#include "iron/runtime/nvrtc.hpp"

namespace iron::bench {

namespace cuda = runtime::cuda;
using cuda::CUdeviceptr;
using cuda::CUevent;
using cuda::CUfunction;
using cuda::CUmodule;
using runtime::Arg;
using runtime::Grid;
using runtime::HostTensor;
using runtime::Scalar;

Spread spread_of(std::vector<double> values) {
  IRON_INTERNAL_ASSERT(!values.empty(), "spread_of an empty list");
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  const double median = n % 2 == 1 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
  return {median, values.front(), values.back()};
}

/// A launch ready to enqueue: the function, its grid, and the parameter array (which points
/// into `placeholders` and the carriers KernelParams owns); or a cuBLAS product.
struct PreparedLaunch {
  std::string what;
  CUfunction function = nullptr;
  Grid grid;
  std::vector<HostTensor> placeholders;
  std::unique_ptr<cuda::KernelParams> params;
  std::optional<DeviceGemm> gemm;
  unsigned int dynamic_shared = 0;  ///< bytes of dynamic shared memory each launch asks for
};

namespace {

/// The cudaDataType_t of a bench dtype.
int cuda_data_type(DType dt) {
  if (dt == DType::F32) return kCudaR32F;
  if (dt == DType::F16) return kCudaR16F;
  if (dt == DType::BF16) return kCudaR16BF;
  throw Error(fmt::format("cuBLAS products take f32, f16 or bf16, not {}", dtype_name(dt)));
}

/// A device address as the pointer type cuBLAS takes (device pointers are plain addresses).
void* as_pointer(DeviceAddress address) {
  return reinterpret_cast<void*>(address);  // NOLINT(performance-no-int-to-ptr)
}

}  // namespace

struct BenchDevice::Impl {
  const cuda::Driver& driver = cuda::driver();
  const runtime::CudaDeviceInfo* device = nullptr;
  std::vector<CUdeviceptr> owned;
  std::vector<std::unique_ptr<PreparedLaunch>> launches;
  CublasHandle cublas_handle = nullptr;  ///< created by the first prepare_gemm

  /// The device's cuBLAS handle, created on first use.
  CublasHandle blas() {
    if (cublas_handle != nullptr) return cublas_handle;
    const Cublas& lib = cublas();
    if (!lib.available) throw Error(lib.reason);
    if (const CublasStatus s = lib.api.create(&cublas_handle); s != 0) {
      cublas_handle = nullptr;
      throw Error(fmt::format("cublasCreate failed with status {}", s));
    }
    return cublas_handle;
  }

  /// Enqueues `g` on stream 0 (the handle's stream): row-major c = a @ b is column-major
  /// cᵀ = bᵀ @ aᵀ, so b goes first; a row-major [n, k] b is a column-major [k, n] one, taken
  /// transposed.
  void enqueue_gemm(const DeviceGemm& g, const std::string& what) {
    const float beta = 0.0f;
    const int type = cuda_data_type(g.dtype);
    const auto m = static_cast<int>(g.m);
    const auto n = static_cast<int>(g.n);
    const auto k = static_cast<int>(g.k);
    const CublasStatus s = cublas().api.gemm_ex(
        blas(), g.b_transposed ? kCublasOpT : kCublasOpN, kCublasOpN, n, m, k, &g.alpha,
        as_pointer(g.b), type, g.b_transposed ? k : n, as_pointer(g.a), type, k, &beta,
        as_pointer(g.c), type, n, kCublasCompute32F, kCublasGemmDefault);
    if (s != 0) throw Error(fmt::format("{}: cublasGemmEx failed with status {}", what, s));
  }

  void check(cuda::CUresult r, std::string_view call, std::string_view what) const {
    driver.check(r, call, what);
  }
  const cuda::DriverApi& api() const { return driver.api(); }

  /// Placeholder host tensors (one element: the guard checks kinds and dtypes) and the device
  /// addresses of `args`, as KernelParams wants them.
  /// `maps` and `kernel`: the tensor maps the launch is encoded with (none for a hand-written
  /// source).
  PreparedLaunch& add(std::string what, CUfunction fn, const std::vector<ResidentArg>& args,
                      const Grid& grid, const ir::Kernel* kernel = nullptr,
                      const std::vector<ir::TensorMap>& maps = {}) {
    auto p = std::make_unique<PreparedLaunch>();
    p->what = std::move(what);
    p->function = fn;
    p->grid = grid;
    p->placeholders.reserve(args.size());
    std::vector<Arg> marshalled;
    std::vector<CUdeviceptr> addresses;
    for (const ResidentArg& a : args) {
      if (const auto* t = std::get_if<ResidentTensor>(&a)) {
        HostTensor& h = p->placeholders.emplace_back();
        h.dtype = t->dtype;
        h.bytes.resize(dtype_size(t->dtype));
        marshalled.emplace_back(&h);
        addresses.push_back(t->address);
      } else {
        marshalled.emplace_back(std::get<Scalar>(a));
        addresses.push_back(0);
      }
    }
    p->params = std::make_unique<cuda::KernelParams>(
        marshalled, addresses,
        kernel == nullptr ? std::vector<cuda::EncodedTensorMap>{}
                          : cuda::encode_tensor_maps(*kernel, maps, marshalled, addresses));
    launches.push_back(std::move(p));
    return *launches.back();
  }

  void check_threads(CUfunction fn, const Grid& grid, const std::string& what) const {
    int max_threads = 0;
    check(api().func_get_attribute(
              &max_threads, static_cast<int>(cuda::FunctionAttribute::MaxThreadsPerBlock), fn),
          "cuFuncGetAttribute(MAX_THREADS_PER_BLOCK)", what);
    if (grid.group_size.volume() > static_cast<std::uint64_t>(max_threads)) {
      throw DispatchError(fmt::format(
          "{}: dispatch refused, nothing launched: {} threads per group exceed the {} the "
          "compiled kernel can launch with",
          what, grid.group_size.volume(), max_threads));
    }
  }
};

BenchDevice::BenchDevice() : impl_(std::make_unique<Impl>()) {
  const runtime::BackendStatus& status = cuda::cuda_backend_status();
  if (!status.available) throw Error("iron bench needs the cuda backend: " + status.reason);
  impl_->device = &cuda::cuda_device();
  impl_->check(impl_->api().ctx_set_current(cuda::cuda_context()), "cuCtxSetCurrent",
               impl_->device->name);
}

BenchDevice::~BenchDevice() {
  try {
    free_all();
  } catch (const Error& e) {
    fmt::print(stderr, "iron bench: {}\n", e.what());
  }
  if (impl_->cublas_handle != nullptr) cublas().api.destroy(impl_->cublas_handle);
}

std::string BenchDevice::name() const { return impl_->device->name; }
std::uint64_t BenchDevice::l2_bytes() const { return impl_->device->l2_bytes; }
int BenchDevice::sm() const { return impl_->device->sm(); }

DeviceAddress BenchDevice::alloc(std::size_t bytes) {
  CUdeviceptr p = 0;
  impl_->check(impl_->api().mem_alloc(&p, std::max<std::size_t>(bytes, 1)), "cuMemAlloc",
               fmt::format("{} bytes", bytes));
  impl_->owned.push_back(p);
  return p;
}

void BenchDevice::upload(DeviceAddress to, std::span<const std::byte> bytes) {
  impl_->check(impl_->api().memcpy_htod(to, bytes.data(), bytes.size()), "cuMemcpyHtoD",
               "a bench input");
}

void BenchDevice::download(DeviceAddress from, std::span<std::byte> to) {
  impl_->check(impl_->api().memcpy_dtoh(to.data(), from, to.size()), "cuMemcpyDtoH",
               "a bench output");
}

void BenchDevice::copy(DeviceAddress to, DeviceAddress from, std::size_t bytes) {
  impl_->check(impl_->api().memcpy_dtod(to, from, bytes), "cuMemcpyDtoD", "a bench buffer");
}

void BenchDevice::fill(DeviceAddress to, std::size_t bytes, std::uint8_t value) {
  impl_->check(impl_->api().memset_d8(to, value, bytes), "cuMemsetD8", "a bench buffer");
}

void BenchDevice::free_all() {
  impl_->check(impl_->api().ctx_synchronize(), "cuCtxSynchronize", "freeing bench buffers");
  std::vector<CUdeviceptr> owned;
  owned.swap(impl_->owned);
  for (CUdeviceptr p : owned) impl_->check(impl_->api().mem_free(p), "cuMemFree", "a bench buffer");
  impl_->launches.clear();
}

int BenchDevice::prepare(const ir::Kernel& kernel, const std::vector<ResidentArg>& args,
                         const Grid& grid) {
  // The guard sees each resident tensor's real element count, so layouts are checked too.
  std::vector<runtime::GuardArg> guard_args;
  for (const ResidentArg& a : args) {
    if (const auto* t = std::get_if<ResidentTensor>(&a)) {
      guard_args.emplace_back(runtime::TensorExtent{t->dtype, t->count * dtype_size(t->dtype)});
    } else {
      guard_args.emplace_back(std::get<Scalar>(a));
    }
  }
  runtime::check_dispatch(kernel, guard_args, grid, impl_->device->limits);
  const codegen::CompiledKernel compiled = codegen::compile_for_cuda_device(
      kernel, sm(), runtime::launch_specialization(ir::SpecializationPlan(kernel), args));
  const CUmodule module = cuda::load_module(compiled, sm());
  CUfunction fn = nullptr;
  impl_->check(impl_->api().module_get_function(&fn, module, compiled.symbol.c_str()),
               "cuModuleGetFunction", compiled.symbol);
  impl_->add(compiled.symbol, fn, args, grid, &kernel, compiled.lowered.tensor_maps)
      .dynamic_shared = cuda::opt_in_shared_memory(fn, compiled);
  impl_->check_threads(fn, grid, compiled.symbol);
  return static_cast<int>(impl_->launches.size()) - 1;
}

int BenchDevice::prepare_source(const std::string& source, const std::string& symbol,
                                const std::vector<ResidentArg>& args, const Grid& grid) {
  const runtime::CubinResult cubin = runtime::compile_cubin(source, symbol, sm());
  CUmodule module = nullptr;
  impl_->check(impl_->api().module_load_data(&module, cubin.cubin.data()), "cuModuleLoadData",
               symbol);
  CUfunction fn = nullptr;
  impl_->check(impl_->api().module_get_function(&fn, module, symbol.c_str()), "cuModuleGetFunction",
               symbol);
  impl_->add(symbol, fn, args, grid);
  impl_->check_threads(fn, grid, symbol);
  return static_cast<int>(impl_->launches.size()) - 1;
}

int BenchDevice::prepare_gemm(const DeviceGemm& gemm) {
  impl_->blas();
  auto p = std::make_unique<PreparedLaunch>();
  p->what = fmt::format("cuBLAS {}x{}x{} {}", gemm.m, gemm.n, gemm.k, dtype_name(gemm.dtype));
  p->gemm = gemm;
  impl_->launches.push_back(std::move(p));
  return static_cast<int>(impl_->launches.size()) - 1;
}

void BenchDevice::launch(int handle) {
  PreparedLaunch& p = *impl_->launches.at(static_cast<std::size_t>(handle));
  if (p.gemm) {
    impl_->enqueue_gemm(*p.gemm, p.what);
    return;
  }
  const Grid& g = p.grid;
  impl_->check(impl_->api().launch_kernel(p.function, g.groups.x, g.groups.y, g.groups.z,
                                          g.group_size.x, g.group_size.y, g.group_size.z,
                                          p.dynamic_shared, nullptr, p.params->data(), nullptr),
               "cuLaunchKernel", p.what);
}

void BenchDevice::synchronize(const std::string& what) {
  if (const cuda::CUresult r = impl_->api().ctx_synchronize(); r != cuda::kCudaSuccess) {
    throw Error(fmt::format("{} failed on the GPU: {}", what, impl_->driver.describe(r)));
  }
}

std::vector<double> BenchDevice::time(const std::function<void(int)>& enqueue, int warmup,
                                      int repeat, const std::string& what) {
  return time_in_turn({enqueue}, warmup, repeat, what).front();
}

std::vector<std::vector<double>> BenchDevice::time_in_turn(
    const std::vector<std::function<void(int)>>& enqueues, int warmup, int repeat,
    const std::string& what) {
  for (int i = 0; i < warmup; ++i) {
    for (const auto& enqueue : enqueues) enqueue(i);
  }
  synchronize(what);
  const auto& api = impl_->api();
  const std::size_t turns = enqueues.size();
  std::vector<CUevent> events(2 * turns * static_cast<std::size_t>(repeat), nullptr);
  for (CUevent& e : events) impl_->check(api.event_create(&e, 0), "cuEventCreate", what);
  for (int i = 0; i < repeat; ++i) {
    for (std::size_t j = 0; j < turns; ++j) {
      const std::size_t first = 2 * (static_cast<std::size_t>(i) * turns + j);
      impl_->check(api.event_record(events[first], nullptr), "cuEventRecord", what);
      enqueues[j](warmup + i);
      impl_->check(api.event_record(events[first + 1], nullptr), "cuEventRecord", what);
    }
  }
  synchronize(what);
  std::vector<std::vector<double>> ms(turns);
  for (int i = 0; i < repeat; ++i) {
    for (std::size_t j = 0; j < turns; ++j) {
      const std::size_t first = 2 * (static_cast<std::size_t>(i) * turns + j);
      float elapsed = 0.0f;
      impl_->check(api.event_elapsed_time(&elapsed, events[first], events[first + 1]),
                   "cuEventElapsedTime", what);
      ms[j].push_back(elapsed);
    }
  }
  for (CUevent e : events) impl_->check(api.event_destroy(e), "cuEventDestroy", what);
  return ms;
}

double BenchDevice::copy_gbps(std::size_t bytes, int repeat) {
  const DeviceAddress a = alloc(bytes);
  const DeviceAddress b = alloc(bytes);
  fill(a, bytes, 0x3c);
  const auto ms = time([&](int) { copy(b, a, bytes); }, 2, repeat, "the copy ceiling");
  return 2.0 * static_cast<double>(bytes) / (spread_of(ms).median * 1e6);
}

GemmCeiling BenchDevice::gemm_tflops(int n, int repeat) {
  const Cublas& lib = cublas();
  GemmCeiling result;
  result.library = lib.path;
  if (!lib.available) {
    result.reason = lib.reason;
    return result;
  }
  const auto elements = static_cast<std::size_t>(n) * static_cast<std::size_t>(n);
  std::vector<std::uint16_t> host(elements);
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (auto& v : host) v = f32_to_bf16_bits(dist(rng));
  const auto bytes = std::as_bytes(std::span(host));
  const DeviceAddress a = alloc(bytes.size());
  const DeviceAddress b = alloc(bytes.size());
  const DeviceAddress c = alloc(bytes.size());
  upload(a, bytes);
  upload(b, bytes);
  const auto size = static_cast<std::uint32_t>(n);
  try {
    const int gemm = prepare_gemm({DType::BF16, size, size, size, 1.0f, a, b, c});
    const auto ms = time([&](int) { launch(gemm); }, 2, repeat, "the cuBLAS ceiling");
    result.tflops = 2.0 * n * static_cast<double>(n) * n / (spread_of(ms).median * 1e9);
  } catch (const Error& e) {
    result.reason = e.what();
  }
  return result;
}

}  // namespace iron::bench
