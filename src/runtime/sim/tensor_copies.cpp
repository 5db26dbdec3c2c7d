/// TMA copies and mbarriers (docs/tensor-cores.md, "The simulator and mbarriers"): an mbarrier
/// counts the arrivals and transaction bytes of its current phase and completes it when none is
/// missing; mbar.wait passes once the phase of its parity has completed. A copy.tensor lands its
/// whole box at once (zeros outside the matrix), as early as the GPU may land it, and tags each
/// element with the phase it completes: a thread that touches the element before waiting for that
/// phase is reported, and so is a copy over operands a warpgroup product still reads, a wait that
/// can never pass (a hang), more arrivals a phase than the barrier counts, a wait whose barrier
/// ran two phases past it (parity cannot tell them
/// apart), an op on a barrier that is not initialized, and a copy nobody waited for when the group
/// ends.
#include <fmt/format.h>

#include <algorithm>

#include "interpreter.hpp"

namespace iron::runtime::sim {

std::string GroupRunner::barrier_name(std::uint32_t b) const {
  int alloc = -1;
  for (std::size_t a = 0; a < barrier_base_.size(); ++a) {
    const int base = barrier_base_[a];
    if (base >= 0 && static_cast<std::uint32_t>(base) <= b &&
        (alloc < 0 || base > barrier_base_[alloc])) {
      alloc = static_cast<int>(a);
    }
  }
  return fmt::format("mbarrier {} of '{}'", b - static_cast<std::uint32_t>(barrier_base_[alloc]),
                     program_.kernel->shared[alloc].name);
}

std::uint32_t GroupRunner::barrier_id(const Instr& in, int alloc, std::uint32_t row,
                                      std::uint32_t thread) {
  if (wraps(row)[thread] != 0) report_index_wrap(in, thread, row);
  const std::int64_t index = int_value(this->row(row)[thread], DType::U32);
  const std::uint32_t size = shared_.size(alloc);
  if (index < 0 || 2 * index + 1 >= size) {
    throw report_.out_of_bounds(in, thread, program_.kernel->shared[alloc].name, 2 * index, size);
  }
  return static_cast<std::uint32_t>(barrier_base_[alloc] + index);
}

void GroupRunner::arrive(const Instr& in, std::uint32_t thread, std::uint32_t b,
                         std::int64_t bytes) {
  Mbarrier& bar = mbarriers_[b];
  if (bar.arrivals == 0) {
    throw report_.mbarrier_misuse(
        in, thread, barrier_name(b),
        fmt::format("it arrives when its phase misses no arrival, only {} bytes of TMA copies "
                    "(more arrivals a phase than its mbar.init counts, {})",
                    bar.bytes, bar.count));
  }
  bar.bytes += bytes;
  --bar.arrivals;
  complete_if_done(b);
}

void GroupRunner::complete_if_done(std::uint32_t b) {
  Mbarrier& bar = mbarriers_[b];
  if (bar.arrivals != 0 || bar.bytes != 0) return;
  ++bar.phases;
  bar.arrivals = bar.count;
  woke_ = true;
}

void GroupRunner::mbarrier(const Instr& in, Active active) {
  auto live = [&](std::uint32_t b, std::uint32_t t) -> Mbarrier& {
    Mbarrier& bar = mbarriers_[b];
    if (!bar.live) {
      throw report_.mbarrier_misuse(in, t, barrier_name(b),
                                    "it is not initialized (mbar.init, then a barrier before "
                                    "other threads use it), or it was invalidated");
    }
    return bar;
  };
  switch (in.kind) {
    case ir::OpKind::MbarInit:
      for (std::uint32_t t : active) {
        const std::uint32_t b = barrier_id(in, in.buffer, in.args[0], t);
        if (mbarriers_[b].live) {
          throw report_.mbarrier_misuse(in, t, barrier_name(b),
                                        "it is initialized already (mbar.inval it first)");
        }
        Mbarrier& bar = mbarriers_[b];
        bar = Mbarrier{};
        bar.live = true;
        for (std::uint32_t u = 0; u < threads_; ++u)
          observed_[std::size_t{u} * mbarriers_.size() + b] = 0;
        bar.count = bar.arrivals = static_cast<std::uint32_t>(in.imm);
      }
      return;
    case ir::OpKind::MbarExpect:
      for (std::uint32_t t : active) {
        const std::uint32_t b = barrier_id(in, in.buffer, in.args[0], t);
        live(b, t);
        arrive(in, t, b, static_cast<std::int64_t>(in.imm));
      }
      return;
    case ir::OpKind::MbarArrive:  // one arrival a simdgroup, by its first lane after all lanes
      each_simdgroup(in, active, [&](std::uint32_t first, std::uint32_t) {
        const std::uint32_t b = barrier_id(in, in.buffer, in.args[0], first);
        live(b, first);
        arrive(in, first, b, 0);
      });
      return;
    case ir::OpKind::MbarInval:
      for (std::uint32_t t : active) {
        const std::uint32_t b = barrier_id(in, in.buffer, in.args[0], t);
        const Mbarrier& bar = live(b, t);
        if (bar.bytes != 0) {
          throw report_.mbarrier_misuse(
              in, t, barrier_name(b),
              fmt::format("its phase still waits for {} bytes of TMA copies", bar.bytes));
        }
        mbarriers_[b].live = false;
      }
      return;
    case ir::OpKind::MbarWait:
      for (std::uint32_t t : active) live(barrier_id(in, in.buffer, in.args[0], t), t);
      if (!wait_passes(in, active)) wait_for_phase(in, active);
      for (std::uint32_t t : active) {
        // The latest completed phase of the parity waited for; with none (the phase before the
        // first counts as done) the thread learns nothing.
        const std::uint32_t b = barrier_id(in, in.buffer, in.args[0], t);
        Mbarrier& bar = mbarriers_[b];
        const std::uint32_t parity = row(in.args[1])[t] & 1u;
        const std::uint32_t seen = (bar.phases - 1) % 2 == parity ? bar.phases : bar.phases - 1;
        std::uint32_t& known = observed_[std::size_t{t} * mbarriers_.size() + b];
        if (bar.phases == 0) continue;
        // A phase of the same parity completed since the thread's last wait: a wait by parity
        // cannot tell the two apart (on the GPU it passes early, or hangs).
        if (seen >= known + 3) {
          throw report_.mbarrier_misuse(
              in, t, barrier_name(b),
              fmt::format("the thread waits for the phase of parity {}, but phases {} and {} "
                          "of that parity completed since its last wait (the barrier ran ahead "
                          "of its waiter: a wait by parity cannot tell them apart)",
                          parity, seen - 3, seen - 1));
        }
        if (seen > known) known = seen;
        if (known > bar.observed) bar.observed = known;
      }
      return;
    default:
      return;
  }
}

bool GroupRunner::wait_passes(const Instr& in, Active active) {
  return std::all_of(active.begin(), active.end(), [&](std::uint32_t t) {
    const Mbarrier& bar = mbarriers_[barrier_id(in, in.buffer, in.args[0], t)];
    return (bar.phases & 1u) != (row(in.args[1])[t] & 1u);
  });
}

void GroupRunner::copy_tensor(const Instr& in, Active active) {
  const ir::Kernel& kernel = *program_.kernel;
  const ir::TensorMap& map = kernel.tensor_maps[in.inner];
  const MapExtent& extent = bindings_.maps[in.inner];
  const TensorView& view = bindings_.tensors[map.param];
  const std::string& tensor = kernel.params[map.param].name;
  const std::string& alloc = kernel.shared[in.buffer].name;
  const std::uint32_t size = shared_.size(in.buffer);
  const std::uint32_t box = map.box_rows * map.box_cols;
  std::vector<CopyTag>& tags = copy_tags_[in.buffer];
  for (std::uint32_t t : active) {
    if (!extent.encodable) throw report_.tensor_map_unusable(in, t, tensor, extent.why);
    if (wraps(in.args[0])[t] != 0) report_index_wrap(in, t, in.args[0]);
    const std::int64_t to = int_value(row(in.args[0])[t], in.arg_types[0]);
    if (to < 0 || to + box > size) throw report_.out_of_bounds(in, t, alloc, to, size);
    const std::uint32_t b = barrier_id(in, in.source, in.args[3], t);
    Mbarrier& bar = mbarriers_[b];
    if (!bar.live) {
      throw report_.mbarrier_misuse(in, t, barrier_name(b),
                                    "the copy completes an mbarrier that is not initialized");
    }
    const std::int64_t row0 = int_value(row(in.args[1])[t], in.arg_types[1]);
    const std::int64_t col0 = int_value(row(in.args[2])[t], in.arg_types[2]);
    // An image map's box: rows of box_width pixels from (row0, x0) of image `image`; a matrix
    // map's: rows row0 … of the one image one pixel wide.
    const bool image = map.box_width != 0;
    const std::uint32_t box_width = image ? map.box_width : 1;
    const std::int64_t which = image ? int_value(row(in.args[4])[t], in.arg_types[4]) : 0;
    const std::int64_t x0 = image ? int_value(row(in.args[5])[t], in.arg_types[5]) : 0;
    const CopyTag tag{b + 1, bar.phases + 1};
    Slot* data = shared_.data(in.buffer);
    with_type(in.type, [&](auto d) {
      constexpr DType D = decltype(d)::value;
      for (std::uint32_t r = 0; r < map.box_rows; ++r) {
        for (std::uint32_t c = 0; c < map.box_cols; ++c) {
          const auto i = static_cast<std::uint32_t>(to) + r * map.box_cols + c;
          if (shared_.pending(in.buffer, i)) {
            throw report_.pending_copy(in, t, Access::Write, alloc, i, size);
          }
          if (shared_.product_reads(in.buffer, i) != 0) {
            throw report_.operand_overwritten(in, t, Access::Write, alloc, i, size);
          }
          const std::int64_t y = row0 + r / box_width;
          const std::int64_t x = x0 + r % box_width;
          const bool inside = y >= 0 && y < extent.height && x >= 0 && x < extent.image_width &&
                              which < extent.images && col0 + c < extent.width;
          Slot value = 0;  // the bits of +0 in every type
          if (inside) {
            const std::int64_t pixel = (which * extent.height + y) * extent.image_width + x;
            const auto from =
                static_cast<std::uint64_t>(extent.base + pixel * extent.width + col0 + c);
            value = decode<D>(view.data + from * sizeof_dtype<D>);
          }
          data[i] = value;
          shared_.mark_written(in.buffer, i);
          // Written through the asynchronous proxy: wg.mma reads it with no fence.
          if (program_.warpgroup_products) shared_.mark_last_write(in.buffer, i, kNoThread, 0, 0);
          tags[i] = tag;
        }
      }
    });
    bar.copied = tag.phase;
    bar.copy_instr = instr_index(in);
    bar.bytes -= static_cast<std::int64_t>(box * dtype_size(in.type));
    complete_if_done(b);
  }
}

void GroupRunner::check_copy_observed(const Instr& in, std::uint32_t thread, int alloc,
                                      std::uint32_t index, Access access) {
  CopyTag& tag = copy_tags_[alloc][index];
  if (tag.barrier == 0) return;
  const std::uint32_t b = tag.barrier - 1;
  if (observed_[std::size_t{thread} * mbarriers_.size() + b] < tag.phase) {
    throw report_.copy_not_waited(in, thread, access, program_.kernel->shared[alloc].name, index,
                                  barrier_name(b), tag.phase - 1);
  }
  if (access != Access::Read) tag = CopyTag{};  // a thread's write from now on
}

void GroupRunner::check_tensor_copies_waited() {
  for (std::uint32_t b = 0; b < mbarriers_.size(); ++b) {
    const Mbarrier& bar = mbarriers_[b];
    if (bar.copied > bar.observed) {
      throw report_.tensor_copy_not_waited(program_.code[bar.copy_instr], barrier_name(b),
                                           bar.copied - 1);
    }
  }
}

}  // namespace iron::runtime::sim
