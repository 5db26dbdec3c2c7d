/// Runs one threadgroup at a time: all its threads in lock-step over the structured IR, each op
/// applied to the active threads, with every sanitizer check on the way.
#pragma once

#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "arith.hpp"
#include "iron/runtime/sim.hpp"
#include "memory.hpp"
#include "program.hpp"
#include "report.hpp"
#include "tensor_shadow.hpp"

namespace iron::runtime::sim {

/// A tensor map's extent for this launch: the first element, rows and row length of the matrix it
/// reads (ir::TensorMap's expressions evaluated), and whether the GPU could encode it (the
/// tensor's first element and its rows 16-byte aligned).
struct MapExtent {
  std::int64_t base = 0, height = 0, width = 0;
  std::int64_t images = 1, image_width = 1;  ///< an image map's (a matrix is one image one wide)
  bool encodable = false;
  std::string why;  ///< why not, when it is not
};

/// The launch's arguments by parameter index (a tensor view or a scalar, the other one unset),
/// and the extents of the kernel's tensor maps.
struct Bindings {
  std::vector<TensorView> tensors;
  std::vector<const Scalar*> scalars;
  std::vector<MapExtent> maps;
};

/// Thrown by exit: unwinds the strand whose threads all ended.
struct StrandExit {};

/// Holds the per-thread values and threadgroup memory of one group; reused group after group.
/// Tensor accesses are recorded in `shadow`, shared by the groups the runner runs.
class GroupRunner {
 public:
  GroupRunner(const Program& program, const Bindings& bindings, const Grid& grid,
              const SimOptions& options, TensorShadow& shadow);
  ~GroupRunner();
  GroupRunner(const GroupRunner&) = delete;
  GroupRunner& operator=(const GroupRunner&) = delete;

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
    std::int64_t panel = 0;  ///< a row-major B's: the elements between its panels
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

  // tensor_copies.cpp
  /// One mbarrier (two words of a u32 allocation): its arrivals a phase, the arrivals and
  /// transaction bytes its current phase still waits for, and the phases completed.
  struct Mbarrier {
    bool live = false;  ///< initialized and not invalidated
    std::uint32_t count = 0, arrivals = 0, phases = 0;
    std::int64_t bytes = 0;
    std::uint32_t copied = 0;      ///< 1 + the phase of the latest copy.tensor into it, or 0
    std::uint32_t observed = 0;    ///< the most phases any thread has waited for
    std::uint32_t copy_instr = 0;  ///< the latest copy.tensor into it
  };
  /// Which TMA copy last wrote a shared element: 1 + its mbarrier, and 1 + the phase it completes
  /// (0, 0: a thread's write, or none).
  struct CopyTag {
    std::uint32_t barrier = 0, phase = 0;
  };
  /// mbar.init, expect, arrive, inval; mbar.wait passes, or suspends the strand until it can.
  void mbarrier(const Instr& in, Active active);
  /// copy.tensor: the whole box (zeros outside the matrix) lands at once, tagged with the
  /// mbarrier phase it completes; a thread reads it only once it has waited for that phase.
  void copy_tensor(const Instr& in, Active active);
  /// The mbarrier at element `index` (a u32 value row) of allocation `alloc` for `thread`,
  /// bounds-checked; its id indexes mbarriers_.
  std::uint32_t barrier_id(const Instr& in, int alloc, std::uint32_t row, std::uint32_t thread);
  /// "mbarrier 2 of 'bars'" for id `b`.
  std::string barrier_name(std::uint32_t b) const;
  /// Whether every thread of `active` may pass mbar.wait `in` now.
  bool wait_passes(const Instr& in, Active active);
  /// Counts one arrival by `thread` at `in` on mbarrier `b` (and `bytes` more transaction bytes it
  /// expects); an arrival its phase does not miss is reported.
  void arrive(const Instr& in, std::uint32_t thread, std::uint32_t b, std::int64_t bytes);
  /// Completes mbarrier `b`'s phase when no arrival and no byte is missing.
  void complete_if_done(std::uint32_t b);
  /// Reports access `in` of a shared element a TMA copy wrote, by a thread that has not waited for
  /// the phase that copy completes.
  void check_copy_observed(const Instr& in, std::uint32_t thread, int alloc, std::uint32_t index,
                           Access access);
  /// Reports a TMA copy no thread waited for when the group ends (it may still be landing).
  void check_tensor_copies_waited();

