/// Ahead-of-time bundles (`iron build --aot DIR`): cubins per architecture and one generated C++
/// header that loads and launches them with the CUDA driver API alone (docs/applications.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "iron/core/ir.hpp"

namespace iron::codegen {

/// One cubin of a kernel form: the architecture it is for (sm × 10), its file name in the
/// bundle, and the shared memory the launch passes dynamically (0 when the kernel's is static).
struct AotBinary {
  int sm = 0;
  std::string file;
  std::uint64_t dynamic_shared_bytes = 0;
  bool arch_specific = false;  ///< built for sm_NNa: loaded on that compute capability only
};

/// A kernel form of the bundle: the kernel traced for one dtype, and its cubins.
struct AotForm {
  ir::Kernel kernel;
  std::vector<AotBinary> binaries;
};

/// The bundle header's text. It defines, in namespace iron_aot, a `Bundle` (the driver opened
/// with dlopen, the primary context of one device, each form's module loaded from the bundle's
/// folder on first use, for the cubin built for the device's own architecture (an sm_90a one on a
/// 9.0 device) or else the newest it can run: same major architecture, minor at most the
/// device's; device memory helpers) and one function per form:
///   void SYMBOL(Bundle& bundle, Stream stream, Dim3 groups, Dim3 threads,
///               DevicePtr inp, …, std::uint32_t n, …)
/// with the tensors as device addresses and the constexprs typed as in the launch wrappers, in
/// parameter order. Each checks the threads per group against the kernel's literal rules and
/// throws iron_aot::Error naming the function on a refusal or a driver error. It includes only
/// standard headers and <dlfcn.h>: an application needs neither the CUDA toolkit nor Iron to
/// build with it, only a driver to run. Throws Error naming the kernel for a parameter name the
/// header cannot take.
std::string emit_aot_header(const std::vector<AotForm>& forms);

}  // namespace iron::codegen
