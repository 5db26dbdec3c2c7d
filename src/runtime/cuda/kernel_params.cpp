/// Constexpr carriers and the cuLaunchKernel parameter array.
#include "kernel_params.hpp"

#include <bit>
#include <utility>

#include "iron/core/error.hpp"

namespace iron::runtime::cuda {

std::uint32_t constexpr_carrier_bits(const Scalar& s) {
  const auto bits = static_cast<std::uint32_t>(s.i);  // integers wrap modulo 2^32 first
  switch (s.dtype) {
    case DType::F32:
    case DType::F16:
    case DType::BF16:
    case DType::F8E4M3:
    case DType::F8E5M2:
      return std::bit_cast<std::uint32_t>(static_cast<float>(s.f));
    case DType::I8:
      return static_cast<std::uint32_t>(static_cast<std::int32_t>(static_cast<std::int8_t>(bits)));
    case DType::U8:
      return bits & 0xFFu;
    case DType::U16:
      return bits & 0xFFFFu;
    case DType::Bool:
      return bits != 0 ? 1u : 0u;
    case DType::I32:
    case DType::U32:
      return bits;
  }
  IRON_INTERNAL_ERROR("constexpr of an unknown dtype");
}

KernelParams::KernelParams(const std::vector<Arg>& args, std::vector<CUdeviceptr> addresses,
                           std::vector<EncodedTensorMap> maps)
    : addresses_(std::move(addresses)),
      carriers_(args.size(), 0),
      maps_(std::move(maps)),
      pointers_(args.size(), nullptr) {
  addresses_.resize(args.size(), 0);
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (const Scalar* s = std::get_if<Scalar>(&args[i])) {
      carriers_[i] = constexpr_carrier_bits(*s);
      pointers_[i] = &carriers_[i];
    } else {
      pointers_[i] = &addresses_[i];
    }
  }
  for (EncodedTensorMap& m : maps_) pointers_.push_back(m.opaque.data());
}

}  // namespace iron::runtime::cuda