  // strands.cpp
  /// One side of a branch run concurrently with the other: a host thread that runs only in its
  /// turn.
  struct Strand {
    enum class State : std::uint8_t { Runnable, Waiting, Joining, Done };
    State state = State::Runnable;
    std::vector<std::vector<std::uint32_t>> masks;  ///< its own active lists, two per depth
    std::vector<std::uint32_t> threads;             ///< the threads it runs
    const Instr* wait = nullptr;                    ///< Waiting: the mbar.wait
    std::vector<std::uint32_t> waiters;             ///< and the threads at it
    std::size_t parent = 0;
    int children = 0;  ///< Joining: strands still running
    std::thread host;
  };
  /// if: runs the two sides as strands (Instr::concurrent, and both run threads).
  void run_concurrently(const Instr& in, Active then_threads, Active else_threads,
                        std::uint32_t depth);
  /// A strand's host thread: waits for its turn, runs its block, hands over when done.
  void strand_main(std::size_t id, Range block, std::uint32_t depth);
  /// The next strand to run after the current one, or -1: a runnable one, or a waiting one whose
  /// wait now passes (and, when `any_waiting`, any waiting one, which reports its hang).
  int next_strand(bool any_waiting);
  /// Hands the turn to strand `next` and waits until it comes back to the current one.
  void hand_over(int next);
  /// Suspends the current strand at mbar.wait `in` until every thread of `active` may pass; a
  /// hang finding when no strand can run.
  void wait_for_phase(const Instr& in, Active active);
  /// What mbar.wait `in` of `thread` still waits for, and what every other waiting strand does.
  std::string hang_state(const Instr& in, std::uint32_t thread);
  /// After a phase completes: a strand waiting for it runs now.
  void wake_waiters();
  /// exit: the threads of the current strand end (all of them: a whole branch exits).
  [[noreturn]] void exit_threads(const Instr& in, Active active);
  /// The threads of `active` that have not exited, in `into`.
  Active live_threads(Active active, std::vector<std::uint32_t>& into) const;

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
  /// barrier.simdgroup: every lane of each simdgroup that reaches it (a DivergentSimdgroup
  /// finding otherwise); its lanes' shared-memory accesses before it never race with each
  /// other's after it (other simdgroups' still do).
  void simdgroup_barrier(const Instr& in, Active active);
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
  std::vector<std::vector<std::uint32_t>>* masks_ = nullptr;  // the running strand's: two per
                                                              // nesting depth
  std::vector<std::vector<PendingCopy>> open_copies_;         ///< per thread: not yet committed
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
  std::uint32_t exits_ = 0;     ///< threads that ran exit
  std::uint64_t trips_ = 0;
  ir::TurnStep turn_ = ir::TurnStep::Pass;  ///< the group's last wg.turn step
  bool turns_begun_ = false;
  bool woke_ = false;      ///< a phase completed during the current op
  bool aborting_ = false;  ///< a strand failed: the others unwind
  const Instr* last_turn_ = nullptr;

  std::vector<int> barrier_base_;                ///< per allocation: its first mbarrier's id, or -1
  std::vector<Mbarrier> mbarriers_;              ///< by id
  std::vector<std::uint32_t> observed_;          ///< per thread and mbarrier: phases it waited for
  std::vector<std::vector<CopyTag>> copy_tags_;  ///< per allocation copy.tensor writes: per element
  std::vector<std::uint8_t> exited_;             ///< per thread: ran exit
  std::vector<std::unique_ptr<Strand>> strands_;  ///< [0]: the group's own run
  std::size_t current_ = 0;                       ///< the strand running
  std::mutex turn_mutex_;
  std::condition_variable turn_changed_;
  std::exception_ptr strand_failure_;  ///< the first finding of a strand, rethrown by the group
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
