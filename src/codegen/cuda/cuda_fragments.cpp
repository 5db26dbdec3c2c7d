/// CUDA lowering of fragments (docs/tensor-cores.md): mma.sync and software keep the lane map of
/// PTX `mma.m16n8k16` (iron/core/fragment.hpp), so loads, stores and element positions are one
/// code and they differ in the product only; wmma's held fragments go to cuda_wmma.cpp.
#include "cuda_fragments.hpp"

#include <fmt/format.h>

#include "cuda_dialect.hpp"
#include "cuda_warpgroup.hpp"
#include "cuda_wmma.hpp"
#include "iron/core/error.hpp"

namespace iron::codegen::cuda {

const std::vector<c_like::Helper>& fragment_helpers() {
  static const std::vector<c_like::Helper> all = {
      {"iron_frag",
       {"iron_linear_thread"},
       R"(// A fragment of ROLE 0 (A, M×K), 1 (B, K×N) or 2 (accumulator, M×N), R×C elements: each
// lane of the warp owns R·C/32 of them in the layout of mma.m16n8k16, tile by tile (row-major
// tiles of 16×16 for A, 16×8 for B and accumulators). row()/col() give slot i's position, the
// sum of a part of the slot alone and one of the lane alone (row(i, l) = row(i, 0) + row(0, l),
// col alike): an unswizzled access forms each lane's address once and adds a constant a slot,
// which NVVM folds in a fraction of the time that per-slot lane terms take it.
template <class T, int ROLE, int R, int C>
struct iron_frag {
  static constexpr int kTileCols = ROLE == 0 ? 16 : 8;
  static constexpr int kPerTile = ROLE == 0 ? 8 : 4;
  static constexpr int kElements = R * C / 32;
  alignas(8) T x[kElements];
  static __device__ __forceinline__ int row(int i, unsigned int lane) {
    const int tile = i / kPerTile, e = i % kPerTile, r0 = tile / (C / kTileCols) * 16;
    const int g = static_cast<int>(lane >> 2), t = static_cast<int>(lane & 3u);
    return ROLE == 0 ? r0 + g + 8 * ((e >> 1) & 1)
                     : (ROLE == 1 ? r0 + 2 * t + (e & 1) + 8 * (e >> 1) : r0 + g + 8 * (e >> 1));
  }
  static __device__ __forceinline__ int col(int i, unsigned int lane) {
    const int tile = i / kPerTile, e = i % kPerTile, c0 = tile % (C / kTileCols) * kTileCols;
    const int g = static_cast<int>(lane >> 2), t = static_cast<int>(lane & 3u);
    return ROLE == 0 ? c0 + 2 * t + (e & 1) + 8 * (e >> 2)
                     : (ROLE == 1 ? c0 + g : c0 + 2 * t + (e & 1));
  }
};

// Where element e of a shared allocation in swizzled rows lives (SR: log2 of a row's elements,
// SC: of a 16-byte chunk's; SR = 0 for elements in order).
template <int SR, int SC>
__device__ __forceinline__ long long iron_swizzled(long long e) {
  return SR == 0 ? e : e ^ (((e >> SR) & 7) << SC);
}

// The element at (r, c) of the matrix at p + off: row-major p[off + r·ld + c] or column-major
// p[off + c·ld + r], placed by iron_swizzled.
template <bool COL, int SR = 0, int SC = 0>
__device__ __forceinline__ long long iron_frag_index(long long off, long long ld, int r, int c) {
  return iron_swizzled<SR, SC>(COL ? off + c * ld + r : off + r * ld + c);
}
)"},
      {"iron_copy_async",
       {},
       R"(// Starts copying BYTES (4, 8 or 16) from global to shared memory (both BYTES-aligned), or
// zeros when !valid (nothing is read then); cp.async.wait_group makes them land. 16-byte copies
// bypass L1 (.cg); the narrow ones may only go through it (.ca).
template <int BYTES>
__device__ __forceinline__ void iron_copy_async(void* shared, const void* global, bool valid) {
  const unsigned int to = static_cast<unsigned int>(__cvta_generic_to_shared(shared));
  if constexpr (BYTES == 16) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;"
                 :: "r"(to), "l"(global), "r"(valid ? 16 : 0) : "memory");
  } else {
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;"
                 :: "r"(to), "l"(global), "n"(BYTES), "r"(valid ? BYTES : 0) : "memory");
  }
}
)"},
      {"iron_frag_fill",
       {"iron_frag"},
       R"(// Every element of f set to v.
template <class T, int ROLE, int R, int C>
__device__ __forceinline__ void iron_frag_fill(iron_frag<T, ROLE, R, C>& f, T v) {
#pragma unroll
  for (int i = 0; i < R * C / 32; ++i) f.x[i] = v;
}
)"},
      {"iron_frag_load",
       {"iron_frag"},
       R"(// Each lane reads the elements it owns.
template <bool COL, int SR = 0, int SC = 0, class T, int ROLE, int R, int C>
__device__ __forceinline__ void iron_frag_load(iron_frag<T, ROLE, R, C>& f, const T* p,
                                               long long off, long long ld) {
  const unsigned int lane = iron_linear_thread() & 31u;
  if constexpr (SR == 0) {
    const T* q = p + iron_frag_index<COL>(off, ld, f.row(0, lane), f.col(0, lane));
#pragma unroll
    for (int i = 0; i < R * C / 32; ++i) {
      f.x[i] = q[iron_frag_index<COL>(0, ld, f.row(i, 0), f.col(i, 0))];
    }
  } else {
#pragma unroll
    for (int i = 0; i < R * C / 32; ++i) {
      f.x[i] = p[iron_frag_index<COL, SR, SC>(off, ld, f.row(i, lane), f.col(i, lane))];
    }
  }
}
)"},
      {"iron_frag_store",
       {"iron_frag"},
       R"(// Each lane writes the elements it owns; with WN != 0, those of columns W0 … W0 + WN - 1
// only (whole tiles), column c at c - W0.
template <bool COL, int SR = 0, int SC = 0, int W0 = 0, int WN = 0, class T, int ROLE, int R,
          int C>
__device__ __forceinline__ void iron_frag_store(const iron_frag<T, ROLE, R, C>& f, T* p,
                                                long long off, long long ld) {
  const unsigned int lane = iron_linear_thread() & 31u;
  if constexpr (SR == 0) {
    T* q = p + iron_frag_index<COL>(off, ld, f.row(0, lane), f.col(0, lane));
#pragma unroll
    for (int i = 0; i < R * C / 32; ++i) {
      if (WN != 0 && (f.col(i, 0) < W0 || f.col(i, 0) >= W0 + WN)) continue;
      q[iron_frag_index<COL>(0, ld, f.row(i, 0), f.col(i, 0) - W0)] = f.x[i];
    }
  } else {
#pragma unroll
    for (int i = 0; i < R * C / 32; ++i) {
      if (WN != 0 && (f.col(i, 0) < W0 || f.col(i, 0) >= W0 + WN)) continue;
      p[iron_frag_index<COL, SR, SC>(off, ld, f.row(i, lane), f.col(i, lane) - W0)] = f.x[i];
    }
  }
}
)"},
      {"iron_frag_load_shared",
       {"iron_frag_load"},
       R"(// Four (or two) 8×8 matrices of 16-bit elements from shared memory; lane l gives the
// address of row l % 8 of matrix l / 8. TRANS transposes each matrix on the way.
template <bool TRANS>
__device__ __forceinline__ void iron_ldmatrix_x4(unsigned int* d, const void* row) {
  const unsigned int a = static_cast<unsigned int>(__cvta_generic_to_shared(row));
  if (TRANS) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3]) : "r"(a));
  } else {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3]) : "r"(a));
  }
}
template <bool TRANS>
__device__ __forceinline__ void iron_ldmatrix_x2(unsigned int* d, const void* row) {
  const unsigned int a = static_cast<unsigned int>(__cvta_generic_to_shared(row));
  if (TRANS) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];"
                 : "=r"(d[0]), "=r"(d[1]) : "r"(a));
  } else {
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];"
                 : "=r"(d[0]), "=r"(d[1]) : "r"(a));
  }
}

