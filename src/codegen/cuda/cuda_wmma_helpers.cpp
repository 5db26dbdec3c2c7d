/// The wmma strategy's prelude helpers. wmma leaves the layout of its fragments unspecified, so
/// nothing here assumes one: loads and stores go through load_matrix_sync/store_matrix_sync (or
/// a 16×16 tile of the warp's shared scratch when the address or stride rules do not hold), and
/// where an element of a lane's fragment lies is read from a tile whose element (r, c) holds
/// r·16 + c.
#include "cuda_wmma_helpers.hpp"

namespace iron::codegen::cuda {

const std::vector<c_like::Helper>& wmma_helpers() {
  static const std::vector<c_like::Helper> all = {
      {"iron_wmma",
       {"iron_frag"},
       R"(// A fragment held as wmma 16×16×16 tiles in row-major tile order. ROLE 0: A (M×K),
// row-major tiles; 1: B (K×N), column-major tiles; 3: B, row-major tiles; 2: accumulator (M×N)
// of f32.
template <class T, int ROLE>
struct iron_wmma_tile;
template <class T>
struct iron_wmma_tile<T, 0> {
  using type =
      nvcuda::wmma::fragment<nvcuda::wmma::matrix_a, 16, 16, 16, T, nvcuda::wmma::row_major>;
};
template <class T>
struct iron_wmma_tile<T, 1> {
  using type =
      nvcuda::wmma::fragment<nvcuda::wmma::matrix_b, 16, 16, 16, T, nvcuda::wmma::col_major>;
};
template <class T>
struct iron_wmma_tile<T, 3> {
  using type =
      nvcuda::wmma::fragment<nvcuda::wmma::matrix_b, 16, 16, 16, T, nvcuda::wmma::row_major>;
};
template <class T>
struct iron_wmma_tile<T, 2> {
  using type = nvcuda::wmma::fragment<nvcuda::wmma::accumulator, 16, 16, 16, float>;
};
template <class T, int ROLE, int R, int C>
struct iron_wmma {
  using tile = typename iron_wmma_tile<T, ROLE>::type;
  static constexpr int kTiles = R / 16 * (C / 16);
  tile t[kTiles];
};

// Whether load_matrix_sync and store_matrix_sync may use p with stride ld directly: p 32-byte
// aligned, ld a multiple of 16 bytes and at least one tile wide.
template <class T>
__device__ __forceinline__ bool iron_wmma_direct(const T* p, long long ld) {
  const bool aligned = (reinterpret_cast<unsigned long long>(p) & 31ull) == 0ull;
  return aligned && ld % (16 / static_cast<long long>(sizeof(T))) == 0 && ld >= 16 &&
         ld <= 0x7fffffffll;
}

// Element (r, c) of a 16×16 tile held in scratch in the layout of the fragment's tiles.
template <int ROLE>
__device__ __forceinline__ int iron_wmma_scratch_index(int r, int c) {
  return ROLE == 1 ? c * 16 + r : r * 16 + c;
}
)"},
      {"iron_wmma_fill",
       {"iron_wmma"},
       R"(// Every element of f set to v.
template <class T, int ROLE, int R, int C, class V>
__device__ __forceinline__ void iron_wmma_fill(iron_wmma<T, ROLE, R, C>& f, V v) {
#pragma unroll
  for (int i = 0; i < f.kTiles; ++i) nvcuda::wmma::fill_fragment(f.t[i], v);
}
)"},
      {"iron_wmma_load",
       {"iron_wmma"},
       R"(// Tile by tile: load_matrix_sync straight from memory when the tile's layout matches (any
// layout for accumulators) and the address and stride allow it; otherwise the warp copies the
// tile into its scratch in the fragment's layout and loads it from there.
template <bool COL, class T, int ROLE, int R, int C>
__device__ __forceinline__ void iron_wmma_load(iron_wmma<T, ROLE, R, C>& f, const T* p,
                                               long long off, long long ld, float* scratch) {
  using namespace nvcuda;
  const T* base = p + off;
  const bool direct = (ROLE == 2 || COL == (ROLE == 1)) && iron_wmma_direct(base, ld);
  const int lane = static_cast<int>(iron_linear_thread() & 31u);
  T* s = reinterpret_cast<T*>(scratch);
#pragma unroll
  for (int i = 0; i < f.kTiles; ++i) {
    const int r0 = i / (C / 16) * 16, c0 = i % (C / 16) * 16;
    const T* from = base;
    unsigned int stride = 16u;
    if (direct) {
      from = base + iron_frag_index<COL>(0, ld, r0, c0);
      stride = static_cast<unsigned int>(ld);
    } else {
      for (int e = lane; e < 256; e += 32) {
        s[iron_wmma_scratch_index<ROLE>(e / 16, e % 16)] =
            base[iron_frag_index<COL>(0, ld, r0 + e / 16, c0 + e % 16)];
      }
      __syncwarp();
      from = s;
    }
    if constexpr (ROLE == 2) {
      const wmma::layout_t layout = direct && COL ? wmma::mem_col_major : wmma::mem_row_major;
      wmma::load_matrix_sync(f.t[i], from, stride, layout);
    } else {
      wmma::load_matrix_sync(f.t[i], from, stride);
    }
    if (!direct) __syncwarp();
  }
}
)"},
      {"iron_wmma_store",
       {"iron_wmma"},
       R"(// An accumulator, tile by tile: store_matrix_sync straight to memory when the address and
// stride allow it, otherwise into the warp's scratch and from there element by element. With
// WN != 0, the tiles of columns W0 … W0 + WN - 1 only, column c at c - W0.
template <bool COL, int W0 = 0, int WN = 0, int R, int C>
__device__ __forceinline__ void iron_wmma_store(const iron_wmma<float, 2, R, C>& f, float* p,
                                                long long off, long long ld, float* scratch) {
  using namespace nvcuda;
  float* base = p + off;
  const bool direct = iron_wmma_direct(base, ld);
  const int lane = static_cast<int>(iron_linear_thread() & 31u);
#pragma unroll
  for (int i = 0; i < f.kTiles; ++i) {
    const int r0 = i / (C / 16) * 16, tile_c0 = i % (C / 16) * 16, c0 = tile_c0 - W0;
    if (WN != 0 && (tile_c0 < W0 || tile_c0 >= W0 + WN)) continue;
    if (direct) {
      wmma::store_matrix_sync(base + iron_frag_index<COL>(0, ld, r0, c0), f.t[i],
                              static_cast<unsigned int>(ld),
                              COL ? wmma::mem_col_major : wmma::mem_row_major);
    } else {
      wmma::store_matrix_sync(scratch, f.t[i], 16u, wmma::mem_row_major);
      __syncwarp();
      for (int e = lane; e < 256; e += 32) {
        base[iron_frag_index<COL>(0, ld, r0 + e / 16, c0 + e % 16)] = scratch[e];
      }
      __syncwarp();
    }
  }
}

// An A or B fragment (wmma cannot store those): each lane writes every element it holds at the
// position a tile loaded from a coded matrix (element (r, c) holds r·16 + c) gives it.
template <bool COL, class T, int ROLE, int R, int C>
__device__ __forceinline__ void iron_wmma_store_operand(const iron_wmma<T, ROLE, R, C>& f, T* p,
                                                        long long off, long long ld,
                                                        float* scratch) {
  using namespace nvcuda;
  const int lane = static_cast<int>(iron_linear_thread() & 31u);
  T* s = reinterpret_cast<T*>(scratch);
  for (int e = lane; e < 256; e += 32) {
    s[iron_wmma_scratch_index<ROLE>(e / 16, e % 16)] = T(static_cast<float>(e));
  }
  __syncwarp();
  typename iron_wmma<T, ROLE, R, C>::tile where;
  wmma::load_matrix_sync(where, s, 16u);
  __syncwarp();
#pragma unroll
  for (int i = 0; i < f.kTiles; ++i) {
    const int r0 = i / (C / 16) * 16, c0 = i % (C / 16) * 16;
#pragma unroll
    for (int k = 0; k < where.num_elements; ++k) {
      const int code = static_cast<int>(static_cast<float>(where.x[k]));
      p[iron_frag_index<COL>(off, ld, r0 + code / 16, c0 + code % 16)] = f.t[i].x[k];
    }
  }
}
)"},
      {"iron_wmma_mma",
       {"iron_wmma"},
       R"(// d += a·b by wmma::mma_sync on 16×16×16 tiles, k tiles outermost.
template <class T, int B_ROLE, int M, int N, int K>
__device__ __forceinline__ void iron_wmma_mma(iron_wmma<float, 2, M, N>& d,
                                              const iron_wmma<T, 0, M, K>& a,
                                              const iron_wmma<T, B_ROLE, K, N>& b) {
#pragma unroll
  for (int kt = 0; kt < K / 16; ++kt) {
#pragma unroll
    for (int mt = 0; mt < M / 16; ++mt) {
#pragma unroll
      for (int nt = 0; nt < N / 16; ++nt) {
        auto& c = d.t[mt * (N / 16) + nt];
        nvcuda::wmma::mma_sync(c, a.t[mt * (K / 16) + kt], b.t[kt * (N / 16) + nt], c);
      }
    }
  }
}
)"},
      {"iron_wmma_acc_slots",
       {"iron_wmma"},
       R"(// Where the elements of a lane's accumulator tile lie: where[k] = r·16 + c for element (r, c)
// in x[k], read from a tile loaded from a matrix whose element (r, c) holds r·16 + c (exact in
// f32). `where` is the thread's own 8 bytes of shared memory, which only it reads.
__device__ __forceinline__ void iron_wmma_acc_slots(float* scratch, unsigned char* where) {
  using namespace nvcuda;
  const int lane = static_cast<int>(iron_linear_thread() & 31u);
  for (int e = lane; e < 256; e += 32) scratch[e] = static_cast<float>(e);
  __syncwarp();
  typename iron_wmma<float, 2, 16, 16>::tile tile;
  wmma::load_matrix_sync(tile, scratch, 16u, wmma::mem_row_major);
  __syncwarp();
  static_assert(iron_wmma<float, 2, 16, 16>::tile::num_elements == 8, "8 elements a lane");
#pragma unroll
  for (int k = 0; k < 8; ++k) where[k] = static_cast<unsigned char>(tile.x[k]);
}

// The row (or, when COLUMN, the column) of slot `slot` of an accumulator of C columns: element
// slot % 8 of tile slot / 8.
template <int C, bool COLUMN>
__device__ __forceinline__ unsigned int iron_wmma_coord(const unsigned char* where, int slot) {
  const int tile = slot / 8, pos = where[slot % 8];
  return static_cast<unsigned int>(COLUMN ? tile % (C / 16) * 16 + pos % 16
                                          : tile / (C / 16) * 16 + pos / 16);
}
)"},
      {"iron_wmma_row_reduce",
       {"iron_wmma", "iron_frag_row_reduce"},
       R"(// Row r of rows (an R×8 accumulator in the lane map of mma.m16n8k16) set, in every
// column, to the max (or, when SUM, the sum) of row r of f: each tile of f goes to the warp's
// scratch, and lane (g, t) combines rows g and g + 8 of each row of tiles in increasing column.
template <bool SUM, int R, int C>
__device__ __forceinline__ void iron_wmma_row_reduce(iron_frag<float, 2, R, 8>& rows,
                                                     const iron_wmma<float, 2, R, C>& f,
                                                     float* scratch) {
  const int g = static_cast<int>((iron_linear_thread() & 31u) >> 2);
#pragma unroll
  for (int mt = 0; mt < R / 16; ++mt) {
    float v[2] = {0.0f, 0.0f};
#pragma unroll
    for (int nt = 0; nt < C / 16; ++nt) {
      nvcuda::wmma::store_matrix_sync(scratch, f.t[mt * (C / 16) + nt], 16u,
                                      nvcuda::wmma::mem_row_major);
      __syncwarp();
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const float* row = scratch + (g + 8 * h) * 16;
#pragma unroll
        for (int c = 0; c < 16; ++c) {
          v[h] = nt == 0 && c == 0 ? row[0] : (SUM ? v[h] + row[c] : fmaxf(v[h], row[c]));
        }
      }
      __syncwarp();
    }
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      rows.x[mt * 4 + 2 * h] = v[h];
      rows.x[mt * 4 + 2 * h + 1] = v[h];
    }
  }
}

// A source that keeps the lane map (fewer than 16 columns) reduces in registers.
template <bool SUM, int R, int C>
__device__ __forceinline__ void iron_wmma_row_reduce(iron_frag<float, 2, R, 8>& rows,
                                                     const iron_frag<float, 2, R, C>& f, float*) {
  iron_frag_row_reduce<SUM>(rows, f);
}
)"},
      {"iron_wmma_row_value",
       {"iron_wmma"},
       R"(// Row `row` of rows (an R×8 accumulator in the lane map of mma.m16n8k16: lanes 4g … 4g + 3
// hold its row g + 8·h of row tile m in slot 4m + 2h), read by one shuffle per 8 rows, so
// every lane of the warp takes part.
template <int R>
__device__ __forceinline__ float iron_wmma_row_value(const iron_frag<float, 2, R, 8>& rows,
                                                     unsigned int row) {
  const int owner = static_cast<int>((row & 7u) * 4u + (iron_linear_thread() & 3u));
  float v = 0.0f;
#pragma unroll
  for (int j = 0; j < R / 8; ++j) {
    const float y = __shfl_sync(0xffffffffu, rows.x[(j >> 1) * 4 + (j & 1) * 2], owner);
    if (static_cast<int>(row >> 3) == j) v = y;
  }
  return v;
}
)"},
      {"iron_wmma_convert",
       {"iron_wmma"},
       R"(// a = f rounded to nearest T, tile by tile through the warp's scratch: f's tile stored as
// f32, rounded to T in place, loaded as an A tile.
template <class T, int R, int C>
__device__ __forceinline__ void iron_wmma_convert(iron_wmma<T, 0, R, C>& a,
                                                  const iron_wmma<float, 2, R, C>& f,
                                                  float* scratch) {
  const int lane = static_cast<int>(iron_linear_thread() & 31u);
  T* s = reinterpret_cast<T*>(scratch);
#pragma unroll
  for (int i = 0; i < a.kTiles; ++i) {
    nvcuda::wmma::store_matrix_sync(scratch, f.t[i], 16u, nvcuda::wmma::mem_row_major);
    __syncwarp();
    float v[8];
#pragma unroll
    for (int j = 0; j < 8; ++j) v[j] = scratch[lane + 32 * j];
    __syncwarp();
#pragma unroll
    for (int j = 0; j < 8; ++j) s[lane + 32 * j] = T(v[j]);
    __syncwarp();
    nvcuda::wmma::load_matrix_sync(a.t[i], s, 16u);
    __syncwarp();
  }
}
)"},
  };
  return all;
}

}  // namespace iron::codegen::cuda
