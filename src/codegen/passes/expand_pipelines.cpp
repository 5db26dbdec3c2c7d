/// expand_pipelines: a pipeline of S stages over steps p = start, start + step, … < end becomes
///
///   for s in 0 … S-2:  if (start + s·step < end) load(start + s·step, slot s); commit  (a loop)
///   for p:             wait until S-2 groups remain; barrier
///                      compute(p, slot i % S)            (i = (p - start) / step)
///                      if (p + (S-1)·step < end) load(p + (S-1)·step, slot (i + S-1) % S); commit
///   barrier
///
/// The barrier after the wait serves twice: every thread's copies of step i have landed, and
/// every simdgroup is done with slot (i - 1) % S, which this step's load overwrites. The compute
/// comes first so that its shared reads and products are issued before the load's address
/// arithmetic (a load's shared writes would otherwise order the compute's reads after them),
/// except when the loads run one step ahead (two stages): the load then comes first, or the
/// next step's copies would only start once this step's compute is done. With
/// one stage the loop loads, waits and computes in turn, a barrier before the load and after the
/// wait. When the compute block has warpgroup products (wg.mma, which read shared memory through
/// the asynchronous proxy), each thread also fences its landed copies for that proxy
/// (fence.proxy.async) between the wait and the barrier.
///
/// A pipeline with a lag L (its compute leaves products reading its slot for L more steps) runs,
/// on a target whose products are asynchronous (sm_90a), with loads D = S-1-L steps ahead instead
/// of S-1: the prologue starts steps 0 … D-1, step i waits until D-1 groups remain and then loads
/// step i + D into slot (i + D) % S, the slot of step i-1-L, whose products every simdgroup has
/// waited for before the barrier. Elsewhere products are synchronous and L is 0.
///
/// A pipeline whose load block still holds tile copies (copy.tile; lower_tile_copies leaves
/// them only on a target with tensor maps, sm_90a) runs them as TMA copies on a ring of S
/// mbarriers, one a slot, issued by the group's first thread (the leader):
///
///   if leader: mbar.init @bars[s], 1 for every slot;  barrier
///   prologue:  if (step < end) { if leader { mbar.expect @bars[slot], B; copy.tensor … } }
///   for p:     mbar.wait @bars[i % S], (i / S) & 1;  barrier;  compute(p, i % S)
///              if (p + D·step < end) { if leader { mbar.expect …; copy.tensor … } }
///   barrier;   if leader: mbar.inval @bars[s] for every slot
///
/// With one stage (D = 0) a step instead fills its own slot once every thread is done with it:
/// `barrier; if leader { mbar.expect …; copy.tensor … }; mbar.wait …; compute`.
/// B is the bytes of the block's boxes (a box partly outside its matrix still lands whole,
/// zero-filled). The slot a step refills is the one the barrier after the wait has freed, as
/// above; the copies write through the asynchronous proxy, so no proxy fence is needed.
///
/// A specialized pipeline (consumers C > 0: threads 0 … C-1 compute, the rest load) runs there
/// without group barriers, on two rings of S mbarriers, `full` (a slot's copies landed) and
/// `empty` (every consumer simdgroup is done with a slot):
///
///   if leader: init full[s], 1 and empty[s], C / 32 for every slot;  barrier
///   if simdgroup >= C / 32:                          (the producer)
///     wg.registers dec R_p
///     if its first thread: for p (step i): mbar.wait empty[i % S], (i / S & 1) ^ 1
///                                          mbar.expect full[i % S], B; copy.tensor …
///     exit
///   else:                                            (the consumers)
///     wg.registers inc R_c
///     for p (step i): mbar.wait full[i % S], i / S & 1;  compute(p, i % S)
///                     if i >= L: mbar.arrive empty[(i - L) % S]
///   barrier;  if leader: mbar.inval every barrier
///
/// A slot's first fill waits for the phase before the barrier's first, which counts as done.
/// With a lag L the compute of step i leaves step i-L's products done (it waits for all but L),
/// so that is the slot it frees. R_p and R_c rebalance the registers of a group of exactly T
/// threads compiled for R = 65536 / (T·N) each (N the occupancy, made 1 where it was left to the
/// compiler, so that ptxas allocates all R and the group's pool holds them): the producer keeps
/// 40, the consumers share the rest (at most 256); without an exact group size they stay as
/// compiled. A group barrier in the
/// compute block is refused (the producer never reaches it; barrier.among C, the consumers'
/// own, is what it may hold), and so is a second run (a specialized
/// pipeline in a loop, or after another one). The producer exits once its copies are issued (they
/// land on their own), so none of the consumers' registers stays live in it and the barrier after
/// the loop waits for the consumers alone. On every other target a specialized pipeline expands as
/// above with the compute block in `if simdgroup < C / 32`, and the producer's threads go on after
/// it: code after the pipeline guards what only the consumers do.
#include "iron/codegen/passes/expand_pipelines.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "iron/codegen/passes/lower_tile_copies.hpp"
#include "iron/core/builder.hpp"
#include "iron/core/error.hpp"