// A or B fragment of 16-bit elements from shared memory by ldmatrix (offset and stride are
// multiples of 8 elements, so every 8-element row is a 16-byte chunk, placed whole by
// iron_swizzled); accumulators and 32-bit elements element by element. A takes one x4 per 16×16
// tile; B one x4 per pair of 16×8 tiles (x2 for an odd last one), transposed when B is row-major
// ([k, n]).
template <bool COL, int SR = 0, int SC = 0, class T, int ROLE, int R, int C>
__device__ __forceinline__ void iron_frag_load_shared(iron_frag<T, ROLE, R, C>& f, const T* p,
                                                      long long off, long long ld) {
  if constexpr (sizeof(T) != 2 || ROLE == 2) {
    iron_frag_load<COL, SR, SC>(f, p, off, ld);
  } else {
    const int lane = static_cast<int>(iron_linear_thread() & 31u);
    const int m = lane >> 3, rr = lane & 7;
    unsigned int* regs = reinterpret_cast<unsigned int*>(f.x);
    if constexpr (ROLE == 0) {
#pragma unroll
      for (int tr = 0; tr < R / 16; ++tr) {
#pragma unroll
        for (int tc = 0; tc < C / 16; ++tc) {
          const int r0 = tr * 16 + (m & 1) * 8, c0 = tc * 16 + (m >> 1) * 8;
          const long long at = COL ? off + (c0 + rr) * ld + r0 : off + (r0 + rr) * ld + c0;
          iron_ldmatrix_x4<COL>(regs + (tr * (C / 16) + tc) * 4, p + iron_swizzled<SR, SC>(at));
        }
      }
    } else {
#pragma unroll
      for (int kt = 0; kt < R / 16; ++kt) {
#pragma unroll
        for (int nt = 0; nt + 1 < C / 8; nt += 2) {
          const int n0 = (nt + (m >> 1)) * 8, k0 = kt * 16 + (m & 1) * 8;
          const long long at = COL ? off + (n0 + rr) * ld + k0 : off + (k0 + rr) * ld + n0;
          iron_ldmatrix_x4<!COL>(regs + (kt * (C / 8) + nt) * 2, p + iron_swizzled<SR, SC>(at));
        }
        if constexpr ((C / 8) % 2 == 1) {
          const int n0 = (C / 8 - 1) * 8, k0 = kt * 16 + (m & 1) * 8;
          const long long at = COL ? off + (n0 + rr) * ld + k0 : off + (k0 + rr) * ld + n0;
          iron_ldmatrix_x2<!COL>(regs + (kt * (C / 8) + C / 8 - 1) * 2, p + iron_swizzled<SR, SC>(at));
        }
      }
    }
  }
}
)"},
      {"iron_frag_mma_sync",
       {"iron_frag"},
       R"(// d += a·b by mma.sync.m16n8k16 (f32 accumulate), k tiles outermost.
template <class T, int M, int N, int K>
__device__ __forceinline__ void iron_frag_mma_sync(iron_frag<float, 2, M, N>& d,
                                                   const iron_frag<T, 0, M, K>& a,
                                                   const iron_frag<T, 1, K, N>& b) {
  const unsigned int* ar = reinterpret_cast<const unsigned int*>(a.x);
  const unsigned int* br = reinterpret_cast<const unsigned int*>(b.x);
#pragma unroll
  for (int kt = 0; kt < K / 16; ++kt) {
#pragma unroll
    for (int mt = 0; mt < M / 16; ++mt) {
#pragma unroll
      for (int nt = 0; nt < N / 8; ++nt) {
        const unsigned int* x = ar + (mt * (K / 16) + kt) * 4;
        const unsigned int* y = br + (kt * (N / 8) + nt) * 2;
        float* c = d.x + (mt * (N / 8) + nt) * 4;
        if constexpr (T::bfloat) {
          asm volatile(
              "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, "
              "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
              : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
              : "r"(x[0]), "r"(x[1]), "r"(x[2]), "r"(x[3]), "r"(y[0]), "r"(y[1]));
        } else {
          asm volatile(
              "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, "
              "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
              : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
              : "r"(x[0]), "r"(x[1]), "r"(x[2]), "r"(x[3]), "r"(y[0]), "r"(y[1]));
        }
      }
    }
  }
}
)"},
      {"iron_frag_mma_software",
       {"iron_frag"},
       R"(// d += a·b without tensor cores, on the same lane map: for each k, each lane gathers the
// A-row and B-column elements of its outputs from their owners by shuffles, once for all the
// tiles that share them; products are summed with fma in increasing k, as the simulator does.
template <class T, int M, int N, int K>
__device__ __forceinline__ void iron_frag_mma_software(iron_frag<float, 2, M, N>& d,
                                                       const iron_frag<T, 0, M, K>& a,
                                                       const iron_frag<T, 1, K, N>& b) {
  const unsigned int lane = iron_linear_thread() & 31u;
  const int g = static_cast<int>(lane >> 2), t = static_cast<int>(lane & 3u);
#pragma unroll
  for (int kt = 0; kt < K / 16; ++kt) {
#pragma unroll
    for (int k = 0; k < 16; ++k) {
      const int owner = (k & 7) >> 1;
      float x[M / 16][2], y[N / 8][2];
#pragma unroll
      for (int mt = 0; mt < M / 16; ++mt) {  // A(g, k) and A(g + 8, k) of each row tile
        const T* at = a.x + (mt * (K / 16) + kt) * 8 + (k & 1) + 4 * (k >> 3);
        x[mt][0] = static_cast<float>(__shfl_sync(0xffffffffu, at[0], g * 4 + owner));
        x[mt][1] = static_cast<float>(__shfl_sync(0xffffffffu, at[2], g * 4 + owner));
      }
#pragma unroll
      for (int nt = 0; nt < N / 8; ++nt) {  // B(k, 2t) and B(k, 2t + 1) of each column tile
        const T* bt = b.x + (kt * (N / 8) + nt) * 4 + (k & 1) + 2 * (k >> 3);
        y[nt][0] = static_cast<float>(__shfl_sync(0xffffffffu, bt[0], (2 * t) * 4 + owner));
        y[nt][1] = static_cast<float>(__shfl_sync(0xffffffffu, bt[0], (2 * t + 1) * 4 + owner));
      }
#pragma unroll
      for (int mt = 0; mt < M / 16; ++mt) {
#pragma unroll
        for (int nt = 0; nt < N / 8; ++nt) {
          float* c = d.x + (mt * (N / 8) + nt) * 4;
          c[0] = fmaf(x[mt][0], y[nt][0], c[0]);
          c[1] = fmaf(x[mt][0], y[nt][1], c[1]);
          c[2] = fmaf(x[mt][1], y[nt][0], c[2]);
          c[3] = fmaf(x[mt][1], y[nt][1], c[3]);
        }
      }
    }
  }
}
)"},
      {"iron_frag_row_reduce",
       {"iron_frag"},
       R"(// Row r of rows (an R×8 accumulator) set, in every column, to the max (or, when SUM, the
// sum) of row r of f. Lane (g, t) holds columns 2t and 2t + 1 of rows g and g + 8 of each
// tile: it combines its elements of a row in increasing column, then the four lanes of its
// quad, which hold the rest of the row, exchange partial results by two butterfly shuffles
// (so every lane ends with the same bits).
template <bool SUM, int R, int C>
__device__ __forceinline__ void iron_frag_row_reduce(iron_frag<float, 2, R, 8>& rows,
                                                     const iron_frag<float, 2, R, C>& f) {
#pragma unroll
  for (int mt = 0; mt < R / 16; ++mt) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const float* x = f.x + mt * (C / 8) * 4 + 2 * h;
      float v = x[0];
#pragma unroll
      for (int i = 1; i < C / 4; ++i) {
        const float y = x[i / 2 * 4 + i % 2];
        v = SUM ? v + y : fmaxf(v, y);
      }
#pragma unroll
      for (int mask = 1; mask <= 2; mask *= 2) {
        const float y = __shfl_xor_sync(0xffffffffu, v, mask);
        v = SUM ? v + y : fmaxf(v, y);
      }
      rows.x[mt * 4 + 2 * h] = v;
      rows.x[mt * 4 + 2 * h + 1] = v;
    }
  }
}
)"},
      {"iron_frag_convert",
       {"iron_frag"},
       R"(// a = f rounded to nearest T, in place: slot i of an A fragment and slot i of an
// accumulator of its shape are the same element of the same lane (A tile (m, k) is
// accumulator tiles (m, 2k) and (m, 2k + 1)).
template <class T, int R, int C>
__device__ __forceinline__ void iron_frag_convert(iron_frag<T, 0, R, C>& a,
                                                  const iron_frag<float, 2, R, C>& f) {
#pragma unroll
  for (int i = 0; i < R * C / 32; ++i) a.x[i] = T(f.x[i]);
}
)"},
  };
  return all;
}

