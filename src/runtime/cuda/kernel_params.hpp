/// The launch ABI of emitted CUDA kernels (iron/codegen/emit.hpp) on the host side: constexprs in
/// 4-byte carriers, and the parameter array cuLaunchKernel takes.
#pragma once

#include <cstdint>
#include <vector>

#include "driver.hpp"
#include "iron/runtime/launch.hpp"
#include "tensor_maps.hpp"

namespace iron::runtime::cuda {

/// The 4 bytes constexpr `s` is passed in, as its kernel reads them: f32, f16 and bf16 as the
/// float nearest the value (the kernel rounds it to f16/bf16); i32 and i8 as int and u32, u8 and
/// u16 as unsigned int, each wrapped to its own width first; bool as unsigned int 0 or 1.
/// Exactly the value the simulator gives the kernel.
std::uint32_t constexpr_carrier_bits(const Scalar& s);

/// cuLaunchKernel's kernelParams: for parameter i, a pointer to the device address of tensor
/// argument i, or to the carrier of constexpr argument i; then one pointer to each tensor map.
/// Owns what the pointers point to.
class KernelParams {
 public:
  /// `addresses[i]` is the device address of argument i when it is a tensor (else unused);
  /// `maps` the kernel's tensor maps for this launch (encode_tensor_maps).
  KernelParams(const std::vector<Arg>& args, std::vector<CUdeviceptr> addresses,
               std::vector<EncodedTensorMap> maps = {});
  KernelParams(const KernelParams&) = delete;
  KernelParams& operator=(const KernelParams&) = delete;

  void** data() { return pointers_.data(); }
  std::size_t size() const { return pointers_.size(); }

 private:
  std::vector<CUdeviceptr> addresses_;
  std::vector<std::uint32_t> carriers_;
  std::vector<EncodedTensorMap> maps_;
  std::vector<void*> pointers_;
};

}  // namespace iron::runtime::cuda
