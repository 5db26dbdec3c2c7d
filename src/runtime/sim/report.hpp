/// The messages of sanitizer findings: each names the kernel, group, thread(s), buffer and index
/// where they apply, and the op's source location.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "arith.hpp"
#include "iron/runtime/sim.hpp"
#include "memory.hpp"
#include "program.hpp"
#include "tensor_shadow.hpp"

namespace iron::runtime::sim {

class Reporter {
 public:
  Reporter(const Program& program, const Grid& grid)
      : program_(program), group_size_(grid.group_size), groups_(grid.groups) {}

  void set_group(const Dim3& group) { group_ = group; }

  SimError out_of_bounds(const Instr& in, std::uint32_t thread, std::string_view buffer,
                         std::int64_t index, std::uint64_t count) const;
  /// A vector access whose first element is not a multiple of its lane count.
  SimError misaligned(const Instr& in, std::uint32_t thread, std::string_view buffer,
                      std::int64_t index) const;
  SimError race(const Instr& in, std::uint32_t thread, Access access, const Conflict& first,
                std::string_view alloc, std::uint32_t index, std::uint32_t count) const;
  /// A tensor access racing with `earlier`, an access by a thread of this or an earlier group.
  SimError global_race(const Instr& in, std::uint32_t thread, Access access,
                       const TensorFinding& earlier, std::string_view tensor, std::uint64_t index,
                       std::uint64_t count) const;
  /// An access of `alloc` that conflicts with `found.other`, an allocation sharing its bytes.
  SimError overlap(const Instr& in, std::uint32_t thread, Access access,
                   const OverlapFinding& found, std::string_view alloc, std::uint32_t index,
                   std::string_view other) const;
  /// A read (or atomic) of a shared element that no thread of the group has stored to, or not
  /// since `overwritten_by` (an allocation sharing its bytes; empty for none) was written.
  SimError unwritten_shared(const Instr& in, std::uint32_t thread, std::string_view alloc,
                            std::uint32_t index, std::uint32_t count,
                            std::string_view overwritten_by = {}) const;
  /// A read (or atomic) of an Out element that no thread of the launch has written.
  SimError unwritten_output(const Instr& in, std::uint32_t thread, std::string_view tensor,
                            std::uint64_t index, std::uint64_t count) const;
  /// The index of memory op `access` derives from `origin`, whose true value did not fit its
  /// type: `what` ("mul of 65536 and 65536 is 4294967296, which does not fit u32").
  SimError index_overflow(const Instr& access, const Instr& origin, std::uint32_t thread,
                          const std::string& what) const;
  /// A barrier or reduce op reached by only `active` of the group's `threads`.
  SimError divergent_barrier(const Instr& in, Active active, std::uint32_t threads) const;
  /// barrier.among reached by other threads than the group's first in.inner.
  SimError barrier_among_mismatch(const Instr& in, Active active, std::uint32_t threads) const;
  SimError turn_out_of_order(const Instr& in, std::string_view why) const;
  /// A simd op reached by `here` but not by `missing`, of the same simdgroup.
  SimError divergent_simdgroup(const Instr& in, std::uint32_t active_lanes, std::uint32_t lanes,
                               std::uint32_t here, std::uint32_t missing) const;
  /// A fragment access whose offset or stride differs between lanes of one simdgroup: lane
  /// `first` of it has others than `thread` (`offset`, `stride`).
  SimError fragment_not_uniform(const Instr& in, std::uint32_t first, std::uint32_t thread,
                                std::int64_t offset, std::int64_t stride) const;
  /// A frag.load of 16-bit A or B elements from shared memory whose offset or stride is not a
  /// multiple of 8 elements (its rows of 8 are read 16 bytes at a time).
  SimError fragment_misaligned(const Instr& in, std::uint32_t first, std::string_view buffer,
                               std::int64_t offset, std::int64_t stride) const;
  /// A frag.rowvalue by `thread` of row `row` of a row vector whose column `col` holds `other`
  /// where column 0 holds `value`: which column a lane reads is the target's.
  SimError row_vector_differs(const Instr& in, std::uint32_t thread, std::uint32_t row,
                              std::uint32_t col, Slot value, Slot other) const;
  /// An access of a shared element an asynchronous copy will write, before the copy's async.wait.
  SimError pending_copy(const Instr& in, std::uint32_t thread, Access access,
                        std::string_view alloc, std::uint32_t index, std::uint32_t count) const;
  /// A thread that ends the group with `copies` asynchronous copies it never waited for, the
  /// first one started by `first`.
  SimError copies_not_waited(const Instr& first, std::uint32_t thread, std::size_t copies) const;
  /// wg.mma reached by only some threads of a warpgroup (`thread` is missing), or in a group
  /// whose size is not a whole number of warpgroups.
  SimError warpgroup_incomplete(const Instr& in, std::uint32_t thread) const;
  /// A wg.mma operand (A or B, in `buffer`) whose offset or stride differs between the threads of
  /// a warpgroup, or that does not fit the swizzled tiles the Hopper instruction reads: `why`.
  SimError warpgroup_operand(const Instr& in, std::uint32_t first, std::string_view buffer,
                             std::int64_t offset, std::int64_t stride, std::string_view why) const;
  /// Fragment op `in` on accumulator rows that wg.mma `product` still writes (before its wg.wait).
  SimError product_pending(const Instr& in, std::uint32_t thread, const Instr& product) const;
  /// Fragment op `in` writing the A fragment that register-form wg.mma `product` still reads.
  SimError operand_fragment_written(const Instr& in, std::uint32_t thread,
                                    const Instr& product) const;
  /// A write of a shared element that a started warpgroup product still reads.
  SimError operand_overwritten(const Instr& in, std::uint32_t thread, Access access,
                               std::string_view alloc, std::uint32_t index,
                               std::uint32_t count) const;
  /// A wg.mma read by `reader` of an element that `writer` wrote at `write` with no
  /// fence.proxy.async after it.
  SimError unfenced_operand(const Instr& in, std::uint32_t reader, std::uint32_t writer,
                            const Instr& write, std::string_view alloc, std::uint32_t index) const;
  /// A simdgroup (first thread `first`) that ends the group with `products` warpgroup products
  /// it never waited for, the first started by `product`.
  SimError products_not_waited(const Instr& product, std::uint32_t first,
                               std::size_t products) const;
  /// mbar.wait by `thread` on mbarrier `barrier` for `parity` that no strand can make pass: the
  /// group would hang; `state` says what its phase still waits for.
  SimError mbarrier_hang(const Instr& in, std::uint32_t thread, std::string_view barrier,
                         std::uint32_t parity, std::string_view state) const;
  /// An mbarrier op by `thread` that the barrier's state forbids: `why`.
  SimError mbarrier_misuse(const Instr& in, std::uint32_t thread, std::string_view barrier,
                           std::string_view why) const;
  /// An access by `thread` of a shared element that the TMA copy completing phase `phase` of
  /// mbarrier `barrier` wrote, before the thread waited for that phase.
  SimError copy_not_waited(const Instr& in, std::uint32_t thread, Access access,
                           std::string_view alloc, std::uint32_t index, std::string_view barrier,
                           std::uint32_t phase) const;
  /// A TMA copy (`copy`) into phase `phase` of mbarrier `barrier` that no thread waited for
  /// before the group ended.
  SimError tensor_copy_not_waited(const Instr& copy, std::string_view barrier,
                                  std::uint32_t phase) const;
  /// A TMA copy by `thread` through a tensor map the GPU could not encode (`why`).
  SimError tensor_map_unusable(const Instr& in, std::uint32_t thread, std::string_view tensor,
                               std::string_view why) const;
  SimError zero_step(const Instr& in, std::uint32_t thread, Slot start, Slot end) const;
  SimError runaway(const Instr& in, std::uint64_t budget, std::uint32_t thread, Slot i, Slot end,
                   Slot step) const;
  SimError division_by_zero(const Instr& in, std::uint32_t thread) const;

  /// "thread 3 (3,0,0)".
  std::string thread_text(std::uint32_t t) const;

 private:
  std::string where(const Instr& in) const;
  /// "thread 3 (3,0,0) in group (1,0,0)" for an Actor::id.
  std::string actor_text(std::uint32_t id) const;
  /// The buffer (tensor or shared allocation) a memory op accesses.
  const std::string& buffer_of(const Instr& in) const;

  const Program& program_;
  Dim3 group_size_;
  Dim3 groups_;
  Dim3 group_;
};

}  // namespace iron::runtime::sim
