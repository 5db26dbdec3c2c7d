/// The hand-written lowered kernels the CUDA and MSL emitter tests share, as Iron IR text.
#pragma once

#include <string_view>

namespace iron::emit_test {

/// Every kind of parameter, a launch bound from the contract, f16 math under a branch.
inline constexpr std::string_view kScaleIf =
    R"(kernel scale_if dtype=f16 mode=elementwise  ; kernels/t.cpp:3
  param in x: f16
  param out y: f16
  param constexpr alpha: f32
  param constexpr n: u32
  param constexpr shift: i32
  param constexpr flag: bool
  rule at_most 256
  rule exactly 128
  values 9
{
  %0 = builtin global_id.x : u32  ; kernels/t.cpp:5
  %1 = constexpr n : u32
  %2 = lt %0, %1 : bool
  %3 = constexpr flag : bool
  %4 = and %2, %3 : bool
  if %4 {  ; kernels/t.cpp:6
    %5 = load x[%0] : f16  ; kernels/t.cpp:7
    %6 = constexpr alpha : f32
    %7 = cast %6 : f16
    %8 = mul %5, %7 : f16
    store y[%0], %8 : f16
  }
}
)";

/// Every built-in on every axis.
inline constexpr std::string_view kBuiltins = R"(kernel builtins dtype=f32 mode=tiled
  param out out: u32
  rule multiple_of 32
  values 24
{
  %0 = builtin thread_id.x : u32
  %1 = builtin thread_id.y : u32
  %2 = builtin thread_id.z : u32
  %3 = builtin group_id.x : u32
  %4 = builtin group_id.y : u32
  %5 = builtin group_id.z : u32
  %6 = builtin group_size.x : u32
  %7 = builtin group_size.y : u32
  %8 = builtin group_size.z : u32
  %9 = builtin grid_groups.x : u32
  %10 = builtin grid_groups.y : u32
  %11 = builtin grid_groups.z : u32
  %12 = builtin global_id.x : u32
  %13 = builtin global_id.y : u32
  %14 = builtin global_id.z : u32
  %15 = builtin lane : u32
  %16 = builtin simdgroup : u32
  %17 = builtin simdgroup_count : u32
  %18 = add %0, %1 : u32
  %19 = add %2, %3 : u32
  %20 = add %4, %5 : u32
  %21 = add %6, %7 : u32
  %22 = add %8, %9 : u32
  %23 = add %10, %11 : u32
  store out[%12], %18 : u32
  store out[%13], %19 : u32
  store out[%14], %20 : u32
  store out[%15], %21 : u32
  store out[%16], %22 : u32
  store out[%17], %23 : u32
}
)";

/// A loop, a branch with an else, variables (one never read) and an unused load.
inline constexpr std::string_view kControl =
    R"(kernel control dtype=f32 mode=elementwise  ; kernels/t.cpp:1
  param in x: f32
  param out y: f32
  param constexpr n: u32
  values 22
{
  %0 = builtin global_id.x : u32  ; kernels/t.cpp:10
  %1 = const 0 : f32  ; kernels/t.cpp:11
  %2 = var %1 : f32  ; kernels/t.cpp:11
  %3 = const 0 : u32
  %4 = constexpr n : u32
  %5 = const 4 : u32
  for %6 = %3 to %4 step %5 : u32 {  ; kernels/t.cpp:12
    %7 = add %0, %6 : u32  ; kernels/t.cpp:13
    %8 = load x[%7] : f32  ; kernels/t.cpp:13
    %9 = const 0 : f32
    %10 = gt %8, %9 : bool  ; kernels/t.cpp:14
    if %10 {  ; kernels/t.cpp:14
      %11 = var.load %2 : f32  ; kernels/t.cpp:15
      %12 = add %11, %8 : f32
      var.store %2, %12 : f32
    } else {
      %13 = var.load %2 : f32  ; kernels/t.cpp:17
      %14 = sub %13, %8 : f32
      var.store %2, %14 : f32
    }
  }
  %15 = const 1 : f32
  %16 = var %15 : f32  ; kernels/t.cpp:19
  var.store %16, %1 : f32  ; kernels/t.cpp:20
  %17 = var.load %2 : f32  ; kernels/t.cpp:21
  %18 = neg %17 : f32
  %19 = load x[%0] : f32
  %20 = eq %0, %3 : bool
  if %20 {  ; kernels/t.cpp:22
    store y[%0], %18 : f32
  }
  %21 = const -2 : i32
}
)";

