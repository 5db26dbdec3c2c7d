/// A program that links the kernel library alone, as an application does: it lists every
/// registered kernel and traces the one named on the command line. That it links at all shows
/// that no kernel depends on the test harness or the bench layer.
#include <fmt/format.h>

#include <exception>

#include "iron/dsl/kernel.hpp"

int main(int argc, char** argv) {
  if (argc != 2) {
    fmt::print(stderr, "usage: {} KERNEL\n", argv[0]);
    return 2;
  }
  try {
    const auto& kernels = iron::dsl::registered_kernels();
    for (const auto& k : kernels) fmt::print("{}\n", k.name);
    const iron::ir::Kernel traced = iron::dsl::kernel_ir_for(argv[1], iron::DType::F32);
    fmt::print("{} kernels; {} traced: {} parameters, {} top-level ops\n", kernels.size(),
               traced.name, traced.params.size(), traced.body.ops.size());
    return 0;
  } catch (const std::exception& e) {
    fmt::print(stderr, "{}\n", e.what());
    return 1;
  }
}
