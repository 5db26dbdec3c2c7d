/// Helpers of the simulator's tests: host tensors and scalars filled from and read back as
/// doubles, and running a launch that must (or must not) end in a sanitizer finding.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "iron/codegen/compile.hpp"
#include "iron/core/half.hpp"
#include "iron/core/verifier.hpp"
#include "iron/runtime/launch.hpp"
#include "iron/runtime/sim.hpp"

namespace iron::sim_test {

inline runtime::HostTensor make_tensor(DType t, const std::vector<double>& values) {
  runtime::HostTensor h;
  h.dtype = t;
  h.bytes.resize(values.size() * dtype_size(t));
  for (std::size_t i = 0; i < values.size(); ++i) {
    const double v = values[i];
    std::uint32_t bits = 0;
    switch (t) {
      case DType::F32:
        bits = std::bit_cast<std::uint32_t>(static_cast<float>(v));
        break;
      case DType::F16:
        bits = f32_to_f16_bits(static_cast<float>(v));
        break;
      case DType::BF16:
        bits = f32_to_bf16_bits(static_cast<float>(v));
        break;
      case DType::Bool:
        bits = v != 0 ? 1 : 0;
        break;
      default:
        bits = static_cast<std::uint32_t>(static_cast<std::int64_t>(v));
        break;
    }
    std::memcpy(h.bytes.data() + i * dtype_size(t), &bits, dtype_size(t));
  }
  return h;
}

inline runtime::HostTensor zeros(DType t, std::size_t n) {
  return make_tensor(t, std::vector<double>(n, 0.0));
}

inline std::vector<double> read_tensor(const runtime::HostTensor& h) {
  std::vector<double> out(h.count());
  for (std::size_t i = 0; i < out.size(); ++i) {
    std::uint32_t bits = 0;
    std::memcpy(&bits, h.bytes.data() + i * dtype_size(h.dtype), dtype_size(h.dtype));
    switch (h.dtype) {
      case DType::F32:
        out[i] = std::bit_cast<float>(bits);
        break;
      case DType::F16:
        out[i] = f16_bits_to_f32(static_cast<std::uint16_t>(bits));
        break;
      case DType::BF16:
        out[i] = bf16_bits_to_f32(static_cast<std::uint16_t>(bits));
        break;
      case DType::I32:
        out[i] = static_cast<std::int32_t>(bits);
        break;
      case DType::I8:
        out[i] = static_cast<std::int8_t>(bits);
        break;
      default:
        out[i] = bits;
        break;
    }
  }
  return out;
}

inline runtime::Scalar scalar(DType t, double v) {
  runtime::Scalar s;
  s.dtype = t;
  if (is_float(t)) {
    s.f = v;
  } else {
    s.i = static_cast<std::int64_t>(v);
  }
  return s;
}

inline void run(const ir::Kernel& k, std::vector<runtime::Arg> args, const runtime::Grid& grid,
                const runtime::SimOptions& options = {}) {
  runtime::sim_run({&k, std::move(args), grid}, options);
}

/// How many ops of `kind` the compiled kernel's lowered IR holds.
inline std::size_t lowered_ops(const codegen::CompiledKernel& c, ir::OpKind kind) {
  std::size_t n = 0;
  ir::walk(c.lowered.body, [&](const ir::Op& op) { n += op.kind == kind ? 1 : 0; });
  return n;
}

/// The verifier's findings on `k`, one a line, as the simulator reports a malformed kernel.
inline std::string verifier_findings(const ir::Kernel& k) {
  std::string text;
  for (const std::string& p : ir::verify(k)) text += (text.empty() ? "" : "\n") + p;
  return text;
}

/// The finding the run ends with; nullopt when it ran clean.
inline std::optional<runtime::SimError> finding(const ir::Kernel& k, std::vector<runtime::Arg> args,
                                                const runtime::Grid& grid,
                                                const runtime::SimOptions& options = {}) {
  try {
    run(k, std::move(args), grid, options);
  } catch (const runtime::SimError& e) {
    return e;
  }
  return std::nullopt;
}

}  // namespace iron::sim_test