namespace {

int role_number(ir::FragmentRole r) { return static_cast<int>(r); }

}  // namespace

bool CudaDialect::wmma_holds(const ir::FragmentShape& shape) const {
  return mma_ == MmaStrategy::Wmma && cuda::wmma_holds(shape);
}

std::vector<std::string> CudaDialect::fragment_declaration(const std::string& name,
                                                           const ir::FragmentShape& shape, DType t,
                                                           const std::string& init,
                                                           c_like::Needs& needs) const {
  if (wmma_holds(shape)) {
    return wmma_declaration(name, shape, type(t), init, wmma_row_major_b_, needs);
  }
  needs.helpers.insert("iron_frag_fill");
  return {fmt::format("iron_frag<{}, {}, {}, {}> {};", type(t), role_number(shape.role), shape.rows,
                      shape.cols, name),
          fmt::format("iron_frag_fill({}, {});", name, init)};
}

std::string CudaDialect::fragment_access(const c_like::FragmentAccess& f,
                                         c_like::Needs& needs) const {
  if (wmma_holds(f.shape)) return wmma_access(f, needs);
  const bool col = f.layout == ir::MatrixLayout::ColMajor;
  std::string helper = f.store ? "iron_frag_store" : "iron_frag_load";
  if (!f.store && f.space == c_like::Space::Shared && mma_sync()) {
    helper = "iron_frag_load_shared";
  }
  needs.helpers.insert(helper);
  std::string placement = f.swizzle_row_shift == 0 && f.window_cols == 0
                              ? ""
                              : fmt::format(", {}, {}", f.swizzle_row_shift, f.swizzle_chunk_shift);
  if (f.window_cols != 0) placement += fmt::format(", {}, {}", f.window_first, f.window_cols);
  return fmt::format("{}<{}{}>({}, {}, {}, {});", helper, col ? "true" : "false", placement,
                     f.fragment, f.base, f.offset, f.stride);
}