/// Literals of every type: inf, NaN, -0, shortest digits, f16/bf16 rounding, wrapping.
inline constexpr std::string_view kLiterals = R"(kernel literals dtype=f32 mode=elementwise
  param out f: f32
  param out h: f16
  param out b: bf16
  param out i: i32
  param out u: u32
  param out c: u8
  param out s: i8
  param out w: u16
  param out z: bool
  values 40
{
  %0 = builtin global_id.x : u32
  %1 = const inf : f32
  %2 = const -inf : f32
  %3 = const nan : f32
  %4 = const 0.1 : f32
  %5 = const 1e-05 : f32
  %6 = const 3.4028234663852886e+38 : f32
  %7 = const 16777216 : f32
  %8 = const -0 : f32
  %9 = add %1, %2 : f32
  %10 = add %3, %4 : f32
  %11 = add %5, %6 : f32
  %12 = sub %7, %8 : f32
  store f[%0], %9 : f32
  store f[%0], %10 : f32
  store f[%0], %11 : f32
  store f[%0], %12 : f32
  %13 = const 0.1 : f16
  %14 = const 65520 : f16
  %15 = add %13, %14 : f16
  store h[%0], %15 : f16
  %16 = const 0.1 : bf16
  %17 = const -inf : bf16
  %18 = max %16, %17 : bf16
  store b[%0], %18 : bf16
  %19 = const -2147483648 : i32
  %20 = const -7 : i32
  %21 = sub %19, %20 : i32
  store i[%0], %21 : i32
  %22 = const 4294967295 : u32
  store u[%0], %22 : u32
  %23 = const 300 : u8
  store c[%0], %23 : u8
  %24 = const -1 : i8
  store s[%0], %24 : i8
  %25 = const 65535 : u16
  store w[%0], %25 : u16
  %26 = const 1 : bool
  store z[%0], %26 : bool
}
)";

/// Casts between floats, integers and bools (saturating), and bitcasts.
inline constexpr std::string_view kCasts = R"(kernel casts dtype=f16 mode=elementwise
  param in x: f32
  param in xh: f16
  param in xb: bf16
  param in xi: i32
  param in xc: u8
  param out oi: i32
  param out ou: u32
  param out oc: u8
  param out os: i8
  param out ow: u16
  param out oz: bool
  param out oh: f16
  param out ob: bf16
  param out of: f32
  values 40
{
  %0 = builtin global_id.x : u32
  %1 = load x[%0] : f32
  %2 = load xh[%0] : f16
  %3 = load xb[%0] : bf16
  %4 = load xi[%0] : i32
  %5 = load xc[%0] : u8
  %6 = cast %1 : i32
  store oi[%0], %6 : i32
  %7 = cast %2 : u32
  store ou[%0], %7 : u32
  %8 = cast %1 : u8
  store oc[%0], %8 : u8
  %9 = cast %3 : i8
  store os[%0], %9 : i8
  %10 = cast %1 : u16
  store ow[%0], %10 : u16
  %11 = cast %2 : bool
  store oz[%0], %11 : bool
  %12 = cast %4 : bool
  store oz[%0], %12 : bool
  %13 = cast %4 : f16
  store oh[%0], %13 : f16
  %14 = cast %3 : f16
  store oh[%0], %14 : f16
  %15 = cast %5 : bf16
  store ob[%0], %15 : bf16
  %16 = cast %4 : u8
  store oc[%0], %16 : u8
  %17 = cast %5 : i32
  store oi[%0], %17 : i32
  %18 = cast %11 : f32
  store of[%0], %18 : f32
  %19 = bitcast %1 : u32
  store ou[%0], %19 : u32
  %20 = bitcast %4 : f32
  store of[%0], %20 : f32
  %21 = bitcast %2 : u16
  store ow[%0], %21 : u16
  %22 = bitcast %21 : bf16
  store ob[%0], %22 : bf16
  %23 = bitcast %3 : f16
  store oh[%0], %23 : f16
  %24 = bitcast %4 : u32
  store ou[%0], %24 : u32
}
)";