namespace iron::codegen {
namespace {

using ir::Builder;
using ir::OpKind;
using ir::ValueId;

/// The lanes of a simdgroup on every target (a CUDA warp; Apple GPUs' simdgroups).
constexpr std::uint32_t kSimdgroupWidth = 32;
/// The registers a producer warpgroup keeps (it only issues copies); and a thread's most.
constexpr std::int64_t kProducerRegisters = 40;
constexpr std::int64_t kRegisterFile = 65536;

// layout_shared_memory's alignments: 16 bytes, 1024 for a swizzled allocation on sm_90a.
constexpr std::uint64_t kAlignment = 16;
constexpr std::uint64_t kSwizzleAlignment = 1024;

/// The bytes of `a` (for a ring, of one stage) in 16-byte units.
std::uint64_t aligned_bytes(const ir::SharedAlloc& a) {
  return (std::uint64_t{a.size} * dtype_size(a.dtype) + kAlignment - 1) / kAlignment * kAlignment;
}

/// The most bytes the layout may leave before `a`: on sm_90a, the gap to the 1024-byte boundary
/// of a swizzled allocation (once an allocation, however many stages a ring has).
std::uint64_t alignment_gap(const ir::SharedAlloc& a, const TargetProfile& target) {
  return target.mma == MmaStrategy::Wgmma && a.swizzle != 0 ? kSwizzleAlignment - kAlignment : 0;
}

bool has_warpgroup_products(const ir::Block& block) {
  return std::any_of(block.ops.begin(), block.ops.end(), [](const ir::Op& op) {
    return op.kind == OpKind::WgMma ||
           std::any_of(op.blocks.begin(), op.blocks.end(), has_warpgroup_products);
  });
}

/// The tensor map of every tile copy left in a pipeline's load block, in program order.
std::vector<ir::TensorMap> tensor_maps_in_order(const ir::Kernel& kernel) {
  std::vector<ir::TensorMap> maps;
  ir::walk(kernel.body, [&](const ir::Op& op) {
    if (op.kind != OpKind::Pipeline) return;
    for (const ir::Op& copy : op.blocks[0].ops) {
      if (copy.kind != OpKind::CopyTile) continue;
      auto map = tile_tensor_map(kernel, copy);
      if (!map) {
        throw Error(
            fmt::format("kernel {}: a tile copy at {}:{} reached expand_pipelines without "
                        "a tensor map (run lower_tile_copies first)",
                        kernel.name, copy.loc.file, copy.loc.line));
      }
      maps.push_back(std::move(*map));
    }
  });
  return maps;
}

void find_pipelines(const ir::Block& block, std::vector<const ir::Op*>& out) {
  for (const ir::Op& op : block.ops) {
    if (op.kind == OpKind::Pipeline) out.push_back(&op);
    for (const ir::Block& b : op.blocks) find_pipelines(b, out);
  }
}

class Expander {
 public:
  Expander(ir::Kernel& kernel, std::uint32_t stages, bool async_products)
      : kernel_(kernel),
        stages_(stages),
        async_products_(async_products),
        maps_(tensor_maps_in_order(kernel)) {}

  void block(ir::Block& b) {
    std::vector<ir::Op> out;
    out.reserve(b.ops.size());
    for (ir::Op& op : b.ops) {
      if (op.kind == OpKind::Pipeline) {
        expand(op, out);
        continue;
      }
      loops_ += op.kind == OpKind::For ? 1 : 0;
      for (ir::Block& inner : op.blocks) block(inner);
      loops_ -= op.kind == OpKind::For ? 1 : 0;
      out.push_back(std::move(op));
    }
    b.ops = std::move(out);
  }

 private:
  /// A copy of pipeline block `which` of `pipe` with its step and slot read as `step`, `slot`.
  std::vector<ir::Op> stage_block(const ir::Op& pipe, std::size_t which, ValueId step,
                                  ValueId slot) {
    std::vector<ir::Op> ops;
    Builder b(kernel_, ops);
    std::unordered_map<ValueId, ValueId> renamed;
    for (const ir::Op& op : pipe.blocks[which].ops) {
      if (op.kind == OpKind::PipelineIndex) {
        renamed[op.result] = op.axis == 1 ? slot : step;
      } else {
        b.copy(op, renamed);
      }
    }
    return ops;
  }