std::string CudaDialect::fragment_product(const c_like::FragmentProduct& p,
                                          c_like::Needs& needs) const {
  if (mma_ == MmaStrategy::Wmma) return wmma_product(p, needs);
  const bool tensor_cores = mma_sync() && p.input != DType::F32;
  const std::string helper = tensor_cores ? "iron_frag_mma_sync" : "iron_frag_mma_software";
  needs.helpers.insert(helper);
  return fmt::format("{}({}, {}, {});", helper, p.d, p.a, p.b);
}

std::vector<std::string> CudaDialect::async_copy(const c_like::Access& dst,
                                                 const c_like::Access& src,
                                                 const std::string& valid,
                                                 c_like::Needs& needs) const {
  needs.helpers.insert("iron_copy_async");
  return {fmt::format("iron_copy_async<{}>({} + {}, {} + {}, {});",
                      src.lanes * dtype_size(src.type), dst.base, dst.index, src.base, src.index,
                      valid)};
}

std::string CudaDialect::warpgroup_product(const c_like::WarpgroupProduct& p,
                                           c_like::Needs& needs) const {
  IRON_INTERNAL_ASSERT(mma_ == MmaStrategy::Wgmma, "a wg.mma left for a profile without wgmma");
  return wgmma_product(p, needs);
}

