/// MSL lowering of fragments (docs/tensor-cores.md): a fragment is a grid of
/// `simdgroup_matrix<T, 8, 8>` tiles; loads, stores and the product are Metal's simdgroup
/// matrix functions, which own the lane map (Metal does not document it, and no fragment op
/// exposes it).
#include "msl_fragments.hpp"

#include <fmt/format.h>

#include "iron/core/error.hpp"
#include "msl_dialect.hpp"

namespace iron::codegen::msl {

const std::vector<c_like::Helper>& fragment_helpers() {
  static const std::vector<c_like::Helper> all = {
      {"iron_frag",
       {},
       R"(// An R×C fragment as (R/8)×(C/8) simdgroup matrices, shared by the simdgroup's lanes.
template <class T, int R, int C>
struct iron_frag {
  simdgroup_matrix<T, 8, 8> m[R / 8][C / 8];
};
)"},
      {"iron_frag_coord",
       {"iron_frag"},
       R"(// The row (or, when column, the column) of the calling lane's element in `slot` of an R×C
// fragment: slot s is element s % 2 of 8×8 tile s / 2 (tiles in row-major order), and in a tile
// lane l holds row (l / 4 & 4) + (l / 2 % 4), columns (l / 4 & 2) · 2 + (l % 2) · 2 + {0, 1}:
// the map MLX's simdgroup matrix code relies on (Apple does not document one).
template <int C>
uint iron_frag_coord(uint slot, uint lane, bool column) {
  const uint tile = slot / 2, quad = lane / 4;
  if (!column) return tile / (C / 8) * 8 + (quad & 4) + (lane / 2) % 4;
  return tile % (C / 8) * 8 + (quad & 2) * 2 + (lane % 2) * 2 + slot % 2;
}
)"},
      {"iron_frag_fill",
       {"iron_frag"},
       R"(// Every element of f set to v.
template <class T, int R, int C>
void iron_frag_fill(thread iron_frag<T, R, C>& f, T v) {
  for (int i = 0; i < R / 8; ++i) {
    for (int j = 0; j < C / 8; ++j) f.m[i][j] = make_filled_simdgroup_matrix<T, 8, 8>(v);
  }
}
)"},
      {"iron_frag_load",
       {"iron_frag"},
       R"(// Element (r, c) from p[off + r·ld + c] (row-major) or p[off + c·ld + r] (COL).
template <bool COL, class T, int R, int C, class P>
void iron_frag_load(thread iron_frag<T, R, C>& f, P p, long off, long ld) {
  for (int i = 0; i < R / 8; ++i) {
    for (int j = 0; j < C / 8; ++j) {
      const long at = COL ? off + j * 8 * ld + i * 8 : off + i * 8 * ld + j * 8;
      simdgroup_load(f.m[i][j], p + at, ulong(ld), ulong2(0, 0), COL);
    }
  }
}
)"},
      {"iron_frag_store",
       {"iron_frag"},
       R"(// Element (r, c) to p[off + r·ld + c] (row-major) or p[off + c·ld + r] (COL); with WN != 0,
// the tiles of columns W0 … W0 + WN - 1 only, column c at c - W0.
template <bool COL, int W0 = 0, int WN = 0, class T, int R, int C, class P>
void iron_frag_store(thread const iron_frag<T, R, C>& f, P p, long off, long ld) {
  for (int i = 0; i < R / 8; ++i) {
    for (int j = WN != 0 ? W0 / 8 : 0; j < (WN != 0 ? (W0 + WN) / 8 : C / 8); ++j) {
      const long c0 = j * 8 - W0;
      const long at = COL ? off + c0 * ld + i * 8 : off + i * 8 * ld + c0;
      simdgroup_store(f.m[i][j], p + at, ulong(ld), ulong2(0, 0), COL);
    }
  }
}
)"},
      {"iron_frag_mma",
       {"iron_frag"},
       R"(// d += a·b, 8×8×8 products, k outermost.
template <class T, int M, int N, int K>
void iron_frag_mma(thread iron_frag<float, M, N>& d, thread const iron_frag<T, M, K>& a,
                   thread const iron_frag<T, K, N>& b) {
  for (int k = 0; k < K / 8; ++k) {
    for (int i = 0; i < M / 8; ++i) {
      for (int j = 0; j < N / 8; ++j) {
        simdgroup_multiply_accumulate(d.m[i][j], a.m[i][k], b.m[k][j], d.m[i][j]);
      }
    }
  }
}
)"},
      {"iron_frag_row_reduce",
       {"iron_frag"},
       R"(// Row r of rows (an R×8 accumulator) set, in every column, to the max (or, when SUM, the
// sum) of row r of f. In each 8×8 tile lane l holds two elements of one row, and lanes l ^ 1,
// l ^ 8 and l ^ 9 the row's other six: each lane combines its elements of the row in
// increasing column, then the four exchange partial results by two butterfly shuffles.
template <bool SUM, int R, int C>
void iron_frag_row_reduce(thread iron_frag<float, R, 8>& rows, thread iron_frag<float, R, C>& f) {
  for (int i = 0; i < R / 8; ++i) {
    float v = f.m[i][0].thread_elements()[0];
    for (int k = 1; k < C / 4; ++k) {
      const float y = f.m[i][k / 2].thread_elements()[k % 2];
      v = SUM ? v + y : fmax(v, y);
    }
    for (ushort mask = 1; mask <= 8; mask *= 8) {
      const float y = simd_shuffle_xor(v, mask);
      v = SUM ? v + y : fmax(v, y);
    }
    rows.m[i][0].thread_elements()[0] = v;
    rows.m[i][0].thread_elements()[1] = v;
  }
}
)"},
      {"iron_frag_convert",
       {"iron_frag"},
       R"(// a = f rounded to nearest T, element by element: an A fragment and an accumulator of its
// shape are the same grid of 8×8 matrices.
template <class T, int R, int C>
void iron_frag_convert(thread iron_frag<T, R, C>& a, thread iron_frag<float, R, C>& f) {
  for (int i = 0; i < R / 8; ++i) {
    for (int j = 0; j < C / 8; ++j) {
      for (int e = 0; e < 2; ++e) {
        a.m[i][j].thread_elements()[e] = T(f.m[i][j].thread_elements()[e]);
      }
    }
  }
}
)"},
  };
  return all;
}

std::vector<std::string> MslDialect::fragment_declaration(const std::string& name,
                                                          const ir::FragmentShape& shape, DType t,
                                                          const std::string& init,
                                                          c_like::Needs& needs) const {
  needs.helpers.insert("iron_frag_fill");
  return {fmt::format("iron_frag<{}, {}, {}> {};", type(t), shape.rows, shape.cols, name),
          fmt::format("iron_frag_fill({}, {}({}));", name, type(t), init)};
}

std::string MslDialect::fragment_access(const c_like::FragmentAccess& f,
                                        c_like::Needs& needs) const {
  IRON_INTERNAL_ASSERT(f.swizzle_row_shift == 0,
                       "a swizzled tile reached Metal: its profile keeps shared rows in order");
  const std::string helper = f.store ? "iron_frag_store" : "iron_frag_load";
  needs.helpers.insert(helper);
  const std::string window =
      f.window_cols == 0 ? "" : fmt::format(", {}, {}", f.window_first, f.window_cols);
  return fmt::format("{}<{}{}>({}, {}, long({}), long({}));", helper,
                     f.layout == ir::MatrixLayout::ColMajor ? "true" : "false", window, f.fragment,
                     f.base, f.offset, f.stride);
}

std::string MslDialect::fragment_product(const c_like::FragmentProduct& p,
                                         c_like::Needs& needs) const {
  needs.helpers.insert("iron_frag_mma");
  return fmt::format("iron_frag_mma({}, {}, {});", p.d, p.a, p.b);
}

std::vector<std::string> MslDialect::async_copy(const c_like::Access& dst,
                                                const c_like::Access& src, const std::string& valid,
                                                c_like::Needs&) const {
  // Metal has no asynchronous copy a kernel can wait for by groups: copy now (the barrier that
  // must follow the wait makes it visible, as on CUDA).
  return {fmt::format("for (uint e = 0; e < {}u; ++e) {{", src.lanes),
          fmt::format("  {}[{} + e] = {} ? {}[{} + e] : {}(0);", dst.base, dst.index, valid,
                      src.base, src.index, type(src.type)),
          "}"};
}

std::string MslDialect::async_commit(c_like::Needs&) const {
  return "// async.commit: the copies above are done";
}

std::string MslDialect::async_wait(int pending, c_like::Needs&) const {
  return fmt::format("// async.wait {}: the copies above are done", pending);
}

std::string MslDialect::fragment_element(const std::string& name, const ir::FragmentShape& shape,
                                         DType, std::uint32_t slot) const {
  const std::uint32_t tile = slot / 2;
  const std::uint32_t across = shape.cols / 8;
  return fmt::format("{}.m[{}][{}].thread_elements()[{}]", name, tile / across, tile % across,
                     slot % 2);
}

std::string MslDialect::fragment_coord(const std::string&, const ir::FragmentShape& shape,
                                       std::uint32_t slot, bool column,
                                       c_like::Needs& needs) const {
  needs.helpers.insert("iron_frag_coord");
  return fmt::format("iron_frag_coord<{}>({}u, {}, {})", shape.cols, slot,
                     builtin(ir::Builtin::Lane, 0, needs), column ? "true" : "false");
}

std::string MslDialect::fragment_row_value(const std::string& rows, const ir::FragmentShape& shape,
                                           std::uint32_t slot) const {
  // Slot s lies in 8×8 tile s / 2, whose row of tiles the row vector holds in its tile
  // (s / 2 / (C / 8), 0); the lane's row is the same in every tile.
  const std::uint32_t row_tile = slot / 2 / (shape.cols / 8);
  return fragment_element(rows, {ir::FragmentRole::Acc, shape.rows, 8}, DType::F32, row_tile * 2);
}

std::string MslDialect::fragment_row_reduce(const std::string& rows, const std::string& source,
                                            ir::RowReduction reduction,
                                            c_like::Needs& needs) const {
  needs.helpers.insert("iron_frag_row_reduce");
  return fmt::format("iron_frag_row_reduce<{}>({}, {});",
                     reduction == ir::RowReduction::Sum ? "true" : "false", rows, source);
}

std::string MslDialect::fragment_convert(const std::string& a, const std::string& source,
                                         c_like::Needs& needs) const {
  needs.helpers.insert("iron_frag_convert");
  return fmt::format("iron_frag_convert({}, {});", a, source);
}

}  // namespace iron::codegen::msl