  /// The compute block of step `step` in `slot`: only in the consumers' simdgroups when the
  /// pipeline has some.
  void compute_block(Builder& b, std::vector<ir::Op>& out, const ir::Op& pipe, ValueId step,
                     ValueId slot) {
    std::vector<ir::Op> compute = stage_block(pipe, 1, step, slot);
    if (pipe.consumers == 0) {
      for (ir::Op& op : compute) b.insert(std::move(op));
      return;
    }
    b.branch(consumer_simdgroups(b, pipe, OpKind::Lt));
    out.back().blocks[0].ops = std::move(compute);
  }

  /// The consumers' simdgroups: C / 32.
  static std::uint32_t consumer_count(const ir::Op& pipe) {
    return pipe.consumers / kSimdgroupWidth;
  }

  /// `simdgroup CMP C / 32`: Lt the consumers, Ge the producer.
  static ValueId consumer_simdgroups(Builder& b, const ir::Op& pipe, OpKind cmp) {
    const ValueId count = b.constant(DType::U32, consumer_count(pipe));
    return b.make(cmp, DType::Bool, {b.builtin(ir::Builtin::Simdgroup), count}).result;
  }

  /// `if (step < end) load(step, slot)`.
  void guarded_load(Builder& b, std::vector<ir::Op>& out, const ir::Op& pipe, ValueId step,
                    ValueId slot) {
    const ValueId inside = b.make(OpKind::Lt, DType::Bool, {step, pipe.args[1]}).result;
    std::vector<ir::Op> load = stage_block(pipe, 0, step, slot);
    b.branch(inside);
    out.back().blocks[0].ops = std::move(load);
  }

  static void commit(Builder& b) { b.make(OpKind::AsyncCommit, DType::U32); }
  /// Waits until `pending` copy groups remain; fences the landed copies for the asynchronous
  /// proxy when `proxy` (the compute reads them by warpgroup products).
  static void wait(Builder& b, std::uint32_t pending, bool proxy) {
    b.make(OpKind::AsyncWait, DType::U32).ivalue = pending;
    if (proxy) b.make(OpKind::FenceProxyAsync, DType::U32);
  }

  /// The steps whose loads are in flight: S-1 less the pipeline's lag where products are
  /// asynchronous.
  std::uint32_t steps_ahead(const ir::Op& pipe) const {
    const std::uint32_t lag = async_products_ ? pipe.axis : 0;
    if (lag != 0 && lag + 2 > stages_) {
      throw Error(
          fmt::format("kernel {}: a pipeline with lag {} needs {} stages, but the target's "
                      "shared memory holds {}",
                      kernel_.name, lag, lag + 2, stages_));
    }
    return stages_ - 1 - lag;
  }

  /// The load block of `step` into `slot` split in two: its other ops, into `rest`, and its tile
  /// copies, into `issued`, as one mbar.expect of their bytes followed by TMA copies completing
  /// mbarrier `slot` of `bars`.
  void split_tensor_load(const ir::Op& pipe, ValueId step, ValueId slot, int bars,
                         const std::vector<int>& maps, Builder& rest, std::vector<ir::Op>& issued) {
    std::vector<ir::Op> copies;
    std::uint64_t bytes = 0;
    for (ir::Op& op : stage_block(pipe, 0, step, slot)) {
      if (op.kind != OpKind::CopyTile) {
        rest.insert(std::move(op));
        continue;
      }
      bytes += std::uint64_t{op.fragment.rows} * op.fragment.cols * dtype_size(op.type);
      Builder c(kernel_, copies);
      c.at(op.loc);
      std::vector<ValueId> coordinates = {op.args[0], op.args[4], op.args[5], slot};
      const bool image = op.ivalue != 0;  // an image copy: its image and first pixel column too
      if (image) coordinates.insert(coordinates.end(), {op.args[8], op.args[9]});
      ir::Op& copy = c.make(OpKind::CopyTensor, op.type, std::move(coordinates));
      copy.axis = image ? 1 : 0;
      copy.shared = op.shared;
      copy.shared_b = bars;
      copy.ivalue = maps.at(copies.size() - 1);
    }
    Builder e(kernel_, issued);
    e.at(pipe.loc);
    ir::Op& expect = e.make(OpKind::MbarExpect, DType::U32, {slot});
    expect.shared = bars;
    expect.ivalue = static_cast<std::int64_t>(bytes);
    for (ir::Op& op : copies) issued.push_back(std::move(op));
  }