std::string CudaDialect::warpgroup_commit(c_like::Needs&) const { return wgmma_commit(); }

std::string CudaDialect::warpgroup_wait(const std::string& d, std::uint32_t n, int pending,
                                        c_like::Needs& needs) const {
  return wgmma_wait(d, n, pending, needs);
}

std::string CudaDialect::proxy_fence(c_like::Needs&) const { return wgmma_proxy_fence(); }
std::string CudaDialect::register_budget(std::int64_t count, bool raise, c_like::Needs&) const {
  return fmt::format(R"(asm volatile("setmaxnreg.{}.sync.aligned.u32 {};" ::: "memory");)",
                     raise ? "inc" : "dec", count);
}

// Warpgroup g's turn is named barrier 1 + g, of 256 threads: g's own, which wait at it, and the
// previous warpgroup's, which arrive there when they pass.
std::string CudaDialect::turn(ir::TurnStep step, std::uint32_t warpgroups,
                              c_like::Needs& needs) const {
  needs.helpers.insert("iron_linear_thread");
  const std::string group = "(iron_linear_thread() >> 7)";
  switch (step) {
    case ir::TurnStep::Begin:
      return fmt::format(R"(if ({} == {}u) asm volatile("bar.arrive 1, 256;" ::: "memory");)",
                         group, warpgroups - 1);
    case ir::TurnStep::Wait:
      return fmt::format(R"(asm volatile("bar.sync %0, 256;" :: "r"(1u + {}) : "memory");)", group);
    case ir::TurnStep::Pass:
      return fmt::format(
          R"(asm volatile("bar.arrive %0, 256;" :: "r"(1u + ({} + 1u) % {}u) : "memory");)", group,
          warpgroups);
  }
  IRON_INTERNAL_ERROR("a turn step that is not begin, wait or pass");
}

