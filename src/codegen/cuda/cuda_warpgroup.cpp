/// wg.mma on sm_90a (docs/tensor-cores.md, "Warpgroup products"): each K-deep product is a
/// `wgmma.fence`, then one `wgmma.mma_async.m64nNk16` per 16 columns of K whose operands are
/// shared-memory matrix descriptors of 128-byte swizzled, K-major tiles (8-row groups 1024 bytes
/// apart; the start address moves 32 bytes per 16 columns). The accumulator is the simdgroup's
/// 16×N fragment: its slots are the instruction's registers in order (slot 4j + e of an m16n8
/// tile j is register 4j + e). Empty register fences on the accumulator before the fence and
/// after each wait keep ptxas from serializing the products (its warning C7514 fails the build).
#include "cuda_warpgroup.hpp"

#include <fmt/format.h>

#include "iron/core/error.hpp"

namespace iron::codegen::cuda {
namespace {

constexpr std::uint32_t kMaxWidth = 256;

std::string product_name(DType t, std::uint32_t n) {
  return fmt::format("iron_wgmma_{}_n{}", dtype_name(t), n);
}

/// The helper for width n and element type t: K / 16 instructions on d, the descriptors of the
/// operands' first elements advanced by 32 bytes each.
c_like::Helper product_helper(DType t, std::uint32_t n) {
  const std::uint32_t regs = n / 2;
  std::string list;
  std::string outputs;
  for (std::uint32_t i = 0; i < regs; ++i) {
    list += fmt::format("{}%{}", i == 0 ? "" : ", ", i);
    outputs += fmt::format("{}\"+f\"(d[{}])", i == 0 ? "" : ", ", i);
  }
  const std::string_view ptx_type = t == DType::BF16 ? "bf16" : "f16";
  std::string text = fmt::format(
      R"(// d (this simdgroup's 16×{0} part of the warpgroup's 64×{0}) += A · B, K deep, by wgmma.
template <int K>
__device__ __forceinline__ void {1}(float* d, const void* a, const void* b) {{
  const unsigned long long da = iron_wgmma_descriptor(a), db = iron_wgmma_descriptor(b);
  iron_wgmma_fence_registers<{2}>(d);
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
#pragma unroll
  for (int kk = 0; kk < K / 16; ++kk) {{
    asm volatile(
        "{{\n.reg .pred p;\nsetp.ne.b32 p, %{3}, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n{0}k16.f32.{4}.{4} {{{5}}}, %{6}, %{7}, p, 1, 1, 0, 0;\n}}\n"
        : {8}
        : "l"(da + 2ull * kk), "l"(db + 2ull * kk), "r"(1));
  }}
}}
)",
      n, product_name(t, n), regs, regs + 2, ptx_type, list, regs, regs + 1, outputs);
  return {
      product_name(t, n), {"iron_wgmma_descriptor", "iron_wgmma_fence_registers"}, std::move(text)};
}

}  // namespace

const std::vector<c_like::Helper>& warpgroup_helpers() {
  static const std::vector<c_like::Helper> all = [] {
    std::vector<c_like::Helper> h = {
        {"iron_wgmma_descriptor",
         {},
         R"(// The shared-memory matrix descriptor of a K-major tile in 128-byte swizzled rows at p:
// the address (bits 0-13, in 16-byte units), the leading offset 16 bytes (16-29), the stride
// between 8-row groups 1024 bytes (32-45) and the 128-byte swizzle (62-63).
__device__ __forceinline__ unsigned long long iron_wgmma_descriptor(const void* p) {
  const unsigned long long address = static_cast<unsigned int>(__cvta_generic_to_shared(p));
  return ((address & 0x3FFFFull) >> 4) | (1ull << 16) | (64ull << 32) | (1ull << 62);
}
)"},
        {"iron_wgmma_fence_registers",
         {},
         R"(// An empty asm on each accumulator register: the compiler keeps them in place across the
// wgmma fences and waits instead of serializing the products.
template <int REGS>
__device__ __forceinline__ void iron_wgmma_fence_registers(float* d) {
#pragma unroll
  for (int i = 0; i < REGS; ++i) asm volatile("" : "+f"(d[i])::"memory");
}
)"},
        {"iron_wgmma_wait",
         {"iron_wgmma_fence_registers"},
         R"(// Waits until at most PENDING of the simdgroup's product groups are unfinished.
template <int PENDING, int REGS>
__device__ __forceinline__ void iron_wgmma_wait(float* d) {
  asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(PENDING) : "memory");
  iron_wgmma_fence_registers<REGS>(d);
}
)"},
    };
    for (const DType t : {DType::F16, DType::BF16}) {
      for (std::uint32_t n = 8; n <= kMaxWidth; n += 8) h.push_back(product_helper(t, n));
    }
    return h;
  }();
  return all;
}

std::string wgmma_product(const c_like::WarpgroupProduct& p, c_like::Needs& needs) {
  IRON_INTERNAL_ASSERT(p.n % 8 == 0 && p.n <= kMaxWidth && p.k % 16 == 0,
                       "a wg.mma the verifier should have refused");
  const std::string helper = product_name(p.input, p.n);
  needs.helpers.insert(helper);
  return fmt::format("{}<{}>({}.x, {}, {});", helper, p.k, p.d, p.a, p.b);
}

std::string wgmma_commit() {
  return R"(asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");)";
}

std::string wgmma_wait(const std::string& d, std::uint32_t n, int pending, c_like::Needs& needs) {
  needs.helpers.insert("iron_wgmma_wait");
  return fmt::format("iron_wgmma_wait<{}, {}>({}.x);", pending, n / 2, d);
}

std::string wgmma_proxy_fence() {
  return R"(asm volatile("fence.proxy.async.shared::cta;" ::: "memory");)";
}

}  // namespace iron::codegen::cuda
