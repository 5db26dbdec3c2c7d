/// prepare_kernel: compile, load, read the function's limits, opt in to dynamic shared memory.
#include "prepared_kernel.hpp"

#include <fmt/format.h>

#include "cuda_module_cache.hpp"
#include "iron/codegen/compile.hpp"
#include "iron/runtime/dispatch_guard.hpp"

namespace iron::runtime::cuda {

PreparedKernel prepare_kernel(const ir::Kernel& kernel, int sm,
                              const std::vector<bool>& specialization) {
  const codegen::CompiledKernel compiled =
      codegen::compile_for_cuda_device(kernel, sm, specialization);
  const CUmodule module = load_module(compiled, sm);
  const Driver& d = driver();
  PreparedKernel prepared{compiled.symbol, nullptr, 0, 0, compiled.lowered.tensor_maps};
  d.check(d.api().module_get_function(&prepared.function, module, compiled.symbol.c_str()),
          "cuModuleGetFunction", compiled.symbol);
  int max_threads = 0;
  d.check(
      d.api().func_get_attribute(
          &max_threads, static_cast<int>(FunctionAttribute::MaxThreadsPerBlock), prepared.function),
      "cuFuncGetAttribute(MAX_THREADS_PER_BLOCK)", compiled.symbol);
  prepared.max_threads = max_threads > 0 ? static_cast<std::uint64_t>(max_threads) : 0;
  prepared.dynamic_shared = opt_in_shared_memory(prepared.function, compiled);
  return prepared;
}

void check_threads(const ir::Kernel& kernel, const PreparedKernel& prepared,
                   std::uint64_t threads) {
  if (threads <= prepared.max_threads) return;
  throw DispatchError(fmt::format(
      "{}: dispatch refused, nothing launched: {} threads per group exceed the {} that the "
      "compiled {} can launch with (its registers allow no more)",
      kernel.name, threads, prepared.max_threads, prepared.symbol));
}

}  // namespace iron::runtime::cuda
