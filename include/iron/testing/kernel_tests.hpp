/// Compiles a kernel file as its tests and benches: the build forces this header into every file
/// of the iron_kernel_tests library. It turns on the file's `#if IRON_KERNEL_TESTS` section and
/// makes IRON_KERNEL and IRON_KERNEL_VARIANT define the kernels without registering them, since
/// iron_kernels, which compiles the same file without this header, registers each one.
#pragma once

#include "iron/dsl/kernel.hpp"

#define IRON_KERNEL_TESTS 1

#undef IRON_KERNEL
#define IRON_KERNEL(NAME, PARAMS) \
  template <class T>              \
  void NAME##_body PARAMS

#undef IRON_KERNEL_VARIANT
#define IRON_KERNEL_VARIANT(NAME, SUFFIX, ...) static_assert(true)

// The kernels are parsed here but never instantiated, so a plain function that only kernels call
// is unused in this compilation (iron_kernels, which instantiates them, still reports real ones).
#pragma GCC diagnostic ignored "-Wunused-function"
