/// Fragment ops, run a simdgroup at a time on the lane map of iron/core/fragment.hpp: loads and
/// stores check every element like scalar accesses do, and frag.mma is exact by the numerics
/// contract of docs/tensor-cores.md (each product exact in f32, summed by fma in increasing k);
/// row reductions and conversions work on the logical elements, whichever lane holds them.
#include <bit>
#include <cmath>
#include <vector>

#include "interpreter.hpp"
#include "iron/core/op_views.hpp"

namespace iron::runtime::sim {

void GroupRunner::frag_decl(const Instr& in, Active active) {
  const Slot* init = row(in.args[0]);
  for (std::uint32_t e = 0; e < in.elements; ++e) {
    Slot* element = row(in.result + e);
    for (std::uint32_t t : active) element[t] = init[t];
  }
}

std::uint32_t GroupRunner::fragment_index(const Instr& in, std::uint32_t thread,
                                          std::int64_t offset, std::int64_t stride,
                                          const ir::FragmentCoord& at, std::uint64_t count) {
  const bool col = in.layout == ir::MatrixLayout::ColMajor;
  const std::int64_t r = at.row;
  const std::int64_t c = at.col;
  const std::int64_t i = col ? offset + c * stride + r : offset + r * stride + c;
  if (i < 0 || static_cast<std::uint64_t>(i) >= count) {
    throw report_.out_of_bounds(in, thread, buffer_name(in), i, count);
  }
  return static_cast<std::uint32_t>(i);
}

void GroupRunner::frag_access(const Instr& in, Active active) {
  const bool store = in.exec == Exec::FragStore;
  const Slot* offsets = row(in.args[0]);
  const Slot* strides = row(in.args[2]);
  const ir::FragAccessOp window(*in.op);
  const bool by_rows_of_8 = in.on_shared && !store && dtype_size(in.type) == 2 &&
                            in.fragment.role != ir::FragmentRole::Acc;
  each_simdgroup(in, active, [&](std::uint32_t first, std::uint32_t lanes) {
    const std::int64_t offset = int_value(offsets[first], in.arg_types[0]);
    const std::int64_t stride = int_value(strides[first], in.arg_types[2]);
    for (std::uint32_t t = first; t < first + lanes; ++t) {
      check_index_wrap(in, t);
      if (wraps(in.args[2])[t] != 0) report_index_wrap(in, t, in.args[2]);
      const std::int64_t o = int_value(offsets[t], in.arg_types[0]);
      const std::int64_t s = int_value(strides[t], in.arg_types[2]);
      if (o != offset || s != stride) throw report_.fragment_not_uniform(in, first, t, o, s);
    }
    if (by_rows_of_8 && (offset % 8 != 0 || stride % 8 != 0)) {
      throw report_.fragment_misaligned(in, first, buffer_name(in), offset, stride);
    }
    const std::uint64_t count =
        in.on_shared ? shared_.size(in.buffer) : bindings_.tensors[in.buffer].count;
    for (std::uint32_t lane = 0; lane < lanes; ++lane) {
      const std::uint32_t t = first + lane;
      for (std::uint32_t e = 0; e < in.elements; ++e) {
        ir::FragmentCoord at = ir::fragment_coord(options_.lane_map, in.fragment, lane, e);
        if (window.windowed()) {  // a frag.store of columns window_first() … only
          if (at.col < window.window_first() ||
              at.col >= window.window_first() + window.window_cols()) {
            continue;
          }
          at.col -= window.window_first();
        }
        const std::uint32_t i = fragment_index(in, t, offset, stride, at, count);
        Slot& element = row(in.args[1] + e)[t];
        if (in.on_shared) {
          record_shared(in, t, i, store ? Access::Write : Access::Read);
          Slot* data = shared_.data(in.buffer);
          if (store) {
            data[i] = element;
          } else {
            element = data[i];
          }
          continue;
        }
        if (store || in.on_output) record_tensor(in, t, i, store ? Access::Write : Access::Read);
        const TensorView& view = bindings_.tensors[in.buffer];
        with_type(in.type, [&](auto d) {
          constexpr DType D = decltype(d)::value;
          std::byte* p = view.data + std::size_t{i} * sizeof_dtype<D>;
          if (store) {
            encode<D>(element, p);
          } else {
            element = decode<D>(p);
          }
        });
      }
    }
  });
}

void GroupRunner::frag_mma(const Instr& in, Active active) {
  const ir::FragmentShape& ds = in.fragment;
  const std::uint32_t m = ds.rows;
  const std::uint32_t n = ds.cols;
  const std::uint32_t k = in.inner;
  const ir::FragmentShape as{ir::FragmentRole::A, m, k};
  const ir::FragmentShape bs{ir::FragmentRole::B, k, n};
  std::vector<float> a(std::size_t{m} * k);
  std::vector<float> b(std::size_t{k} * n);
  std::vector<float> d(std::size_t{m} * n);
  // Gathers (or scatters, when `out`) the logical matrix of a fragment from its lanes' rows.
  auto visit = [&](const ir::FragmentShape& s, std::uint32_t first_row, std::uint32_t first,
                   std::vector<float>& matrix, bool out) {
    for (std::uint32_t lane = 0; lane < 32; ++lane) {
      for (std::uint32_t e = 0; e < s.elements_per_lane(); ++e) {
        const ir::FragmentCoord at = ir::fragment_coord(options_.lane_map, s, lane, e);
        Slot& slot = row(first_row + e)[first + lane];
        float& value = matrix[std::size_t{at.row} * s.cols + at.col];
        if (out) {
          slot = std::bit_cast<Slot>(value);
        } else {
          value = as_float(slot);
        }
      }
    }
  };
  each_simdgroup(in, active, [&](std::uint32_t first, std::uint32_t) {
    visit(as, in.args[1], first, a, false);
    visit(bs, in.args[2], first, b, false);
    visit(ds, in.args[0], first, d, false);
    for (std::uint32_t r = 0; r < m; ++r) {
      for (std::uint32_t c = 0; c < n; ++c) {
        float sum = d[std::size_t{r} * n + c];
        for (std::uint32_t i = 0; i < k; ++i) {
          sum = std::fma(a[std::size_t{r} * k + i], b[std::size_t{i} * n + c], sum);
        }
        d[std::size_t{r} * n + c] = sum;
      }
    }
    visit(ds, in.args[0], first, d, true);
  });
}

void GroupRunner::frag_element(const Instr& in, Active active) {
  Slot* element = row(in.args[0] + in.inner);
  if (in.exec == Exec::FragSet) {
    const Slot* value = row(in.args[1]);
    for (std::uint32_t t : active) element[t] = value[t];
    return;
  }
  Slot* result = row(in.result);
  if (in.exec == Exec::FragGet) {
    for (std::uint32_t t : active) result[t] = element[t];
    return;
  }
  for (std::uint32_t t : active) {
    const ir::FragmentCoord at =
        ir::fragment_coord(options_.lane_map, in.fragment, t % 32, in.inner);
    result[t] = in.axis == 1 ? at.col : at.row;
  }
}

void GroupRunner::frag_row_value(const Instr& in, Active active) {
  const ir::FragmentShape rows{ir::FragmentRole::Acc, in.fragment.rows, 8};
  Slot* result = row(in.result);
  for (std::uint32_t t : active) {
    const std::uint32_t first = t / 32 * 32;
    const std::uint32_t r =
        ir::fragment_coord(options_.lane_map, in.fragment, t % 32, in.inner).row;
    const Slot value = fragment_at(rows, in.args[1], first, r, 0);
    for (std::uint32_t c = 1; c < rows.cols; ++c) {
      const Slot other = fragment_at(rows, in.args[1], first, r, c);
      if (other != value) throw report_.row_vector_differs(in, t, r, c, value, other);
    }
    result[t] = value;
  }
}

void GroupRunner::frag_row_reduce(const Instr& in, Active active) {
  const ir::FragmentShape& f = in.fragment;
  const ir::FragmentShape rows{ir::FragmentRole::Acc, f.rows, 8};
  const bool sum = static_cast<ir::RowReduction>(in.inner) == ir::RowReduction::Sum;
  each_simdgroup(in, active, [&](std::uint32_t first, std::uint32_t) {
    for (std::uint32_t r = 0; r < f.rows; ++r) {
      float v = as_float(fragment_at(f, in.args[1], first, r, 0));
      for (std::uint32_t c = 1; c < f.cols; ++c) {
        const float x = as_float(fragment_at(f, in.args[1], first, r, c));
        v = sum ? v + x : std::fmax(v, x);
      }
      for (std::uint32_t c = 0; c < rows.cols; ++c) {
        fragment_at(rows, in.args[0], first, r, c) = std::bit_cast<Slot>(v);
      }
    }
  });
}

void GroupRunner::frag_convert(const Instr& in, Active active) {
  const ir::FragmentShape& f = in.fragment;
  const ir::FragmentShape a{ir::FragmentRole::A, f.rows, f.cols};
  each_simdgroup(in, active, [&](std::uint32_t first, std::uint32_t) {
    for (std::uint32_t r = 0; r < f.rows; ++r) {
      for (std::uint32_t c = 0; c < f.cols; ++c) {
        const float x = as_float(fragment_at(f, in.args[1], first, r, c));
        fragment_at(a, in.args[0], first, r, c) = ir::round_bits(in.type, x);
      }
    }
  });
}

}  // namespace iron::runtime::sim
