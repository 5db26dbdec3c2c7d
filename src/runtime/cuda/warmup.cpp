/// warm_module_cache: the pipeline, NVRTC and the disk store for many kernels on a few threads.
#include "iron/runtime/warmup.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>
#include <unordered_map>

#include "cuda_backend.hpp"
#include "cuda_module_cache.hpp"
#include "iron/codegen/compile.hpp"
#include "iron/core/error.hpp"
#include "iron/core/op_views.hpp"
#include "iron/core/specialization.hpp"
#include "iron/runtime/compile_records.hpp"
#include "iron/runtime/module_cache.hpp"
#include "iron/runtime/nvrtc.hpp"

namespace iron::runtime {
namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

/// Where the module's products run, by the paths its specialization and target keep (a form
/// whose launch takes a path without products counts with the memory-bound ones): a warpgroup
/// product, or a fragment product of 16-bit or narrower operands, on the tensor cores; a
/// fragment product of f32 operands on the CUDA cores.
Products products_of(const ir::Kernel& lowered) {
  std::unordered_map<ir::ValueId, DType> fragment_types;
  Products found = Products::None;
  ir::walk(lowered.body, [&](const ir::Op& op) {
    if (op.kind == ir::OpKind::FragDecl) fragment_types[op.result] = op.type;
    bool tensor_cores = op.kind == ir::OpKind::WgMma;
    if (op.kind == ir::OpKind::FragMma) {
      const auto a = fragment_types.find(ir::FragMmaOp(op).a());
      tensor_cores = a != fragment_types.end() && dtype_size(a->second) <= 2;
      if (!tensor_cores) found = std::max(found, Products::CudaCores);
    }
    if (tensor_cores) found = Products::TensorCores;
  });
  return found;
}

WarmupResult warm_one(const WarmupForm& form, int sm, const BlobStore& store) {
  const ir::Kernel& kernel = form.kernel;
  const Clock::time_point start = Clock::now();
  WarmupResult result;
  try {
    const codegen::CompiledKernel compiled =
        codegen::compile_for_cuda_device(kernel, sm, form.specialization);
    result.symbol = compiled.symbol;
    result.products = products_of(compiled.lowered);
    const std::string key = cuda::module_key(compiled, sm);
    if (store.load(key).outcome != BlobStore::Loaded::Outcome::Hit) {
      const Clock::time_point compile_start = Clock::now();
      const CubinResult cubin =
          compile_cubin(compiled.source, compiled.symbol, sm, compiled.arch_specific);
      const double compile_ms = ms_since(compile_start);
      store.store(key, cubin.cubin);
      store_compile_record(key, {compiled.symbol, compiled.profile, compile_ms});
      result.compiled = true;
    }
  } catch (const std::exception& e) {
    result.error = e.what();
  }
  if (result.symbol.empty())
    result.symbol = fmt::format("{}_{}", kernel.name, dtype_name(kernel.dtype));
  result.ms = ms_since(start);
  return result;
}

}  // namespace

std::optional<double> time_module_load(std::span<const std::byte> cubin) {
  if (!cuda::cuda_backend_status().available) return std::nullopt;
  const cuda::Driver& d = cuda::driver();
  d.check(d.api().ctx_set_current(cuda::cuda_context()), "cuCtxSetCurrent", "a module load");
  const Clock::time_point start = Clock::now();
  cuda::CUmodule module = nullptr;
  d.check(d.api().module_load_data(&module, cubin.data()), "cuModuleLoadData", "a cached module");
  const double ms = ms_since(start);
  d.check(d.api().module_unload(module), "cuModuleUnload", "a cached module");
  return ms;
}

std::vector<WarmupResult> warm_module_cache(const std::vector<ir::Kernel>& kernels, int sm,
                                            unsigned jobs) {
  std::vector<WarmupForm> forms;
  forms.reserve(kernels.size());
  for (const ir::Kernel& k : kernels) forms.push_back({k, ir::usual_specialization(k)});
  return warm_module_cache(forms, sm, jobs);
}

std::vector<WarmupResult> warm_module_cache(const std::vector<WarmupForm>& forms, int sm,
                                            unsigned jobs) {
  const std::optional<BlobStore> store = module_store();
  if (!store) {
    throw Error("no kernel cache folder to warm: set IRON_CACHE_DIR (or XDG_CACHE_HOME, or HOME)");
  }
  if (const NvrtcStatus& nvrtc = nvrtc_status(); !nvrtc.available) {
    throw Error("cannot warm the kernel cache: NVRTC is unavailable: " + nvrtc.reason);
  }
  std::vector<WarmupResult> results(forms.size());
  std::atomic<std::size_t> next{0};
  const auto work = [&] {
    for (std::size_t i = next++; i < forms.size(); i = next++) {
      results[i] = warm_one(forms[i], sm, *store);
    }
  };
  const unsigned threads = std::clamp<unsigned>(jobs, 1, std::max<std::size_t>(forms.size(), 1));
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  return results;
}

}  // namespace iron::runtime