  /// `if (step < end) load(step, slot)` with the load's tile copies issued by the leader
  /// (split_tensor_load).
  void tensor_load(Builder& b, std::vector<ir::Op>& out, const ir::Op& pipe, ValueId step,
                   ValueId slot, int bars, ValueId leader, const std::vector<int>& maps) {
    std::vector<ir::Op> inside;
    Builder l(kernel_, inside);
    l.at(pipe.loc);
    std::vector<ir::Op> issued;
    split_tensor_load(pipe, step, slot, bars, maps, l, issued);
    l.branch(leader);
    inside.back().blocks[0].ops = std::move(issued);
    const ValueId within = b.make(OpKind::Lt, DType::Bool, {step, pipe.args[1]}).result;
    b.branch(within);
    out.back().blocks[0].ops = std::move(inside);
  }

  /// The load block of `step` into `slot`, every op of it run by the calling thread
  /// (split_tensor_load).
  void issue_tensor_load(Builder& b, const ir::Op& pipe, ValueId step, ValueId slot, int bars,
                         const std::vector<int>& maps) {
    std::vector<ir::Op> issued;
    split_tensor_load(pipe, step, slot, bars, maps, b, issued);
    for (ir::Op& op : issued) b.insert(std::move(op));
  }

  /// The group size a literal `exactly` rule fixes, else 0.
  std::int64_t exact_group_size() const {
    for (const ir::SizeRule& r : kernel_.dispatch.group_size_rules) {
      if (r.kind == ir::SizeRule::Kind::Exactly && r.constexpr_name.empty()) return r.value;
    }
    return 0;
  }

  /// The registers each side of a specialized pipeline sets ({producer, consumers}), or none
  /// when the group size is not fixed or the consumers would gain nothing.
  std::optional<std::pair<std::int64_t, std::int64_t>> register_budgets(const ir::Op& pipe) const {
    const std::int64_t threads = exact_group_size();
    const std::int64_t consumers = pipe.consumers;
    if (threads <= consumers || threads % ir::kWarpgroupThreads != 0) return std::nullopt;
    const std::int64_t groups = std::max<std::uint32_t>(kernel_.dispatch.occupancy, 1);
    const std::int64_t compiled = std::min<std::int64_t>(kRegisterFile / (threads * groups) / 8 * 8,
                                                         ir::kMaxRegisterBudget - 8);
    const std::int64_t raised = std::min<std::int64_t>(
        (compiled * threads - kProducerRegisters * (threads - consumers)) / consumers / 8 * 8,
        ir::kMaxRegisterBudget);
    if (compiled <= kProducerRegisters || raised <= compiled) return std::nullopt;
    return std::pair{kProducerRegisters, raised};
  }

  /// A specialized pipeline's producer exits once its copies are issued: refused inside a loop,
  /// and after another one (even one in the other branch of an if), since no producer would
  /// load a second run.
  void refuse_second_run(const ir::Op& pipe) {
    const char* why = loops_ > 0         ? "inside a loop"
                      : specialized_ > 0 ? "after another one"
                                         : nullptr;
    ++specialized_;
    if (why == nullptr) return;
    throw Error(
        fmt::format("kernel {}: the specialized pipeline at {}:{} runs {}, but its producer "
                    "exits after one run on a target with tensor maps",
                    kernel_.name, pipe.loc.file, pipe.loc.line, why));
  }

