/// Runs one threadgroup at a time: all its threads in lock-step over the structured IR, each op
/// applied to the active threads, with every sanitizer check on the way.
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "arith.hpp"
#include "iron/runtime/sim.hpp"
#include "memory.hpp"
#include "program.hpp"
#include "report.hpp"
#include "tensor_shadow.hpp"

namespace iron::runtime::sim {

/// The launch's arguments by parameter index (a tensor view or a scalar, the other one unset).
struct Bindings {
  std::vector<TensorView> tensors;
  std::vector<const Scalar*> scalars;
};

/// Holds the per-thread values and threadgroup memory of one group; reused group after group.
/// Tensor accesses are recorded in `shadow`, shared by the groups the runner runs.
class GroupRunner {
 public:
  GroupRunner(const Program& program, const Bindings& bindings, const Grid& grid,
              const SimOptions& options, TensorShadow& shadow);

  /// Runs the group whose linear index in the grid is `linear`; throws SimError on the first
  /// finding.
  void run(const Dim3& group, std::uint64_t linear);

 private:
  void exec(Range block, Active active, std::uint32_t depth);
  void exec_op(const Instr& in, Active active, std::uint32_t depth);
  void run_for(const Instr& in, Active active, std::uint32_t depth);
  void run_if(const Instr& in, Active active, std::uint32_t depth);
  void run_constexpr(const Instr& in, Active active);
  void run_builtin(const Instr& in, Active active);
  /// Lane-wise pure arithmetic through ir::evaluate; reports an integer division by zero.
  void run_evaluate(const Instr& in, Active active);
  void copy(const Instr& in, Active active);
  void var_store(const Instr& in, Active active);
  /// regs: fills the array's rows; regs.load/regs.store: one element, the index bounds-checked.
  void regs_decl(const Instr& in, Active active);
  void regs_access(const Instr& in, Active active);

  // exact.cpp
  /// Sets the wrap marks of the result of `exact` op `in` from its operands (before it runs).
  void track_wraps(const Instr& in, Active active);
  /// Marks a loop counter whose next value, counter + step, does not fit its type.
  void mark_counter(const Instr& in, std::uint32_t thread, Slot counter, Slot step);
  /// Reports the index of memory op `in` when it carries a wrap mark.
  void check_index_wrap(const Instr& in, std::uint32_t thread) {
    if (wraps(in.args[0])[thread] != 0) report_index_wrap(in, thread);
  }
  /// Reports the wrap that value row `from` (the index, args[0], unless given) of `in` carries.
  [[noreturn]] void report_index_wrap(const Instr& in, std::uint32_t thread);
  [[noreturn]] void report_index_wrap(const Instr& in, std::uint32_t thread, std::uint32_t from);

  // memory_ops.cpp
  void load(const Instr& in, Active active);
  void store(const Instr& in, Active active);
  void atomic(const Instr& in, Active active);
  void vector_load(const Instr& in, Active active);
  void vector_store(const Instr& in, Active active);
  std::uint32_t checked_index(const Instr& in, std::uint32_t thread, std::uint64_t count);
  /// The first element of a vector access: all its lanes in bounds, aligned to its width.
  std::uint32_t checked_vector_index(const Instr& in, std::uint32_t thread, std::uint64_t count);
  const std::string& buffer_name(const Instr& in) const;
  void record_shared(const Instr& in, std::uint32_t thread, std::uint32_t index, Access access);
  /// The same on allocation `alloc` (wg.mma reads two).
  void record_shared(const Instr& in, int alloc, std::uint32_t thread, std::uint32_t index,
                     Access access);
  void record_tensor(const Instr& in, std::uint32_t thread, std::uint64_t index, Access access);