/// f16/bf16 math: functions, min, fma, rem widened to f32; + - * / and compares native.
inline constexpr std::string_view kHalfMath = R"(kernel half_math dtype=f16 mode=elementwise
  param in xh: f16
  param in xb: bf16
  param out oh: f16
  param out ob: bf16
  param out oz: bool
  values 20
{
  %0 = builtin global_id.x : u32
  %1 = load xh[%0] : f16
  %2 = exp %1 : f16
  %3 = sqrt %2 : f16
  %4 = recip %3 : f16
  %5 = min %4, %1 : f16
  %6 = fma %5, %1, %4 : f16
  %7 = rem %6, %1 : f16
  %8 = pow %7, %1 : f16
  %9 = add %8, %1 : f16
  %10 = div %9, %1 : f16
  %11 = neg %10 : f16
  store oh[%0], %11 : f16
  %12 = load xb[%0] : bf16
  %13 = tanh %12 : bf16
  %14 = abs %13 : bf16
  %15 = atan2 %14, %12 : bf16
  %16 = mul %15, %12 : bf16
  %17 = lt %16, %12 : bool
  store oz[%0], %17 : bool
  store ob[%0], %16 : bf16
}
)";

/// Integer and bool arithmetic: narrow types wrapped, shifts modulo 32, zero constants bound.
inline constexpr std::string_view kIntMath = R"(kernel int_math dtype=f32 mode=elementwise
  param in xi: i32
  param in xc: u8
  param in xw: u16
  param in xs: i8
  param out oi: i32
  param out oc: u8
  param out ow: u16
  param out os: i8
  param out ou: u32
  param out oz: bool
  values 40
{
  %0 = builtin global_id.x : u32
  %1 = load xi[%0] : i32
  %2 = abs %1 : i32
  %3 = neg %2 : i32
  %4 = not %3 : i32
  %5 = shl %4, %1 : i32
  %6 = const 33 : i32
  %7 = shr %5, %6 : i32
  %8 = max %7, %1 : i32
  %9 = rem %8, %1 : i32
  store oi[%0], %9 : i32
  %10 = load xc[%0] : u8
  %11 = mul %10, %10 : u8
  %12 = add %11, %10 : u8
  %13 = shl %12, %10 : u8
  store oc[%0], %13 : u8
  %14 = load xw[%0] : u16
  %15 = mul %14, %14 : u16
  %16 = min %15, %14 : u16
  store ow[%0], %16 : u16
  %17 = load xs[%0] : i8
  %18 = neg %17 : i8
  %19 = xor %18, %17 : i8
  store os[%0], %19 : i8
  %20 = lt %1, %6 : bool
  %21 = not %20 : bool
  %22 = xor %21, %20 : bool
  %23 = or %22, %20 : bool
  %24 = const -1 : i32
  %25 = select %23, %24, %1 : i32
  store oi[%0], %25 : i32
  %26 = const 0 : u32
  %27 = ge %0, %26 : bool
  %28 = div %0, %26 : u32
  store oz[%0], %27 : bool
  store ou[%0], %28 : u32
}
)";