  /// A warp-specialized pipeline of TMA copies (the file comment).
  void expand_specialized(const ir::Op& pipe, std::vector<ir::Op>& out) {
    const DType u32 = DType::U32;
    ir::walk(pipe.blocks[1], [&](const ir::Op& op) {
      if (op.kind == OpKind::BarrierAmong && op.ivalue == pipe.consumers) return;
      if (op.kind != OpKind::Barrier && op.kind != OpKind::BarrierAmong) return;
      throw Error(fmt::format(
          "kernel {}: a barrier{} at {}:{} in the compute block of a specialized pipeline ({}:{}): "
          "its producer never reaches it (barrier_among({}) joins its consumers alone)",
          kernel_.name, op.kind == OpKind::BarrierAmong ? fmt::format(" among {}", op.ivalue) : "",
          op.loc.file, op.loc.line, pipe.loc.file, pipe.loc.line, pipe.consumers));
    });
    steps_ahead(pipe);  // the lag's stages, as everywhere
    std::vector<int> maps;
    for (const ir::Op& op : pipe.blocks[0].ops) {
      if (op.kind == OpKind::CopyTile) maps.push_back(map_index(maps_.at(next_map_++)));
    }
    const int full = static_cast<int>(kernel_.shared.size());
    kernel_.shared.push_back({fresh_barrier_name(), u32, 2 * stages_});
    const int empty = static_cast<int>(kernel_.shared.size());
    kernel_.shared.push_back({fresh_barrier_name(), u32, 2 * stages_});
    Builder b(kernel_, out);
    b.at(pipe.loc);
    const ValueId zero = b.constant(u32, 0);
    const ValueId first_lane =
        b.make(OpKind::Eq, DType::Bool, {b.builtin(ir::Builtin::Lane), zero}).result;
    const ValueId leader =
        b.make(OpKind::And, DType::Bool,
               {b.make(OpKind::Eq, DType::Bool, {b.builtin(ir::Builtin::Simdgroup), zero}).result,
                first_lane})
            .result;
    every_barrier(b, out, OpKind::MbarInit, full, leader, pipe.loc, 1);
    every_barrier(b, out, OpKind::MbarInit, empty, leader, pipe.loc, consumer_count(pipe));
    b.make(OpKind::Barrier, u32);
    const auto budgets = register_budgets(pipe);
    // ptxas gives every thread the registers of the launch bound's occupancy only when the bound
    // names it (__launch_bounds__(T, N)); the group's pool must hold what the consumers take.
    if (budgets)
      kernel_.dispatch.occupancy = std::max<std::uint32_t>(kernel_.dispatch.occupancy, 1);
    b.branch(consumer_simdgroups(b, pipe, OpKind::Ge));
    ir::Op& sides = out.back();
    {  // the producer: its first thread issues every step's copies once their slot is free
      std::vector<ir::Op> producer;
      Builder l(kernel_, producer);
      l.at(pipe.loc);
      if (budgets) l.make(OpKind::WgRegisters, u32).ivalue = budgets->first;
      const ValueId issuer =
          l.make(OpKind::And, DType::Bool,
                 {l.make(OpKind::Eq, DType::Bool,
                         {l.builtin(ir::Builtin::Simdgroup), l.constant(u32, consumer_count(pipe))})
                      .result,
                  first_lane})
              .result;
      std::vector<ir::Op> issue;
      Builder c(kernel_, issue);
      c.at(pipe.loc);
      const ValueId p = c.loop(pipe.args[0], pipe.args[1], pipe.args[2], u32).result;
      std::vector<ir::Op> step;
      Builder s(kernel_, step);
      s.at(pipe.loc);
      const auto [slot, round] = ring_position(s, pipe, p);
      const ValueId one = s.constant(u32, 1);
      const ValueId parity =
          s.make(OpKind::Xor, u32, {s.make(OpKind::And, u32, {round, one}).result, one}).result;
      ir::Op& wait = s.make(OpKind::MbarWait, u32, {slot, parity});
      wait.shared = empty;
      issue_tensor_load(s, pipe, p, slot, full, maps);
      issue.back().blocks[0].ops = std::move(step);
      l.branch(issuer);
      producer.back().blocks[0].ops = std::move(issue);
      l.make(OpKind::Exit, u32);
      sides.blocks[0].ops = std::move(producer);
    }
    {  // the consumers: each step waits for its slot, computes, and frees the slot L steps back
      std::vector<ir::Op> consumer;
      Builder l(kernel_, consumer);
      l.at(pipe.loc);
      if (budgets) {
        ir::Op& raise = l.make(OpKind::WgRegisters, u32);
        raise.ivalue = budgets->second;
        raise.axis = 1;
      }
      const ValueId p = l.loop(pipe.args[0], pipe.args[1], pipe.args[2], u32).result;
      std::vector<ir::Op> step;
      Builder s(kernel_, step);
      s.at(pipe.loc);
      const auto [slot, round] = ring_position(s, pipe, p);
      const ValueId parity = s.make(OpKind::And, u32, {round, s.constant(u32, 1)}).result;
      ir::Op& wait = s.make(OpKind::MbarWait, u32, {slot, parity});
      wait.shared = full;
      for (ir::Op& op : stage_block(pipe, 1, p, slot)) s.insert(std::move(op));
      release(s, step, pipe, p, empty);
      consumer.back().blocks[0].ops = std::move(step);
      sides.blocks[1].ops = std::move(consumer);
    }
    b.make(OpKind::Barrier, u32);  // every wait is done: the barriers may go
    every_barrier(b, out, OpKind::MbarInval, full, leader, pipe.loc);
    every_barrier(b, out, OpKind::MbarInval, empty, leader, pipe.loc);
  }

  /// The slot and the round of the ring that step `p` uses: i % S and i / S, i = (p - start) /
  /// step.
  std::pair<ValueId, ValueId> ring_position(Builder& b, const ir::Op& pipe, ValueId p) const {
    const DType u32 = DType::U32;
    const ValueId since = b.make(OpKind::Sub, u32, {p, pipe.args[0]}).result;
    const ValueId i = b.make(OpKind::Div, u32, {since, pipe.args[2]}).result;
    const ValueId ring = b.constant(u32, stages_);
    return {b.make(OpKind::Rem, u32, {i, ring}).result, b.make(OpKind::Div, u32, {i, ring}).result};
  }