  // fragment_ops.cpp
  void frag_decl(const Instr& in, Active active);
  void frag_access(const Instr& in, Active active);
  void frag_mma(const Instr& in, Active active);
  /// frag.get/set: the lane's element in a slot; frag.coord: its row or column.
  void frag_element(const Instr& in, Active active);
  /// frag.rowvalue: the row vector's value at the row of the lane's slot, the same in every
  /// column of that row (reported otherwise).
  void frag_row_value(const Instr& in, Active active);
  /// frag.rowreduce: each row's max, or its sum in increasing column, in every column of the
  /// row vector.
  void frag_row_reduce(const Instr& in, Active active);
  /// frag.convert: each element of the accumulator rounded to nearest into the A fragment.
  void frag_convert(const Instr& in, Active active);
  /// The slot of element (r, c) of fragment `s`, whose first row is `first_row`, in the
  /// simdgroup whose first thread is `first`.
  Slot& fragment_at(const ir::FragmentShape& s, std::uint32_t first_row, std::uint32_t first,
                    std::uint32_t r, std::uint32_t c) {
    const ir::FragmentOwner owner = ir::fragment_owner(options_.lane_map, s, r, c);
    return row(first_row + owner.slot)[first + owner.lane];
  }
  /// The element index of fragment access `in` at (r, c) for the simdgroup whose first thread
  /// is `first`, bounds-checked against `count`.
  std::uint32_t fragment_index(const Instr& in, std::uint32_t thread, std::int64_t offset,
                               std::int64_t stride, const ir::FragmentCoord& at,
                               std::uint64_t count);

  // async_copies.cpp
  /// copy.async: checks both ends, reads the source and marks the destination pending.
  void copy_async(const Instr& in, Active active);
  void async_commit(Active active);
  /// async.wait: writes each thread's oldest groups until at most N remain.
  void async_wait(const Instr& in, Active active);
  /// Reports a thread that ends the group with copies it never waited for.
  void check_copies_landed();
  /// A started copy: `lanes` values for shared elements `index` … of copy.async `instr`.
  struct PendingCopy {
    std::uint32_t instr = 0;
    std::uint32_t index = 0;
    std::uint32_t lanes = 0;
    Slot values[16] = {};
  };

  // warpgroup_ops.cpp
  /// A started warpgroup product: wg.mma `instr`, the accumulator rows it writes, the first thread
  /// of its simdgroup and the shared elements it reads.
  struct PendingProduct {
    std::uint32_t instr = 0;
    std::uint32_t acc = 0;
    std::uint32_t lead = 0;
    std::vector<std::pair<int, std::uint32_t>> reads;
    std::optional<std::uint32_t> a_fragment;  ///< the register form's A rows, read until done
  };
  /// wg.mma: each simdgroup's product, exact like frag.mma, computed now from the operands it
  /// reads (which stay read, so overwriting them is reported, until its wg.wait); its
  /// accumulator is pending until then.
  void wg_mma(const Instr& in, Active active);
  /// One operand of a wg.mma (0: A, 1: B): its allocation, offset and stride, checked alike in
  /// every thread of the warpgroup whose first thread is `first` and placed as wgmma reads it.
  struct WgOperand {
    int alloc = -1;
    std::int64_t offset = 0, stride = 0;
  };
  WgOperand wg_operand(const Instr& in, std::uint32_t first, int which);
  /// The product of the simdgroup whose first thread is `lead`, started (ops[0] unused in the
  /// register form, whose A is the simdgroup's fragment).
  void wg_product(const Instr& in, std::uint32_t lead, const WgOperand (&ops)[2]);
  void wg_commit(Active active);
  /// wg.wait: finishes each simdgroup's oldest product groups until at most N remain.
  void wg_wait(const Instr& in, Active active);
  /// Reports fragment op `in` on an accumulator a warpgroup product of the simdgroup still writes.
  void check_products_done(const Instr& in, Active active);
  /// Reports a simdgroup that ends the group with products it never waited for.
  void check_products_waited();
  /// Reports a wg.mma read of an element whose last write its writer has not fenced.
  void check_proxy_fenced(const Instr& in, std::uint32_t reader, int alloc, std::uint32_t index);
  /// Finishes one group of products: their reads count as made now (a write by another thread
  /// before the next barrier races with them), and the elements are released.
  void finish_products(const std::vector<PendingProduct>& group);

