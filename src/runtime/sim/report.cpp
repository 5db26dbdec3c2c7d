/// Formats sanitizer findings.
#include "report.hpp"

#include <fmt/format.h>

namespace iron::runtime::sim {
namespace {

std::string_view access_verb(Access a) {
  switch (a) {
    case Access::Read:
      return "read";
    case Access::Write:
      return "wrote";
    case Access::Atomic:
      return "atomically updated";
  }
  return "";
}

// How a read touches memory: an atomic updates it, anything else reads it.
Access access_of(const Instr& in) {
  return in.exec == Exec::Atomic ? Access::Atomic : Access::Read;
}

}  // namespace

std::string Reporter::thread_text(std::uint32_t t) const {
  const std::uint32_t x = t % group_size_.x;
  const std::uint32_t y = t / group_size_.x % group_size_.y;
  const std::uint32_t z = t / (group_size_.x * group_size_.y);
  return fmt::format("thread {} ({},{},{})", t, x, y, z);
}

std::string Reporter::actor_text(std::uint32_t id) const {
  const std::uint64_t threads = group_size_.volume();
  const std::uint64_t linear = (id - 1) / threads;
  const std::uint64_t x = linear % groups_.x;
  const std::uint64_t y = linear / groups_.x % groups_.y;
  const std::uint64_t z = linear / (std::uint64_t{groups_.x} * groups_.y);
  return fmt::format("{} in group ({},{},{})",
                     thread_text(static_cast<std::uint32_t>((id - 1) % threads)), x, y, z);
}

const std::string& Reporter::buffer_of(const Instr& in) const {
  const ir::Kernel& k = *program_.kernel;
  return in.on_shared ? k.shared[in.buffer].name : k.params[in.buffer].name;
}

std::string Reporter::where(const Instr& in) const {
  return fmt::format("in group ({},{},{}) at {}", group_.x, group_.y, group_.z,
                     format_loc(in.op->loc));
}

// A vector access names its whole range: "at index 96..99".
SimError Reporter::out_of_bounds(const Instr& in, std::uint32_t thread, std::string_view buffer,
                                 std::int64_t index, std::uint64_t count) const {
  const std::string at =
      in.lanes > 1 ? fmt::format("{}..{}", index, index + in.lanes - 1) : std::to_string(index);
  return SimError(SimError::Kind::OutOfBounds,
                  fmt::format("{}: out-of-bounds {} of '{}' at index {} ('{}' has {} elements) by "
                              "{} {}",
                              program_.kernel->name, ir::op_name(in.kind), buffer, at, buffer,
                              count, thread_text(thread), where(in)));
}

SimError Reporter::misaligned(const Instr& in, std::uint32_t thread, std::string_view buffer,
                              std::int64_t index) const {
  return SimError(SimError::Kind::BadArgument,
                  fmt::format("{}: misaligned vector {} of '{}' at index {}: a {}-lane access "
                              "needs an index that is a multiple of {}, by {} {}",
                              program_.kernel->name, ir::op_name(in.kind), buffer, index, in.lanes,
                              in.lanes, thread_text(thread), where(in)));
}

SimError Reporter::fragment_not_uniform(const Instr& in, std::uint32_t first, std::uint32_t thread,
                                        std::int64_t offset, std::int64_t stride) const {
  return SimError(SimError::Kind::BadArgument,
                  fmt::format("{}: {} of '{}' with offset {} and stride {} in {}, which differ "
                              "from those of {} of the same simdgroup: a fragment is accessed by "
                              "the whole simdgroup at one place {}",
                              program_.kernel->name, ir::op_name(in.kind), buffer_of(in), offset,
                              stride, thread_text(thread), thread_text(first), where(in)));
}

SimError Reporter::fragment_misaligned(const Instr& in, std::uint32_t first,
                                       std::string_view buffer, std::int64_t offset,
                                       std::int64_t stride) const {
  return SimError(
      SimError::Kind::BadArgument,
      fmt::format("{}: misaligned {} of '{}' with offset {} and stride {}: a 16-bit "
                  "A or B fragment is read from shared memory 8 elements (16 bytes) "
                  "at a time, so both must be multiples of 8, by the simdgroup of {} {}",
                  program_.kernel->name, ir::op_name(in.kind), buffer, offset, stride,
                  thread_text(first), where(in)));
}

SimError Reporter::row_vector_differs(const Instr& in, std::uint32_t thread, std::uint32_t row,
                                      std::uint32_t col, Slot value, Slot other) const {
  return SimError(SimError::Kind::BadArgument,
                  fmt::format("{}: {} of row {} of %{}, whose columns differ (column 0 holds {}, "
                              "column {} holds {}): a row vector holds one value a row, as "
                              "row_max and row_sum make it, by {} {}",
                              program_.kernel->name, ir::op_name(in.kind), row, in.op->args[1],
                              format_slot(value, DType::F32), col, format_slot(other, DType::F32),
                              thread_text(thread), where(in)));
}

SimError Reporter::pending_copy(const Instr& in, std::uint32_t thread, Access access,
                                std::string_view alloc, std::uint32_t index,
                                std::uint32_t count) const {
  const std::string_view what = access == Access::Read ? "read" : "write";
  return SimError(SimError::Kind::SharedRace,
                  fmt::format("{}: {} {} of '{}' at index {} ('{}' has {} elements) while an "
                              "asynchronous copy into it has not been waited for (async.wait), "
                              "by {} {}",
                              program_.kernel->name, ir::op_name(in.kind), what, alloc, index,
                              alloc, count, thread_text(thread), where(in)));
}

SimError Reporter::warpgroup_incomplete(const Instr& in, std::uint32_t thread) const {
  return SimError(SimError::Kind::DivergentBarrier,
                  fmt::format("{}: {} is run by the four simdgroups of a warpgroup together (128 "
                              "threads, groups a multiple of 128), but the warpgroup of {} is "
                              "not whole here (a group of {} threads) {}",
                              program_.kernel->name, ir::op_name(in.kind), thread_text(thread),
                              group_size_.volume(), where(in)));
}

SimError Reporter::warpgroup_operand(const Instr& in, std::uint32_t first, std::string_view buffer,
                                     std::int64_t offset, std::int64_t stride,
                                     std::string_view why) const {
  return SimError(SimError::Kind::BadArgument,
                  fmt::format("{}: {} operand in '{}' with offset {} and stride {}: {}, by the "
                              "warpgroup of {} {}",
                              program_.kernel->name, ir::op_name(in.kind), buffer, offset, stride,
                              why, thread_text(first), where(in)));
}

SimError Reporter::product_pending(const Instr& in, std::uint32_t thread,
                                   const Instr& product) const {
  return SimError(SimError::Kind::PendingProduct,
                  fmt::format("{}: {} of an accumulator that the warpgroup product started {} "
                              "still writes (wg.wait for it first), by {} {}",
                              program_.kernel->name, ir::op_name(in.kind),
                              format_loc(product.op->loc), thread_text(thread), where(in)));
}

SimError Reporter::operand_fragment_written(const Instr& in, std::uint32_t thread,
                                            const Instr& product) const {
  return SimError(SimError::Kind::PendingProduct,
                  fmt::format("{}: {} writes the A fragment that the warpgroup product started {} "
                              "still reads (wg.wait for it first), by {} {}",
                              program_.kernel->name, ir::op_name(in.kind),
                              format_loc(product.op->loc), thread_text(thread), where(in)));
}

SimError Reporter::operand_overwritten(const Instr& in, std::uint32_t thread, Access access,
                                       std::string_view alloc, std::uint32_t index,
                                       std::uint32_t count) const {
  return SimError(SimError::Kind::SharedRace,
                  fmt::format("{}: {} {} '{}' at index {} ('{}' has {} elements), which a "
                              "started warpgroup product (wg.mma) still reads: wait for it "
                              "(wg.wait) before writing its operands, {} {}",
                              program_.kernel->name, thread_text(thread), access_verb(access),
                              alloc, index, alloc, count, ir::op_name(in.kind), where(in)));
}

SimError Reporter::unfenced_operand(const Instr& in, std::uint32_t reader, std::uint32_t writer,
                                    const Instr& write, std::string_view alloc,
                                    std::uint32_t index) const {
  return SimError(
      SimError::Kind::AsyncProxy,
      fmt::format("{}: {} reads '{}' at index {} through the asynchronous proxy, but "
                  "{} wrote it at {} with no fence.proxy.async after the write "
                  "(fence_async_proxy() before the barrier), read by {} {}",
                  program_.kernel->name, ir::op_name(in.kind), alloc, index, thread_text(writer),
                  format_loc(write.op->loc), thread_text(reader), where(in)));
}

SimError Reporter::products_not_waited(const Instr& product, std::uint32_t first,
                                       std::size_t products) const {
  return SimError(SimError::Kind::PendingProduct,
                  fmt::format("{}: the simdgroup of {} ends with {} warpgroup products it never "
                              "waited for (wg.wait), the first started {}",
                              program_.kernel->name, thread_text(first), products, where(product)));
}

SimError Reporter::copies_not_waited(const Instr& first, std::uint32_t thread,
                                     std::size_t copies) const {
  return SimError(SimError::Kind::UninitializedRead,
                  fmt::format("{}: {} ends with {} asynchronous copies it never waited for "
                              "(async.wait), the first started {}",
                              program_.kernel->name, thread_text(thread), copies, where(first)));
}

SimError Reporter::race(const Instr& in, std::uint32_t thread, Access access, const Conflict& first,
                        std::string_view alloc, std::uint32_t index, std::uint32_t count) const {
  return SimError(
      SimError::Kind::SharedRace,
      fmt::format("{}: shared-memory race on '{}' at index {} ('{}' has {} elements): {} {} it "
                  "after {} {} it at {}, with no barrier in between, {}",
                  program_.kernel->name, alloc, index, alloc, count, thread_text(thread),
                  access_verb(access), thread_text(first.thread), access_verb(first.access),
                  format_loc(program_.code[first.instr].op->loc), where(in)));
}

SimError Reporter::global_race(const Instr& in, std::uint32_t thread, Access access,
                               const TensorFinding& earlier, std::string_view tensor,
                               std::uint64_t index, std::uint64_t count) const {
  const std::uint64_t threads = group_size_.volume();
  const std::uint64_t linear =
      group_.x + std::uint64_t{groups_.x} * (group_.y + std::uint64_t{groups_.y} * group_.z);
  const auto me = static_cast<std::uint32_t>(1 + linear * threads + thread);
  std::string_view why = "with no barrier in between";
  if ((earlier.other - 1) / threads != linear) {
    why = "nothing orders the threads of two groups";
  } else if (access == Access::Write && earlier.other_access == Access::Write) {
    why = "an element has one writer per launch (give each element one thread, or use atomics)";
  }
  return SimError(
      SimError::Kind::GlobalRace,
      fmt::format("{}: global-memory race on '{}' at index {} ('{}' has {} elements): {} {} it at "
                  "{} after {} {} it at {}; {}",
                  program_.kernel->name, tensor, index, tensor, count, actor_text(me),
                  access_verb(access), format_loc(in.op->loc), actor_text(earlier.other),
                  access_verb(earlier.other_access),
                  format_loc(program_.code[earlier.other_at].op->loc), why));
}

SimError Reporter::unwritten_shared(const Instr& in, std::uint32_t thread, std::string_view alloc,
                                    std::uint32_t index, std::uint32_t count,
                                    std::string_view overwritten_by) const {
  if (!overwritten_by.empty()) {
    return SimError(
        SimError::Kind::UninitializedRead,
        fmt::format("{}: read of shared memory '{}' at index {} ('{}' has {} elements) over what "
                    "'{}', which shares its bytes, wrote: {} {} it without storing to it since, {}",
                    program_.kernel->name, alloc, index, alloc, count, overwritten_by,
                    thread_text(thread), access_verb(access_of(in)), where(in)));
  }
  return SimError(SimError::Kind::UninitializedRead,
                  fmt::format("{}: read of uninitialized shared memory '{}' at index {} ('{}' has "
                              "{} elements): {} {} it before any thread of the group stored to "
                              "it, {}",
                              program_.kernel->name, alloc, index, alloc, count,
                              thread_text(thread), access_verb(access_of(in)), where(in)));
}

SimError Reporter::overlap(const Instr& in, std::uint32_t thread, Access access,
                           const OverlapFinding& found, std::string_view alloc, std::uint32_t index,
                           std::string_view other) const {
  const std::string head =
      fmt::format("{}: {} {} '{}' at index {}, whose bytes '{}' shares,", program_.kernel->name,
                  thread_text(thread), access_verb(access), alloc, index, other);
  switch (found.kind) {
    case OverlapFinding::Kind::PendingCopy:
      return SimError(SimError::Kind::SharedRace,
                      fmt::format("{} while an asynchronous copy into '{}' has not been waited "
                                  "for (async.wait), {}",
                                  head, other, where(in)));
    case OverlapFinding::Kind::ProductReads:
      return SimError(SimError::Kind::SharedRace,
                      fmt::format("{} while a warpgroup product still reads '{}' (wg.wait), {}",
                                  head, other, where(in)));
    case OverlapFinding::Kind::Race:
      break;
  }
  return SimError(
      SimError::Kind::SharedRace,
      fmt::format("{} after {} {} '{}' at {}, with no barrier in between, {}", head,
                  thread_text(found.conflict.thread), access_verb(found.conflict.access), other,
                  format_loc(program_.code[found.conflict.instr].op->loc), where(in)));
}

SimError Reporter::unwritten_output(const Instr& in, std::uint32_t thread, std::string_view tensor,
                                    std::uint64_t index, std::uint64_t count) const {
  return SimError(
      SimError::Kind::UninitializedRead,
      fmt::format("{}: read of uninitialized output '{}' at index {} ('{}' has {} elements): {} {} "
                  "it before any thread of the launch wrote it, {}; an Out<T> tensor is undefined "
                  "at kernel entry (declare it InOut<T> if the kernel reads what it holds)",
                  program_.kernel->name, tensor, index, tensor, count, thread_text(thread),
                  access_verb(access_of(in)), where(in)));
}

SimError Reporter::index_overflow(const Instr& access, const Instr& origin, std::uint32_t thread,
                                  const std::string& what) const {
  return SimError(
      SimError::Kind::IndexOverflow,
      fmt::format("{}: index arithmetic wraps: {}, by {} {}; the value feeds the index "
                  "of the {} of '{}' at {}",
                  program_.kernel->name, what, thread_text(thread), where(origin),
                  ir::op_name(access.kind), buffer_of(access), format_loc(access.op->loc)));
}

SimError Reporter::divergent_barrier(const Instr& in, Active active, std::uint32_t threads) const {
  std::uint32_t missing = 0;
  while (missing < active.size() && active[missing] == missing) ++missing;
  return SimError(SimError::Kind::DivergentBarrier,
                  fmt::format("{}: divergent {} (a group-wide barrier) reached by {} of {} threads "
                              "({} is here, {} is not) {}",
                              program_.kernel->name, ir::op_name(in.kind), active.size(), threads,
                              thread_text(active.front()), thread_text(missing), where(in)));
}

SimError Reporter::barrier_among_mismatch(const Instr& in, Active active,
                                          std::uint32_t threads) const {
  const std::uint32_t among = in.inner;
  std::string why;
  if (among > threads) {
    why = fmt::format("the group has {} threads", threads);
  } else if (active.size() > among || active.back() >= among) {
    why = fmt::format("{} reached it too", thread_text(active.back()));
  } else {
    std::uint32_t missing = 0;
    while (missing < active.size() && active[missing] == missing) ++missing;
    why = fmt::format("{} did not", thread_text(missing));
  }
  return {SimError::Kind::DivergentBarrier,
          fmt::format("{}: barrier.among {} joins exactly the group's first {} threads, but {} "
                      "(reached by {} threads) {}",
                      program_.kernel->name, among, among, why, active.size(), where(in))};
}

SimError Reporter::turn_out_of_order(const Instr& in, std::string_view why) const {
  return {SimError::Kind::DivergentBarrier,
          fmt::format("{}: {} among {} warpgroups would hang them: {} {}", program_.kernel->name,
                      ir::op_name(in.kind), in.inner, why, where(in))};
}

SimError Reporter::divergent_simdgroup(const Instr& in, std::uint32_t active_lanes,
                                       std::uint32_t lanes, std::uint32_t here,
                                       std::uint32_t missing) const {
  return SimError(SimError::Kind::DivergentSimdgroup,
                  fmt::format("{}: divergent {}: simdgroup {} reaches it with {} of its {} lanes "
                              "({} is here, {} is not) {}",
                              program_.kernel->name, ir::op_name(in.kind), here / 32, active_lanes,
                              lanes, thread_text(here), thread_text(missing), where(in)));
}

SimError Reporter::mbarrier_hang(const Instr& in, std::uint32_t thread, std::string_view barrier,
                                 std::uint32_t parity, std::string_view state) const {
  return {SimError::Kind::Mbarrier,
          fmt::format("{}: {} waits on {} for the phase of parity {}, which never "
                      "completes (its phase still waits for {}), and no other thread of "
                      "the group can run: the group would hang, {} {}",
                      program_.kernel->name, thread_text(thread), barrier, parity, state,
                      ir::op_name(in.kind), where(in))};
}

SimError Reporter::mbarrier_misuse(const Instr& in, std::uint32_t thread, std::string_view barrier,
                                   std::string_view why) const {
  return {SimError::Kind::Mbarrier,
          fmt::format("{}: {} on {} by {}: {}, {}", program_.kernel->name, ir::op_name(in.kind),
                      barrier, thread_text(thread), why, where(in))};
}

SimError Reporter::copy_not_waited(const Instr& in, std::uint32_t thread, Access access,
                                   std::string_view alloc, std::uint32_t index,
                                   std::string_view barrier, std::uint32_t phase) const {
  return {SimError::Kind::SharedRace,
          fmt::format("{}: {} {} '{}' at index {}, which a TMA copy (copy.tensor) "
                      "completing phase {} of {} writes, before waiting for that phase "
                      "(mbar.wait), {} {}",
                      program_.kernel->name, thread_text(thread), access_verb(access), alloc, index,
                      phase, barrier, ir::op_name(in.kind), where(in))};
}

SimError Reporter::tensor_copy_not_waited(const Instr& copy, std::string_view barrier,
                                          std::uint32_t phase) const {
  return {SimError::Kind::Mbarrier,
          fmt::format("{}: the group ends while the TMA copy completing phase {} of {} "
                      "may still be landing: no thread waited for it (mbar.wait), the "
                      "last copy {}",
                      program_.kernel->name, phase, barrier, where(copy))};
}

SimError Reporter::tensor_map_unusable(const Instr& in, std::uint32_t thread,
                                       std::string_view tensor, std::string_view why) const {
  return {SimError::Kind::OutOfBounds,
          fmt::format("{}: {} copies through the tensor map of '{}', which {} (a TMA copy "
                      "runs only where its tensor allows one), {} {}",
                      program_.kernel->name, thread_text(thread), tensor, why, ir::op_name(in.kind),
                      where(in))};
}

SimError Reporter::zero_step(const Instr& in, std::uint32_t thread, Slot start, Slot end) const {
  return SimError(SimError::Kind::ZeroStepLoop,
                  fmt::format("{}: loop with step 0 never ends: {} starts at {} below the end {} "
                              "{}",
                              program_.kernel->name, thread_text(thread),
                              format_slot(start, in.type), format_slot(end, in.type), where(in)));
}

SimError Reporter::runaway(const Instr& in, std::uint64_t budget, std::uint32_t thread, Slot i,
                           Slot end, Slot step) const {
  return SimError(
      SimError::Kind::RunawayLoop,
      fmt::format("{}: runaway loop: the group ran more than {} loop iterations "
                  "(SimOptions::step_budget); {} is still looping with counter {} "
                  "(end {}, step {}) {}",
                  program_.kernel->name, budget, thread_text(thread), format_slot(i, in.type),
                  format_slot(end, in.type), format_slot(step, in.type), where(in)));
}

SimError Reporter::division_by_zero(const Instr& in, std::uint32_t thread) const {
  return SimError(SimError::Kind::BadArgument,
                  fmt::format("{}: integer division by zero ('{}') by {} {}", program_.kernel->name,
                              ir::op_name(in.kind), thread_text(thread), where(in)));
}

}  // namespace iron::runtime::sim