  /// The consumers' `mbar.arrive @empty[slot of step i - L]` after step p's compute (from step L
  /// on when the pipeline has a lag L).
  void release(Builder& b, std::vector<ir::Op>& out, const ir::Op& pipe, ValueId p, int empty) {
    const DType u32 = DType::U32;
    const std::uint32_t lag = async_products_ ? pipe.axis : 0;
    const ValueId i =
        b.make(OpKind::Div, u32, {b.make(OpKind::Sub, u32, {p, pipe.args[0]}).result, pipe.args[2]})
            .result;
    if (lag == 0) {
      const ValueId slot = b.make(OpKind::Rem, u32, {i, b.constant(u32, stages_)}).result;
      b.make(OpKind::MbarArrive, u32, {slot}).shared = empty;
      return;
    }
    const ValueId lagged = b.constant(u32, lag);
    b.branch(b.make(OpKind::Ge, DType::Bool, {i, lagged}).result);
    std::vector<ir::Op> arrive;
    Builder a(kernel_, arrive);
    a.at(pipe.loc);
    const ValueId back = a.make(OpKind::Sub, u32, {i, lagged}).result;
    const ValueId slot = a.make(OpKind::Rem, u32, {back, a.constant(u32, stages_)}).result;
    a.make(OpKind::MbarArrive, u32, {slot}).shared = empty;
    out.back().blocks[0].ops = std::move(arrive);
  }

  /// The index of `map` in the kernel's tensor maps, added when new.
  int map_index(const ir::TensorMap& map) {
    auto& maps = kernel_.tensor_maps;
    const auto it = std::find(maps.begin(), maps.end(), map);
    if (it != maps.end()) return static_cast<int>(it - maps.begin());
    maps.push_back(map);
    return static_cast<int>(maps.size() - 1);
  }

  /// `if leader { mbar.KIND @bars[s] (, count) for each slot s }`.
  void every_barrier(Builder& b, std::vector<ir::Op>& out, OpKind kind, int bars, ValueId leader,
                     const ir::SourceLoc& loc, std::uint32_t count = 1) {
    std::vector<ir::Op> ops;
    Builder l(kernel_, ops);
    l.at(loc);
    for (std::uint32_t s = 0; s < stages_; ++s) {
      ir::Op& op = l.make(kind, DType::U32, {l.constant(DType::U32, s)});
      op.shared = bars;
      op.ivalue = kind == OpKind::MbarInit ? count : 0;
    }
    b.branch(leader);
    out.back().blocks[0].ops = std::move(ops);
  }

  /// A pipeline of TMA copies on an mbarrier ring (the file comment).
  void expand_tensor_copies(const ir::Op& pipe, std::vector<ir::Op>& out) {
    const DType u32 = DType::U32;
    const ValueId start = pipe.args[0];
    const ValueId step = pipe.args[2];
    const std::uint32_t ahead = steps_ahead(pipe);
    std::vector<int> maps;
    for (const ir::Op& op : pipe.blocks[0].ops) {
      if (op.kind == OpKind::CopyTile) maps.push_back(map_index(maps_.at(next_map_++)));
    }
    const int bars = static_cast<int>(kernel_.shared.size());
    kernel_.shared.push_back({fresh_barrier_name(), u32, 2 * stages_});
    Builder b(kernel_, out);
    b.at(pipe.loc);
    const ValueId zero = b.constant(u32, 0);
    const ValueId leader =
        b.make(OpKind::And, DType::Bool,
               {b.make(OpKind::Eq, DType::Bool, {b.builtin(ir::Builtin::Simdgroup), zero}).result,
                b.make(OpKind::Eq, DType::Bool, {b.builtin(ir::Builtin::Lane), zero}).result})
            .result;
    every_barrier(b, out, OpKind::MbarInit, bars, leader, pipe.loc);
    b.make(OpKind::Barrier, u32);
    if (ahead > 0) {
      std::vector<ir::Op> prologue;
      const ValueId slot = b.loop(zero, b.constant(u32, ahead), b.constant(u32, 1), u32).result;
      Builder l(kernel_, prologue);
      l.at(pipe.loc);
      const ValueId offset = l.make(OpKind::Mul, u32, {slot, step}).result;
      const ValueId first = l.make(OpKind::Add, u32, {start, offset}).result;
      tensor_load(l, prologue, pipe, first, slot, bars, leader, maps);
      out.back().blocks[0].ops = std::move(prologue);
    }
    std::vector<ir::Op> body;
    const ValueId p = b.loop(start, pipe.args[1], step, u32).result;
    {
      Builder l(kernel_, body);
      l.at(pipe.loc);
      const ValueId since = l.make(OpKind::Sub, u32, {p, start}).result;
      const ValueId i = l.make(OpKind::Div, u32, {since, step}).result;
      const ValueId ring = l.constant(u32, stages_);
      const ValueId slot = l.make(OpKind::Rem, u32, {i, ring}).result;
      const ValueId round = l.make(OpKind::Div, u32, {i, ring}).result;
      const ValueId parity = l.make(OpKind::And, u32, {round, l.constant(u32, 1)}).result;
      if (ahead == 0) {  // one stage: each step fills its slot once every thread is done with it
        l.make(OpKind::Barrier, u32);
        tensor_load(l, body, pipe, p, slot, bars, leader, maps);
      }
      ir::Op& wait = l.make(OpKind::MbarWait, u32, {slot, parity});
      wait.shared = bars;
      if (ahead > 0) l.make(OpKind::Barrier, u32);
      compute_block(l, body, pipe, p, slot);
      if (ahead == 0) return finish_tensor_loop(b, out, body, bars, leader, pipe.loc);
      const ValueId skip = l.make(OpKind::Mul, u32, {l.constant(u32, ahead), step}).result;
      const ValueId next = l.make(OpKind::Add, u32, {p, skip}).result;
      const ValueId later = l.make(OpKind::Add, u32, {i, l.constant(u32, ahead)}).result;
      const ValueId next_slot = l.make(OpKind::Rem, u32, {later, ring}).result;
      tensor_load(l, body, pipe, next, next_slot, bars, leader, maps);
    }
    finish_tensor_loop(b, out, body, bars, leader, pipe.loc);
  }