/// Simdgroup reductions, scans and shuffles: constant lanes, computed lanes, narrow types.
inline constexpr std::string_view kSimd = R"(kernel simd dtype=f16 mode=reduction
  param in x: f32
  param in xh: f16
  param in xi: i32
  param in xc: u8
  param out y: f32
  param out yh: f16
  param out yi: i32
  param out yc: u8
  param out yz: bool
  rule multiple_of 32
  values 40
{
  %0 = builtin global_id.x : u32
  %1 = load x[%0] : f32
  %2 = load xh[%0] : f16
  %3 = load xi[%0] : i32
  %4 = load xc[%0] : u8
  %5 = simd.sum %1 : f32
  %6 = simd.max %2 : f16
  %7 = simd.min %3 : i32
  %8 = simd.prefix_sum %2 : f16
  %9 = simd.prefix_exclusive_sum %4 : u8
  store y[%0], %5 : f32
  store yh[%0], %6 : f16
  store yi[%0], %7 : i32
  store yh[%0], %8 : f16
  store yc[%0], %9 : u8
  %10 = const 1 : u32
  %11 = simd.shuffle_xor %1, %10 : f32
  %12 = simd.shuffle_up %2, %10 : f16
  %13 = simd.shuffle_down %3, %10 : i32
  %14 = const 0 : i32
  %15 = simd.broadcast %4, %14 : u8
  %16 = simd.shuffle %1, %10 : f32
  store y[%0], %11 : f32
  store yh[%0], %12 : f16
  store yi[%0], %13 : i32
  store yc[%0], %15 : u8
  store y[%0], %16 : f32
  %17 = builtin thread_id.x : u32
  %18 = simd.shuffle %1, %17 : f32
  %19 = simd.shuffle_xor %2, %3 : f16
  %20 = simd.shuffle_up %3, %17 : i32
  %21 = simd.shuffle_down %4, %3 : u8
  %22 = simd.broadcast %1, %3 : f32
  %23 = const 32 : u32
  %24 = simd.shuffle_down %1, %23 : f32
  %25 = const -1 : i32
  %26 = simd.shuffle_up %1, %25 : f32
  %27 = lt %1, %1 : bool
  %28 = simd.shuffle %27, %10 : bool
  store y[%0], %18 : f32
  store yh[%0], %19 : f16
  store yi[%0], %20 : i32
  store yc[%0], %21 : u8
  store y[%0], %22 : f32
  store y[%0], %24 : f32
  store y[%0], %26 : f32
  store yz[%0], %28 : bool
}
)";

/// Values read only by ops that are not emitted: a load, a never-read variable, a select.
inline constexpr std::string_view kDeadChain = R"(kernel deadchain dtype=f32 mode=elementwise
  param in x: f32
  param out y: f32
  values 12
{
  %0 = builtin global_id.x : u32
  %1 = const 1 : u32
  %2 = add %0, %1 : u32
  %3 = load x[%2] : f32
  %4 = var %3 : f32
  %5 = load x[%0] : f32
  var.store %4, %5 : f32
  %6 = var.load %4 : f32
  %7 = const 0 : u32
  %8 = lt %0, %7 : bool
  %9 = select %8, %6, %5 : f32
  %10 = var %9 : f32
  store y[%0], %5 : f32
}
)";

/// One exclusive prefix sum: the prelude holds it and the helpers it calls, nothing else.
inline constexpr std::string_view kPrefix = R"(kernel prefix dtype=f32 mode=reduction
  param in x: f32
  param out y: f32
  rule multiple_of 32
  values 3
{
  %0 = builtin thread_id.x : u32
  %1 = load x[%0] : f32
  %2 = simd.prefix_exclusive_sum %1 : f32
  store y[%0], %2 : f32
}
)";

/// Two shared allocations, their loads and stores, a barrier, a launch bound from `exactly`.
inline constexpr std::string_view kShared = R"(kernel shared dtype=f32 mode=reduction
  param in x: f32
  param out y: f32
  shared tile: f32[64]
  shared flags: u8[64]
  rule exactly 64
  values 12
{
  %0 = builtin thread_id.x : u32  ; kernels/t.cpp:4
  %1 = load x[%0] : f32
  shared.store @tile[%0], %1 : f32  ; kernels/t.cpp:5
  %2 = const 1 : u8
  shared.store @flags[%0], %2 : u8
  barrier  ; kernels/t.cpp:6
  %5 = const 63 : u32
  %6 = sub %5, %0 : u32
  %7 = shared.load @tile[%6] : f32  ; kernels/t.cpp:7
  %8 = shared.load @flags[%6] : u8
  %9 = cast %8 : f32
  %10 = mul %7, %9 : f32
  store y[%0], %10 : f32
}
)";

