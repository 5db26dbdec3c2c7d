/// Warpgroup products (docs/tensor-cores.md, "Warpgroup products"): wg.mma computes each
/// simdgroup's share exactly, as frag.mma does, when it starts, and keeps its operands read and its
/// accumulator pending until the wg.wait that finishes its group; the shared writes it reads must
/// have been fenced for the asynchronous proxy by their writers. Each breach is a finding. The
/// group runs in lock-step, so a product's reads are recorded again at its wait: another
/// simdgroup's write before the next barrier then races with them, as it may on the hardware.
#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>

#include "interpreter.hpp"

namespace iron::runtime::sim {
namespace {

constexpr std::uint32_t kWarpgroup = 128;
constexpr std::uint32_t kRowsPerSimdgroup = 16;

/// The bytes of a swizzled row that the Hopper instruction's 128-byte swizzle reads.
constexpr std::int64_t kSwizzleRowBytes = 128;
/// The 128-byte swizzle repeats every 8 rows: where a row-major B's panels start.
constexpr std::int64_t kSwizzleAtomBytes = 8 * kSwizzleRowBytes;

/// The first row of the fragment `in` writes, if it writes one.
std::optional<std::uint32_t> written_fragment(const Instr& in) {
  if (in.exec == Exec::FragLoad) return in.args[1];
  const bool writes_first = in.exec == Exec::FragSet || in.exec == Exec::FragMma ||
                            in.exec == Exec::FragReduce || in.exec == Exec::FragConvert;
  if (writes_first) return in.args[0];
  return std::nullopt;
}

}  // namespace

void GroupRunner::wg_mma(const Instr& in, Active active) {
  std::size_t next = 0;
  while (next < active.size()) {
    const std::uint32_t first = active[next] / kWarpgroup * kWarpgroup;
    if (threads_ % kWarpgroup != 0) throw report_.warpgroup_incomplete(in, threads_ - 1);
    for (std::uint32_t i = 0; i < kWarpgroup; ++i) {
      if (next + i >= active.size() || active[next + i] != first + i) {
        throw report_.warpgroup_incomplete(in, first + i);
      }
    }
    next += kWarpgroup;
    const bool registers = in.buffer < 0;
    const WgOperand operands[2] = {registers ? WgOperand{} : wg_operand(in, first, 0),
                                   wg_operand(in, first, 1)};
    for (std::uint32_t s = 0; s < kWarpgroup / 32; ++s) wg_product(in, first + s * 32, operands);
  }
}

GroupRunner::WgOperand GroupRunner::wg_operand(const Instr& in, std::uint32_t first, int which) {
  const ir::Kernel& kernel = *program_.kernel;
  // The register form's B sits where the shared form's A does, one operand earlier.
  const int at = 1 + 2 * which - (in.buffer < 0 ? 1 : 0);
  const std::uint32_t off_row = in.args[at];
  const std::uint32_t stride_row = in.args[at + 1];
  const DType off_type = in.arg_types[at];
  const DType stride_type = in.arg_types[at + 1];
  WgOperand op{which == 0 ? in.buffer : in.source, int_value(row(off_row)[first], off_type),
               int_value(row(stride_row)[first], stride_type)};
  const ir::SharedAlloc& alloc = kernel.shared[op.alloc];
  // A row-major B's panel stride follows its stride.
  const bool panels = which == 1 && in.layout == ir::MatrixLayout::RowMajor;
  const std::uint32_t panel_row = panels ? in.args[at + 2] : 0;
  const DType panel_type = panels ? in.arg_types[at + 2] : DType::U32;
  if (panels) op.panel = int_value(row(panel_row)[first], panel_type);
  for (std::uint32_t t = first; t < first + kWarpgroup; ++t) {
    if (wraps(off_row)[t] != 0) report_index_wrap(in, t, off_row);
    if (wraps(stride_row)[t] != 0) report_index_wrap(in, t, stride_row);
    if (panels && wraps(panel_row)[t] != 0) report_index_wrap(in, t, panel_row);
    if (int_value(row(off_row)[t], off_type) != op.offset ||
        int_value(row(stride_row)[t], stride_type) != op.stride ||
        (panels && int_value(row(panel_row)[t], panel_type) != op.panel)) {
      throw report_.warpgroup_operand(in, first, alloc.name, op.offset, op.stride,
                                      "the threads of the warpgroup disagree on it or its panels");
    }
  }
  if (op.offset < 0 || op.stride < 0 || op.offset % 8 != 0 || op.stride % 8 != 0) {
    throw report_.warpgroup_operand(in, first, alloc.name, op.offset, op.stride,
                                    "both are multiples of 8 elements (16-byte rows)");
  }
  // Panels past the first: a whole number of them, from a row's start, 8-element multiples apart.
  const bool several_panels = panels && in.fragment.cols > op.stride;
  if (several_panels &&
      (op.stride == 0 || op.offset % op.stride != 0 || op.panel < 0 || op.panel % 8 != 0)) {
    throw report_.warpgroup_operand(
        in, first, alloc.name, op.offset, op.stride,
        fmt::format("a row-major B of {} columns is read in panels of its stride: the offset at a "
                    "row's start and the panel stride ({}) a multiple of 8 elements",
                    in.fragment.cols, op.panel));
  }
  // Operands in swizzled 16-bit or 8-bit rows must be placed as the Hopper instruction reads
  // them: rows of A and of a column-major B run along k (K columns within a row, from a multiple
  // of one instruction's 32 bytes), rows of a row-major B along n (N columns within a row).
  const bool along_k = which == 0 || in.layout == ir::MatrixLayout::ColMajor;
  const auto element_bytes = static_cast<std::int64_t>(dtype_size(alloc.dtype));
  if (alloc.swizzle != 0 && element_bytes <= 2) {
    const auto row_bytes = static_cast<std::int64_t>(alloc.swizzle) * element_bytes;
    const std::int64_t column = op.offset % op.stride;
    const std::int64_t width =
        along_k ? in.inner : std::min<std::int64_t>(in.fragment.cols, op.stride);
    if (row_bytes != kSwizzleRowBytes || op.stride != alloc.swizzle ||
        column * element_bytes % (along_k ? 32 : kSwizzleRowBytes) != 0 ||
        op.offset / op.stride % 8 != 0 || column + width > op.stride ||
        (several_panels && op.panel * element_bytes % kSwizzleAtomBytes != 0)) {
      throw report_.warpgroup_operand(
          in, first, alloc.name, op.offset, op.stride,
          along_k ? "an operand in swizzled rows is read as the Hopper instruction reads it: "
                    "rows of 128 bytes, the stride one row, the offset at a multiple of 8 rows "
                    "and of 32 bytes, and K columns within the row"
                  : "a row-major B in swizzled rows is read as the Hopper instruction reads it: "
                    "rows of 128 bytes, the stride one row, the offset at a multiple of 8 rows "
                    "and the row's start, and N columns within the row or in panels of one row "
                    "a multiple of 1024 bytes apart");
    }
  }
  return op;
}

void GroupRunner::wg_product(const Instr& in, std::uint32_t lead, const WgOperand (&ops)[2]) {
  const std::uint32_t n = in.fragment.cols;
  const std::uint32_t k = in.inner;
  const bool b_rows = in.layout == ir::MatrixLayout::RowMajor;  // B as [k, n]
  const std::int64_t a_first =
      ops[0].offset + std::int64_t{lead % kWarpgroup / 32} * kRowsPerSimdgroup * ops[0].stride;
  const bool registers = in.buffer < 0;
  PendingProduct product{instr_index(in), in.args[0], lead, {}, std::nullopt};
  if (registers) product.a_fragment = in.args[1];
  auto read = [&](const WgOperand& op, std::int64_t index) {
    const std::uint32_t size = shared_.size(op.alloc);
    if (index < 0 || index >= size) {
      throw report_.out_of_bounds(in, lead, program_.kernel->shared[op.alloc].name, index, size);
    }
    const auto i = static_cast<std::uint32_t>(index);
    record_shared(in, op.alloc, lead, i, Access::Read);
    check_proxy_fenced(in, lead, op.alloc, i);
    shared_.add_product_reads(op.alloc, i, 1);
    product.reads.emplace_back(op.alloc, i);
    return as_float(shared_.data(op.alloc)[i]);
  };
  // Where (k, n) of a row-major B lies: in panels of its stride's columns, its panel stride apart.
  const auto b_row_major_index = [](const WgOperand& op, std::uint32_t kk, std::uint32_t c) {
    const std::int64_t panel = op.stride == 0 ? 0 : c / op.stride;
    const std::int64_t column = op.stride == 0 ? c : c % op.stride;
    return op.offset + panel * op.panel + std::int64_t{kk} * op.stride + column;
  };
  std::vector<float> a(std::size_t{kRowsPerSimdgroup} * k);
  std::vector<float> b(std::size_t{k} * n);
  const ir::FragmentShape a_shape{ir::FragmentRole::A, kRowsPerSimdgroup, k};
  for (std::uint32_t r = 0; r < kRowsPerSimdgroup; ++r) {
    for (std::uint32_t kk = 0; kk < k; ++kk) {
      a[std::size_t{r} * k + kk] =
          registers ? as_float(fragment_at(a_shape, in.args[1], lead, r, kk))
                    : read(ops[0], a_first + std::int64_t{r} * ops[0].stride + kk);
    }
  }
  for (std::uint32_t kk = 0; kk < k; ++kk) {
    for (std::uint32_t c = 0; c < n; ++c) {
      b[std::size_t{kk} * n + c] =
          read(ops[1], b_rows ? b_row_major_index(ops[1], kk, c)
                              : ops[1].offset + std::int64_t{c} * ops[1].stride + kk);
    }
  }
  // Exact: each product of 16- or 8-bit values is exact in f32; the fma's add in increasing k
  // rounds.
  for (std::uint32_t r = 0; r < kRowsPerSimdgroup; ++r) {
    for (std::uint32_t c = 0; c < n; ++c) {
      Slot& d = fragment_at(in.fragment, in.args[0], lead, r, c);
      float sum = as_float(d);
      for (std::uint32_t kk = 0; kk < k; ++kk) {
        sum = std::fma(a[std::size_t{r} * k + kk], b[std::size_t{kk} * n + c], sum);
      }
      d = std::bit_cast<Slot>(sum);
    }
  }
  open_products_[lead / 32].push_back(std::move(product));
  ++pending_products_;
}

void GroupRunner::wg_commit(Active active) {
  for (std::size_t i = 0; i < active.size(); i += 32) {
    const std::uint32_t s = active[i] / 32;
    committed_products_[s].push_back(std::move(open_products_[s]));
    open_products_[s].clear();
  }
}

void GroupRunner::wg_wait(const Instr& in, Active active) {
  each_simdgroup(in, active, [&](std::uint32_t first, std::uint32_t) {
    auto& groups = committed_products_[first / 32];
    while (groups.size() > in.inner) {
      finish_products(groups.front());
      groups.pop_front();
    }
  });
}

void GroupRunner::finish_products(const std::vector<PendingProduct>& group) {
  for (const PendingProduct& product : group) {
    const Instr& mma = program_.code[product.instr];
    for (const auto& [alloc, index] : product.reads) {
      shared_.add_product_reads(alloc, index, -1);
      record_shared(mma, alloc, product.lead, index, Access::Read);
    }
    --pending_products_;
  }
}

void GroupRunner::check_products_done(const Instr& in, Active active) {
  if (pending_products_ == 0 || in.exec == Exec::FragCoord) return;
  const std::uint32_t rows[] = {in.result, in.args[0], in.args[1], in.args[2]};
  const std::optional<std::uint32_t> written = written_fragment(in);
  for (std::size_t i = 0; i < active.size(); i += 32) {
    const std::uint32_t s = active[i] / 32;
    auto check = [&](const std::vector<PendingProduct>& group) {
      for (const PendingProduct& p : group) {
        if (std::find(std::begin(rows), std::end(rows), p.acc) != std::end(rows)) {
          throw report_.product_pending(in, active[i], program_.code[p.instr]);
        }
        if (p.a_fragment && written == p.a_fragment) {
          throw report_.operand_fragment_written(in, active[i], program_.code[p.instr]);
        }
      }
    };
    check(open_products_[s]);
    for (const auto& group : committed_products_[s]) check(group);
  }
}

void GroupRunner::check_products_waited() {
  if (pending_products_ == 0) return;
  for (std::uint32_t s = 0; s < open_products_.size(); ++s) {
    std::size_t products = open_products_[s].size();
    const PendingProduct* oldest = nullptr;
    for (const auto& group : committed_products_[s]) {
      products += group.size();
      if (oldest == nullptr && !group.empty()) oldest = &group.front();
    }
    if (oldest == nullptr && !open_products_[s].empty()) oldest = &open_products_[s].front();
    if (oldest != nullptr) {
      throw report_.products_not_waited(program_.code[oldest->instr], s * 32, products);
    }
  }
}

void GroupRunner::check_proxy_fenced(const Instr& in, std::uint32_t reader, int alloc,
                                     std::uint32_t index) {
  const SharedMemory::LastWrite w = shared_.last_write(alloc, index);
  if (w.thread != kNoThread && proxy_fences_[w.thread] == w.fences) {
    throw report_.unfenced_operand(in, reader, w.thread, program_.code[w.instr],
                                   program_.kernel->shared[alloc].name, index);
  }
}

}  // namespace iron::runtime::sim
