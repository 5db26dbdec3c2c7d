/// The AOT bundle: each selected kernel form compiled by NVRTC for every bundled architecture,
/// its cubins written beside the generated launch header.
#include "build_aot.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <filesystem>

#include "iron/codegen/aot_bundle.hpp"
#include "iron/codegen/compile.hpp"
#include "iron/codegen/passes/lower_warpgroup_products.hpp"
#include "iron/codegen/target.hpp"
#include "iron/core/error.hpp"
#include "iron/runtime/backend.hpp"
#include "kernel_selection.hpp"
#include "output_files.hpp"

namespace iron::cli {
namespace {

namespace fs = std::filesystem;

/// The architectures a bundle carries: Ampere's cubin also runs on sm_86 and sm_89. A form with
/// warpgroup products also gets an sm_90a cubin (wgmma), which a 9.0 device loads instead.
constexpr int kArchitectures[] = {80, 90};

const runtime::BinaryFormat& cubin_format() {
  const runtime::BackendEntry* cuda = runtime::find_backend("cuda");
  IRON_INTERNAL_ASSERT(cuda != nullptr && cuda->binary, "the cuda backend names no binary");
  const runtime::BinaryFormat& format = *cuda->binary;
  const runtime::BackendStatus compiler = format.status();
  if (!compiler.available) {
    throw Error(
        fmt::format("--aot needs {}, which was not found:\n{}", format.compiler, compiler.reason));
  }
  return format;
}

}  // namespace

int build_aot(const std::string& dir, const std::string& filter, const std::string& dtype) {
  const auto start = std::chrono::steady_clock::now();
  const runtime::BinaryFormat& cubin = cubin_format();
  const auto forms = select_kernels(filter, dtype);
  const fs::path root(dir);
  std::vector<codegen::AotForm> bundle;
  std::size_t cubins = 0;
  for (std::size_t i = 0; i < forms.size(); ++i) {
    const auto& f = forms[i];
    fmt::print("[{:>3}/{}] {} {}\n", i + 1, forms.size(), f.info->name, dtype_name(f.dtype));
    std::fflush(stdout);
    codegen::AotForm form{f.info->trace(f.dtype), {}};
    std::vector<codegen::TargetProfile> profiles;
    for (const int sm : kArchitectures) profiles.push_back(codegen::TargetProfile::cuda(sm));
    if (codegen::has_warpgroup_products(form.kernel)) {
      // The bundle's loader encodes no tensor maps: tile copies stay each thread's copies.
      codegen::TargetProfile hopper = codegen::TargetProfile::cuda(90, codegen::MmaStrategy::Wgmma);
      hopper.tensor_maps = false;
      profiles.push_back(hopper);
    }
    for (const codegen::TargetProfile& profile : profiles) {
      const auto compiled = codegen::compile_kernel(form.kernel, profile);
      std::vector<std::byte> binary;
      try {
        binary = cubin.compile(compiled.source, compiled.symbol, profile);
      } catch (const CompileWarningError& warned) {
        // Without tensor maps a form may need more registers a thread than its group leaves
        // (a producer warpgroup's share stays with it): its sm_90 cubin serves 9.0 devices.
        if (!profile.arch_specific()) throw;
        fmt::print(
            "  note: no {} cubin for {}: {}\n  its sm_90 cubin serves compute capability "
            "9.0\n",
            profile.name, compiled.symbol, warned.what());
        continue;
      }
      const std::string file = fmt::format("{}.{}.cubin", compiled.symbol, profile.name);
      write_file(root / file, binary.data(), binary.size());
      const std::uint64_t shared = compiled.lowered.shared_bytes;
      form.binaries.push_back({profile.cuda_sm, file,
                               codegen::uses_dynamic_shared(shared) ? shared : 0,
                               profile.arch_specific()});
      ++cubins;
    }
    bundle.push_back(std::move(form));
  }
  write_text(root / "iron_aot.hpp", codegen::emit_aot_header(bundle));
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  fmt::print("wrote a bundle of {} kernel forms ({} cubins and iron_aot.hpp) to {} in {:.3f} s\n",
             forms.size(), cubins, root.string(), seconds);
  return 0;
}

}  // namespace iron::cli