std::string CudaDialect::async_commit(c_like::Needs&) const {
  return R"(asm volatile("cp.async.commit_group;" ::: "memory");)";
}

std::string CudaDialect::async_wait(int pending, c_like::Needs&) const {
  return fmt::format(R"(asm volatile("cp.async.wait_group {};" ::: "memory");)", pending);
}

std::string CudaDialect::fragment_element(const std::string& name, const ir::FragmentShape& shape,
                                          DType, std::uint32_t slot) const {
  if (wmma_holds(shape)) return wmma_element(name, slot);
  return fmt::format("{}.x[{}]", name, slot);
}

std::string CudaDialect::fragment_coord(const std::string& name, const ir::FragmentShape& shape,
                                        std::uint32_t slot, bool column,
                                        c_like::Needs& needs) const {
  if (wmma_holds(shape)) return wmma_coord(shape, slot, column, needs);
  needs.helpers.insert("iron_frag");
  return fmt::format("static_cast<unsigned int>({}.{}({}, iron_linear_thread() & 31u))", name,
                     column ? "col" : "row", slot);
}

std::string CudaDialect::fragment_row_value(const std::string& rows, const ir::FragmentShape& shape,
                                            std::uint32_t slot) const {
  if (wmma_holds(shape)) return wmma_row_value(rows, shape, slot);
  // Slot e of tile (m, n) lies in row g + 8·(e >> 1) of row tile m, which the same lane holds in
  // slots 4m + 2·(e >> 1) and 4m + 2·(e >> 1) + 1 of the row vector.
  const std::uint32_t per_tile = ir::tile_elements_per_lane(ir::FragmentRole::Acc);
  const std::uint32_t row_tile = slot / per_tile / (shape.cols / ir::tile_cols(shape.role));
  const ir::FragmentShape vector{ir::FragmentRole::Acc, shape.rows, 8};
  return fragment_element(rows, vector, DType::F32, row_tile * per_tile + ((slot % per_tile) & 2u));
}

std::string CudaDialect::fragment_row_reduce(const std::string& rows, const std::string& source,
                                             ir::RowReduction reduction,
                                             c_like::Needs& needs) const {
  if (mma_ == MmaStrategy::Wmma) return wmma_row_reduce(rows, source, reduction, needs);
  needs.helpers.insert("iron_frag_row_reduce");
  return fmt::format("iron_frag_row_reduce<{}>({}, {});",
                     reduction == ir::RowReduction::Sum ? "true" : "false", rows, source);
}

std::string CudaDialect::fragment_convert(const std::string& a, const std::string& source,
                                          c_like::Needs& needs) const {
  if (mma_ == MmaStrategy::Wmma) return wmma_convert(a, source, needs);
  needs.helpers.insert("iron_frag_convert");
  return fmt::format("iron_frag_convert({}, {});", a, source);
}

}  // namespace iron::codegen::cuda