  /// Moves `body` into the steady loop (the last op of `out`), then ends the barriers' use.
  void finish_tensor_loop(Builder& b, std::vector<ir::Op>& out, std::vector<ir::Op>& body, int bars,
                          ValueId leader, const ir::SourceLoc& loc) {
    out.back().blocks[0].ops = std::move(body);
    b.make(OpKind::Barrier, DType::U32);  // every wait is done: the barriers may go
    every_barrier(b, out, OpKind::MbarInval, bars, leader, loc);
  }

  std::string fresh_barrier_name() const {
    for (int n = 0;; ++n) {
      std::string name = fmt::format("mbarriers{}", n);
      if (std::none_of(kernel_.shared.begin(), kernel_.shared.end(),
                       [&](const ir::SharedAlloc& s) { return s.name == name; })) {
        return name;
      }
    }
  }

  void expand(const ir::Op& pipe, std::vector<ir::Op>& out) {
    const std::int64_t threads = exact_group_size();
    if (pipe.consumers != 0 && threads != 0 && threads <= pipe.consumers) {
      throw Error(
          fmt::format("kernel {}: the pipeline at {}:{} has {} consumers, but a group has "
                      "{} threads: none is left to load",
                      kernel_.name, pipe.loc.file, pipe.loc.line, pipe.consumers, threads));
    }
    if (has_tile_copies(pipe.blocks[0])) {
      if (pipe.consumers != 0) {
        refuse_second_run(pipe);
        return expand_specialized(pipe, out);
      }
      return expand_tensor_copies(pipe, out);
    }
    const DType u32 = DType::U32;
    const ValueId start = pipe.args[0];
    const ValueId step = pipe.args[2];
    const std::uint32_t s_count = stages_;
    const bool proxy = has_warpgroup_products(pipe.blocks[1]);
    const std::uint32_t ahead = steps_ahead(pipe);  // steps whose loads are in flight
    Builder b(kernel_, out);
    b.at(pipe.loc);
    // The prologue: a loop over slots 0 … S-2 starts their steps' loads (unroll_loops copies it
    // out when the load block is small; one copy of a large one stays).
    if (s_count >= 2) {
      std::vector<ir::Op> prologue;
      const ValueId zero = b.constant(u32, 0);
      const ValueId one = b.constant(u32, 1);
      const ValueId last = b.constant(u32, ahead);
      const ValueId slot = b.loop(zero, last, one, u32).result;
      {
        Builder l(kernel_, prologue);
        l.at(pipe.loc);
        const ValueId offset = l.make(OpKind::Mul, u32, {slot, step}).result;
        const ValueId first = l.make(OpKind::Add, u32, {start, offset}).result;
        guarded_load(l, prologue, pipe, first, slot);
        commit(l);
      }
      out.back().blocks[0].ops = std::move(prologue);
    }
    // The steady loop, built apart and moved into its For.
    std::vector<ir::Op> body;
    const ValueId p = b.loop(start, pipe.args[1], step, u32).result;
    {
      Builder l(kernel_, body);
      l.at(pipe.loc);
      const ValueId since = l.make(OpKind::Sub, u32, {p, start}).result;
      const ValueId i = l.make(OpKind::Div, u32, {since, step}).result;
      const ValueId ring = l.constant(u32, s_count);
      const ValueId slot = l.make(OpKind::Rem, u32, {i, ring}).result;
      if (s_count >= 2) {
        wait(l, ahead - 1, proxy);
        l.make(OpKind::Barrier, u32);
        const auto load_ahead = [&] {
          const ValueId skip = l.make(OpKind::Mul, u32, {l.constant(u32, ahead), step}).result;
          const ValueId next = l.make(OpKind::Add, u32, {p, skip}).result;
          const ValueId later = l.make(OpKind::Add, u32, {i, l.constant(u32, ahead)}).result;
          const ValueId next_slot = l.make(OpKind::Rem, u32, {later, ring}).result;
          guarded_load(l, body, pipe, next, next_slot);
          commit(l);
        };
        // One step ahead, the next step's copies start before this step's compute, or nothing
        // would be in flight while it runs.
        if (ahead == 1) load_ahead();
        compute_block(l, body, pipe, p, slot);
        if (ahead != 1) load_ahead();
      } else {
        l.make(OpKind::Barrier, u32);
        for (ir::Op& op : stage_block(pipe, 0, p, slot)) l.insert(std::move(op));
        commit(l);
        wait(l, 0, proxy);
        l.make(OpKind::Barrier, u32);
        compute_block(l, body, pipe, p, slot);
      }
    }
    out.back().blocks[0].ops = std::move(body);
    b.make(OpKind::Barrier, u32);  // the rings may be written again after the loop
  }

