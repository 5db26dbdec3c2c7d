// Every library kernel declares its whole dispatch contract: a dispatch(...) line, rules on its
// group counts, and a layout for each tensor parameter, so the guard checks every buffer's size.
#include <gtest/gtest.h>

#include <string>

#include "iron/dsl/kernel.hpp"

namespace {

/// The kernels defined under kernels/ (the unit tests register kernels of their own).
std::vector<const iron::dsl::KernelInfo*> library_kernels() {
  std::vector<const iron::dsl::KernelInfo*> out;
  for (const auto& k : iron::dsl::registered_kernels()) {
    if (k.loc.file.starts_with("kernels/")) out.push_back(&k);
  }
  return out;
}

TEST(KernelContracts, EveryLibraryKernelDeclaresItsGridAndEveryTensorsLayout) {
  const auto kernels = library_kernels();
  ASSERT_GE(kernels.size(), 20u) << "found too few library kernels";
  for (const auto* info : kernels) {
    for (const iron::DType dt : info->dtypes) {
      const iron::ir::Kernel k = info->trace(dt);
      const std::string what = info->name + " [" + std::string(iron::dtype_name(dt)) + "]";
      EXPECT_TRUE(k.dispatch.loc.known()) << what << " has no dispatch(...)";
      EXPECT_FALSE(k.dispatch.grid_rules.empty()) << what << " declares no grid(...)";
      for (const iron::ir::Param& p : k.params) {
        if (p.kind == iron::ir::ParamKind::Constexpr) continue;
        EXPECT_NE(k.dispatch.layout_of(p.name), nullptr)
            << what << " declares no layout(...) for tensor '" << p.name << "'";
      }
    }
  }
}

}  // namespace
