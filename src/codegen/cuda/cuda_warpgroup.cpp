/// wg.mma on sm_90a (docs/tensor-cores.md, "Warpgroup products"): each K-deep product is a
/// `wgmma.fence`, then one `wgmma.mma_async.m64nNk16` per 16 columns of K (`k32` per 32 columns
/// of 8-bit floats, both operands K-major) whose shared operands
/// are matrix descriptors of 128-byte swizzled tiles: K-major (8-row groups 1024 bytes apart; the
/// start address moves 32 bytes per 16 columns) or, for a row-major B, MN-major (the transpose
/// bit set; the start moves 16 rows, 2048 bytes; its 64-column panels b_panel elements apart,
/// the descriptor's leading offset). The register form passes the simdgroup's A
/// fragment, four registers per 16 columns, in mma.m16n8k16's A layout. The accumulator is the
/// simdgroup's 16×N fragment: its slots are the instruction's registers in order (slot 4j + e of an
/// m16n8 tile j is register 4j + e). Empty register fences on the accumulator before the fence and
/// after each wait keep ptxas from serializing the products (its warning C7514 fails the build).
#include "cuda_warpgroup.hpp"

#include <fmt/format.h>

#include <utility>

#include "iron/core/error.hpp"

namespace iron::codegen::cuda {
namespace {

constexpr std::uint32_t kMaxWidth = 256;
/// Columns of a 16-bit MN-major panel: one 128-byte swizzled row.
constexpr std::uint32_t kPanelColumns = 64;

/// The PTX type of wgmma operands of t.
std::string_view ptx_operand_type(DType t) {
  switch (t) {
    case DType::BF16:
      return "bf16";
    case DType::F8E4M3:
      return "e4m3";
    case DType::F8E5M2:
      return "e5m2";
    default:
      return "f16";
  }
}

/// The accumulator's `regs` registers as a wgmma's operand list ("%0, %1, …") and as the asm's
/// read-write outputs ("+f"(d[0]), …).
std::pair<std::string, std::string> accumulator_operands(std::uint32_t regs) {
  std::string list;
  std::string outputs;
  for (std::uint32_t i = 0; i < regs; ++i) {
    list += fmt::format("{}%{}", i == 0 ? "" : ", ", i);
    outputs += fmt::format("{}\"+f\"(d[{}])", i == 0 ? "" : ", ", i);
  }
  return {list, outputs};
}

std::string product_name(DType t, std::uint32_t n, bool a_in_registers) {
  return fmt::format("iron_wgmma_{}{}_n{}", a_in_registers ? "rs_" : "", dtype_name(t), n);
}

/// The helper for width n, element type t and where A is: K / 16 instructions on d, B's
/// descriptor advanced 16 columns of K each (32 bytes along a K-major row; 16 rows of 128 bytes
/// down an MN-major B, B_ROWS, whose panels of 64 columns lie b_panel elements apart where n
/// is wider than one), A's likewise or its registers 16 columns at a time.
c_like::Helper product_helper(DType t, std::uint32_t n, bool a_in_registers) {
  const std::uint32_t regs = n / 2;
  const auto [list, outputs] = accumulator_operands(regs);
  const std::string_view ptx_type = ptx_operand_type(t);
  const std::string name = product_name(t, n, a_in_registers);
  // Operands after the accumulators: A (a descriptor, or four registers), B's descriptor, the
  // scale-d predicate's source and, as immediates, the transposes.
  const std::uint32_t a_ops = a_in_registers ? 4 : 1;
  const std::string a_text =
      a_in_registers ? fmt::format("{{%{}, %{}, %{}, %{}}}", regs, regs + 1, regs + 2, regs + 3)
                     : fmt::format("%{}", regs);
  const std::uint32_t b_op = regs + a_ops;
  const std::string transposes =
      a_in_registers ? fmt::format("%{}", b_op + 2) : fmt::format("0, %{}", b_op + 2);
  const std::string a_inputs =
      a_in_registers ? "\"r\"(ar[4 * kk]), \"r\"(ar[4 * kk + 1]), \"r\"(ar[4 * kk + 2]), "
                       "\"r\"(ar[4 * kk + 3])"
                     : "\"l\"(da + 2ull * kk)";
  std::string text = fmt::format(
      R"(// d (this simdgroup's 16×{0} part of the warpgroup's 64×{0}) += A · B, K deep, by wgmma; A {1};
// B K-major ([n, k]) or, B_ROWS, MN-major ([k, n] in 128-byte rows, panels b_panel apart).
template <int K, int B_ROWS>
__device__ __forceinline__ void {2}(float* d, {3} a, const void* b,
                                   [[maybe_unused]] unsigned int b_panel) {{
  {4}
  const unsigned long long db =
      B_ROWS ? iron_wgmma_descriptor_rows(b, {14}) : iron_wgmma_descriptor(b);
  iron_wgmma_fence_registers<{5}>(d);
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
#pragma unroll
  for (int kk = 0; kk < K / 16; ++kk) {{
    asm volatile(
        "{{\n.reg .pred p;\nsetp.ne.b32 p, %{6}, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n{0}k16.f32.{7}.{7} {{{8}}}, {9}, %{10}, p, 1, 1, {11};\n}}\n"
        : {12}
        : {13}, "l"(db + (B_ROWS ? 128ull : 2ull) * kk), "r"(1), "n"(B_ROWS));
  }}
}}
)",
      n, a_in_registers ? "the simdgroup's A fragment in registers" : "K-major in shared memory",
      name, a_in_registers ? "const unsigned int*" : "const void*",
      a_in_registers ? "unsigned int ar[K / 4];\n  iron_wgmma_fence_operand<K / 4>(ar, a);"
                     : "const unsigned long long da = iron_wgmma_descriptor(a);",
      regs, b_op + 1, ptx_type, list, a_text, b_op, transposes, outputs, a_inputs,
      n > kPanelColumns ? "2u * b_panel" : "1024u");
  return {name,
          {"iron_wgmma_descriptor", "iron_wgmma_descriptor_rows", "iron_wgmma_fence_registers",
           "iron_wgmma_fence_operand"},
          std::move(text)};
}

/// The helper for width n of 8-bit operands t, both K-major in shared memory (the instruction
/// has no transposes for them): K / 32 instructions, each 32 bytes further along the rows.
c_like::Helper product_helper_8bit(DType t, std::uint32_t n) {
  const std::uint32_t regs = n / 2;
  const auto [list, outputs] = accumulator_operands(regs);
  const std::string name = product_name(t, n, false);
  std::string text = fmt::format(
      R"(// d (this simdgroup's 16×{0} part of the warpgroup's 64×{0}) += A · B, K deep, by wgmma on
// {1} operands: A and B K-major in shared memory (B as [n, k]).
template <int K, int B_ROWS>
__device__ __forceinline__ void {2}(float* d, const void* a, const void* b, unsigned int) {{
  static_assert(B_ROWS == 0, "8-bit operands are read K-major");
  const unsigned long long da = iron_wgmma_descriptor(a);
  const unsigned long long db = iron_wgmma_descriptor(b);
  iron_wgmma_fence_registers<{3}>(d);
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
#pragma unroll
  for (int kk = 0; kk < K / 32; ++kk) {{
    asm volatile(
        "{{\n.reg .pred p;\nsetp.ne.b32 p, %{4}, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n{0}k32.f32.{1}.{1} {{{5}}}, %{6}, %{7}, p, 1, 1;\n}}\n"
        : {8}
        : "l"(da + 2ull * kk), "l"(db + 2ull * kk), "r"(1));
  }}
}}
)",
      n, ptx_operand_type(t), name, regs, regs + 2, list, regs, regs + 1, outputs);
  return {name, {"iron_wgmma_descriptor", "iron_wgmma_fence_registers"}, std::move(text)};
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
        {"iron_wgmma_descriptor_rows",
         {},
         R"(// The descriptor of an MN-major tile in 128-byte swizzled rows at p, in panels of 64 columns
// (row k of a panel holds its columns of k): 8-row groups 1024 bytes apart (bits 32-45), the
// panels panel_bytes apart (the leading offset, bits 16-29), 128-byte swizzle.
__device__ __forceinline__ unsigned long long iron_wgmma_descriptor_rows(const void* p,
                                                                        unsigned int panel_bytes) {
  const unsigned long long address = static_cast<unsigned int>(__cvta_generic_to_shared(p));
  return ((address & 0x3FFFFull) >> 4) | (static_cast<unsigned long long>(panel_bytes >> 4) << 16) |
         (64ull << 32) | (1ull << 62);
}
)"},
        {"iron_wgmma_fence_operand",
         {},
         R"(// The register form's A, copied through an empty asm per register: its values are made
// before the wgmma.fence that follows, so ptxas need not insert one between the products.
template <int REGS>
__device__ __forceinline__ void iron_wgmma_fence_operand(unsigned int* to, const unsigned int* a) {
#pragma unroll
  for (int i = 0; i < REGS; ++i) {
    to[i] = a[i];
    asm volatile("" : "+r"(to[i])::"memory");
  }
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
      for (std::uint32_t n = 8; n <= kMaxWidth; n += 8) {
        h.push_back(product_helper(t, n, false));
        h.push_back(product_helper(t, n, true));
      }
    }
    for (const DType t : {DType::F8E4M3, DType::F8E5M2}) {
      for (std::uint32_t n = 8; n <= kMaxWidth; n += 8) h.push_back(product_helper_8bit(t, n));
    }
    return h;
  }();
  return all;
}

std::string wgmma_product(const c_like::WarpgroupProduct& p, c_like::Needs& needs) {
  IRON_INTERNAL_ASSERT(p.n % 8 == 0 && p.n <= kMaxWidth && p.k % (is_f8(p.input) ? 32 : 16) == 0,
                       "a wg.mma the verifier should have refused");
  const std::string helper = product_name(p.input, p.n, p.a_in_registers);
  needs.helpers.insert(helper);
  const std::string a =
      p.a_in_registers ? fmt::format("reinterpret_cast<const unsigned int*>({}.x)", p.a) : p.a;
  return fmt::format("{}<{}, {}>({}.x, {}, {}, {});", helper, p.k, p.b_rows ? 1 : 0, p.d, a, p.b,
                     p.b_rows ? p.b_panel : "0u");
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