  ir::Kernel& kernel_;
  std::uint32_t stages_;
  bool async_products_;
  std::vector<ir::TensorMap> maps_;  ///< tensor_maps_in_order
  std::size_t next_map_ = 0;
  int loops_ = 0;        ///< the loops around the op being expanded
  int specialized_ = 0;  ///< the specialized pipelines of tile copies expanded so far
};

}  // namespace

std::uint32_t pipeline_stages(const ir::Kernel& kernel, const TargetProfile& target) {
  std::vector<const ir::Op*> pipelines;
  find_pipelines(kernel.body, pipelines);
  if (pipelines.empty()) return 0;
  std::int64_t asked = ir::kMaxStages;
  for (const ir::Op* p : pipelines) {
    asked = std::min(asked, p->ivalue);
    // Without tile copies (left only for TMA) the loads run as copy groups, whose waits count
    // at most kMaxPendingGroups pending.
    if (!has_tile_copies(p->blocks[0])) asked = std::min(asked, ir::kMaxGroupStages);
  }
  if (!target.async_copies) return 1;
  std::uint64_t fixed = 0;
  std::uint64_t per_stage = 0;
  for (const ir::SharedAlloc& a : kernel.shared) {
    if (a.overlays >= 0) continue;  // in its base's bytes, or counted below
    (a.ring ? per_stage : fixed) += aligned_bytes(a);
    fixed += alignment_gap(a, target);
  }
  // The bytes of the overlays that `stages` stages of their bases do not hold: those take bytes
  // of their own (layout_shared_memory).
  const auto own = [&](std::uint64_t stages) {
    std::uint64_t bytes = 0;
    for (const ir::SharedAlloc& a : kernel.shared) {
      if (a.overlays < 0) continue;
      const ir::SharedAlloc& base = kernel.shared[static_cast<std::size_t>(a.overlays)];
      const std::uint64_t held = std::uint64_t{base.size} * dtype_size(base.dtype) *
                                 (base.ring ? stages : 1);  // as overlay_in_base counts them
      if (std::uint64_t{a.size} * dtype_size(a.dtype) > held) bytes += aligned_bytes(a);
    }
    return bytes;
  };
  // A kernel that asks for several groups a multiprocessor (occupancy) gets its share of it.
  const std::uint64_t budget = target.shared_bytes_for(kernel.dispatch.occupancy);
  auto stages = static_cast<std::uint32_t>(std::max<std::int64_t>(asked, 1));
  while (stages > 1 && fixed + per_stage * stages + own(stages) > budget) {
    --stages;
  }
  return stages;
}

void expand_pipelines(ir::Kernel& kernel, const TargetProfile& target) {
  const std::uint32_t stages = pipeline_stages(kernel, target);
  if (stages == 0) return;
  const bool async_products = target.kind == TargetKind::Cuda && target.mma == MmaStrategy::Wgmma;
  Expander(kernel, stages, async_products).block(kernel.body);
  for (ir::SharedAlloc& a : kernel.shared) {
    if (!a.ring) continue;
    a.size *= stages;
    a.ring = false;
  }
}

}  // namespace iron::codegen