/// Atomics of every kind on tensors and shared memory, with and without a used result.
inline constexpr std::string_view kAtomics = R"(kernel atomics dtype=f32 mode=reduction
  param in x: f32
  param out sum: f32
  param out counts: u32
  param out ids: i32
  shared hist: u32[32]
  shared acc: f32[4]
  shared mins: i32[4]
  rule multiple_of 32
  values 30
{
  %0 = builtin thread_id.x : u32
  %1 = load x[%0] : f32
  %2 = const 0 : u32
  %3 = atomic.add sum[%2], %1 : f32
  %4 = atomic.max sum[%2], %1 : f32
  atomic.min sum[%2], %1 : f32
  %5 = const 1 : u32
  %6 = atomic.add counts[%0], %5 : u32
  %7 = atomic.max counts[%0], %6 : u32
  atomic.and counts[%0], %5 : u32
  atomic.or counts[%0], %5 : u32
  atomic.xor counts[%0], %5 : u32
  %8 = atomic.xchg counts[%0], %7 : u32
  %9 = cast %8 : i32
  atomic.min ids[%0], %9 : i32
  %10 = const 31 : u32
  %11 = and %0, %10 : u32
  atomic.add @hist[%11], %5 : u32
  %12 = const 3 : u32
  %13 = and %0, %12 : u32
  %14 = atomic.add @acc[%13], %1 : f32
  atomic.max @acc[%13], %14 : f32
  %15 = atomic.min @acc[%13], %1 : f32
  %16 = atomic.max @mins[%13], %9 : i32
  %17 = add %3, %4 : f32
  %18 = add %17, %15 : f32
  store sum[%0], %18 : f32
  %19 = cast %16 : u32
  store counts[%0], %19 : u32
}
)";

/// Vector loads, extracts and stores of 2 to 16 lanes, on tensors and shared memory.
inline constexpr std::string_view kVectors = R"(kernel vectors dtype=f16 mode=reduction
  param in x: f16
  param in w: f32
  param out y: f16
  param out z: u8
  param out q: u8
  shared tile: f32[128]
  rule multiple_of 32
  values 30
{
  %0 = builtin global_id.x : u32
  %1 = const 8 : u32
  %2 = mul %0, %1 : u32
  %3 = load x[%2] : f16x8
  %4 = extract %3, 0 : f16
  %5 = extract %3, 1 : f16
  %6 = extract %3, 2 : f16
  %7 = extract %3, 3 : f16
  %8 = extract %3, 4 : f16
  %9 = extract %3, 5 : f16
  %10 = extract %3, 6 : f16
  %11 = extract %3, 7 : f16
  store y[%2], %11, %10, %9, %8, %7, %6, %5, %4 : f16x8
  %12 = const 4 : u32
  %13 = mul %0, %12 : u32
  %14 = load w[%13] : f32x4
  %15 = extract %14, 2 : f32
  %16 = builtin thread_id.x : u32
  %17 = mul %16, %12 : u32
  shared.store @tile[%17], %15, %15, %15, %15 : f32x4
  %18 = shared.load @tile[%17] : f32x2
  %19 = extract %18, 1 : f32
  %20 = cast %19 : u8
  %21 = const 0 : u8
  store q[%13], %20, %21, %20, %21 : u8x4
  %22 = const 16 : u32
  %23 = mul %0, %22 : u32
  store z[%23], %20, %20, %20, %20, %20, %20, %20, %20, %20, %20, %20, %20, %20, %20, %20, %21 : u8x16
}
)";

/// A contract with literal caps 512 and 1024 and a constexpr one, which does not bound the launch.
inline constexpr std::string_view kBounded = R"(kernel bounded dtype=f32 mode=elementwise
  param out y: f32
  param constexpr n: u32
  rule at_most 1024
  rule at_most 512
  rule exactly n/4
  values 2
{
  %0 = builtin thread_id.x : u32
  %1 = const 1 : f32
  store y[%0], %1 : f32
}
)";

/// A group reduction the pipeline has not lowered.
inline constexpr std::string_view kUnloweredReduction = R"(kernel unlowered dtype=f32 mode=reduction
  param in x: f32
  param out y: f32
  rule multiple_of 32
  values 3
{
  %0 = builtin thread_id.x : u32
  %1 = load x[%0] : f32
  %2 = reduce.sum %1 : f32
  store y[%0], %2 : f32
}
)";

}  // namespace iron::emit_test
