/// Typed host launch wrappers: a generated C++ header with one function per kernel and dtype.
#pragma once

#include <string>
#include <vector>

#include "iron/core/ir.hpp"

namespace iron::codegen {

/// The header's text. For each kernel (traced for one dtype), in order, it defines in namespace
/// iron::launch
///   void SYMBOL(iron::runtime::Backend& backend, iron::runtime::HostTensor& inp, …,
///               std::uint32_t n, …, iron::runtime::Grid grid)
/// with SYMBOL = kernel_symbol(kernel), the tensors by reference and the constexprs typed (f32,
/// f16 and bf16 float; i32 std::int32_t; u32 std::uint32_t; i8 std::int8_t; u8 std::uint8_t;
/// u16 std::uint16_t; bool bool), all in parameter order. Each throws iron::Error naming the
/// function and the parameter when a tensor's dtype is not the parameter's, else runs an
/// iron::runtime::Launch of iron::dsl::kernel_ir_for(name, dtype), traced on first use, with
/// backend.run(). Programs using it link the kernel library.
///
/// In namespace iron::lib it defines the device-resident entry points
///   void SYMBOL(const iron::runtime::Stream& stream, const iron::runtime::DeviceTensor& inp, …,
///               iron::runtime::DeviceTensor& out, …, std::uint32_t n, …)
/// (input tensors const, constexprs typed as above), which enqueue the kernel with
/// iron::runtime::launch_async on the grid its geometry function plans for the tensors' element
/// counts, the constexprs and the device's multiprocessors (iron::Error when it has none). Throws
/// Error naming the kernel for a parameter the header cannot take (named `backend`, `grid`,
/// `stream` or `query`, or not an identifier).
std::string emit_launch_wrappers(const std::vector<ir::Kernel>& kernels);

}  // namespace iron::codegen