  // collective.cpp
  /// Calls fn(first, lanes) for each simdgroup of `active`: threads first .. first + lanes - 1;
  /// reports a simdgroup that `in` reached with only some of its lanes.
  template <class Fn>
  void each_simdgroup(const Instr& in, Active active, Fn&& fn);
  void barrier(const Instr& in, Active active);
  /// barrier.among: exactly the group's first in.inner threads reach it; their accesses before
  /// it never race with theirs after it (the simulator's schedule runs no other thread between
  /// them: a specialized pipeline's producer is idle in its compute block).
  void barrier_among(const Instr& in, Active active);
  /// wg.turn: every thread of its warpgroups and none other reaches it (so each warpgroup takes
  /// as many turns as the others), begun once, then waits and passes in turn; each breach is a
  /// DivergentBarrier finding (on a GPU it would hang the group).
  void turn(const Instr& in, Active active);
  void simd(const Instr& in, Active active);
  void reduce(const Instr& in, Active active);

  Slot* row(std::uint32_t value) { return values_.data() + std::size_t{value} * threads_; }
  std::uint32_t* wraps(std::uint32_t value) {
    return wraps_.data() + std::size_t{value} * threads_;
  }
  std::uint32_t instr_index(const Instr& in) const {
    return static_cast<std::uint32_t>(&in - program_.code.data());
  }

  const Program& program_;
  const Bindings& bindings_;
  Grid grid_;
  SimOptions options_;
  std::uint32_t threads_;
  std::vector<std::uint32_t> tid_[3];  // each thread's coordinates, per axis
  std::vector<std::uint32_t> all_;     // 0 .. threads-1
  std::vector<Slot> values_;           // row-major: one row of `threads_` slots per value
  /// Per value row and thread: 0, or 1 + the instruction whose value did not fit its type and
  /// that this value derives from (only rows of `exact` ops are ever set).
  std::vector<std::uint32_t> wraps_;
  /// The operands of a thread's latest op that did not fit its type, for the report.
  struct Wrap {
    std::uint32_t instr = 0;  ///< 1 + the instruction
    Slot a = 0, b = 0;
  };
  std::vector<Wrap> last_wrap_;
  std::vector<std::vector<std::uint32_t>> masks_;      // two per nesting depth
  std::vector<std::vector<PendingCopy>> open_copies_;  ///< per thread: not yet committed
  std::vector<std::deque<std::vector<PendingCopy>>>
      committed_copies_;                                    ///< per thread, oldest first
  std::vector<std::vector<PendingProduct>> open_products_;  ///< per simdgroup: not committed
  std::vector<std::deque<std::vector<PendingProduct>>>
      committed_products_;                   ///< per simdgroup, oldest first
  std::uint32_t pending_products_ = 0;       ///< started products not yet finished, in all groups
  std::vector<std::uint32_t> proxy_fences_;  ///< per thread: fence.proxy.async ops run
  SharedMemory shared_;
  TensorShadow& shadow_;
  Reporter report_;
  Dim3 group_;
  std::uint32_t first_id_ = 1;  ///< Actor::id of the group's thread 0
  std::uint32_t interval_ = 0;  ///< barrier interval, counted over every group run here
  std::uint64_t trips_ = 0;
  ir::TurnStep turn_ = ir::TurnStep::Pass;  ///< the group's last wg.turn step
  bool turns_begun_ = false;
  const Instr* last_turn_ = nullptr;
};

template <class Fn>
void GroupRunner::each_simdgroup(const Instr& in, Active active, Fn&& fn) {
  std::size_t k = 0;
  while (k < active.size()) {
    const std::uint32_t first = active[k] / 32 * 32;
    const std::uint32_t lanes = std::min(32u, threads_ - first);
    std::size_t end = k;
    while (end < active.size() && active[end] < first + lanes) ++end;
    if (end - k != lanes) {
      std::uint32_t missing = first;
      while (missing - first < end - k && active[k + (missing - first)] == missing) ++missing;
      throw report_.divergent_simdgroup(in, static_cast<std::uint32_t>(end - k), lanes, active[k],
                                        missing);
    }
    fn(first, lanes);
    k = end;
  }
}

}  // namespace iron::runtime::sim
