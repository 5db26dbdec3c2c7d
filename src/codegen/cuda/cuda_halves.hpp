/// f16 and bf16 in emitted CUDA without the toolkit's cuda_fp16.h and cuda_bf16.h: two-byte
/// structs holding the bits, converted by one PTX instruction each way. Parsing those headers cost
/// NVRTC 40–110 ms per module on the H200's host, more than the whole compile of a small kernel
/// (bench/NOTES.md §10). Kernels lowered with wmma keep the headers, which mma.h needs.
#pragma once

#include <string>

namespace iron::codegen::cuda {

/// The definitions of the types and functions that the dialect spells: iron_f16 and iron_bf16
/// (constructible from float with round-to-nearest-even, explicitly convertible to float),
/// iron_to_f32, iron_f32_to_f16, iron_f32_to_bf16, and warp shuffles of them.
std::string half_types_prelude(bool f16, bool bf16);

}  // namespace iron::codegen::cuda
