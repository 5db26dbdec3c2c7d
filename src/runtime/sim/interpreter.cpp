/// The lock-step interpreter: control flow with active-thread lists, leaf, lane-wise and
/// variable ops.
#include "interpreter.hpp"

#include <numeric>

namespace iron::runtime::sim {

GroupRunner::GroupRunner(const Program& program, const Bindings& bindings, const Grid& grid,
                         const SimOptions& options, TensorShadow& shadow)
    : program_(program),
      bindings_(bindings),
      grid_(grid),
      options_(options),
      threads_(static_cast<std::uint32_t>(grid.group_size.volume())),
      shared_(*program.kernel),
      shadow_(shadow),
      report_(program, grid) {
  const Dim3& gs = grid.group_size;
  for (auto& axis : tid_) axis.resize(threads_);
  for (std::uint32_t t = 0; t < threads_; ++t) {
    tid_[0][t] = t % gs.x;
    tid_[1][t] = t / gs.x % gs.y;
    tid_[2][t] = t / (gs.x * gs.y);
  }
  all_.resize(threads_);
  std::iota(all_.begin(), all_.end(), 0u);
  values_.assign(std::size_t{program.rows} * threads_, 0);
  wraps_.assign(values_.size(), 0);
  last_wrap_.resize(threads_);
  strands_.push_back(std::make_unique<Strand>());
  strands_[0]->masks.assign(2 * std::size_t{program.depth}, std::vector<std::uint32_t>(threads_));
  strands_[0]->threads = all_;
  masks_ = &strands_[0]->masks;
  open_copies_.resize(threads_);
  committed_copies_.resize(threads_);
  const std::uint32_t simdgroups = (threads_ + 31) / 32;
  open_products_.resize(simdgroups);
  committed_products_.resize(simdgroups);
  proxy_fences_.assign(threads_, 0);
  exited_.assign(threads_, 0);
  barrier_base_.assign(program.kernel->shared.size(), -1);
  copy_tags_.resize(program.kernel->shared.size());
  std::uint32_t barriers = 0;
  for (const Instr& in : program.code) {
    const int alloc = in.exec == Exec::Mbarrier     ? in.buffer
                      : in.exec == Exec::CopyTensor ? in.source
                                                    : -1;
    if (in.exec == Exec::CopyTensor) copy_tags_[in.buffer].resize(shared_.size(in.buffer));
    if (alloc < 0 || barrier_base_[alloc] >= 0) continue;
    barrier_base_[alloc] = static_cast<int>(barriers);
    barriers += shared_.size(alloc) / 2;
  }
  mbarriers_.resize(barriers);
  observed_.resize(std::size_t{barriers} * threads_);
}

void GroupRunner::run(const Dim3& group, std::uint64_t linear) {
  group_ = group;
  report_.set_group(group);
  first_id_ = static_cast<std::uint32_t>(1 + linear * threads_);
  ++interval_;
  trips_ = 0;
  shared_.start_group();
  for (std::uint32_t t = 0; t < threads_; ++t) {
    open_copies_[t].clear();
    committed_copies_[t].clear();
  }
  for (auto& open : open_products_) open.clear();
  for (auto& committed : committed_products_) committed.clear();
  pending_products_ = 0;
  turn_ = ir::TurnStep::Pass;
  turns_begun_ = false;
  std::fill(exited_.begin(), exited_.end(), 0);
  exits_ = 0;
  std::fill(mbarriers_.begin(), mbarriers_.end(), Mbarrier{});
  std::fill(observed_.begin(), observed_.end(), 0);
  for (auto& tags : copy_tags_) std::fill(tags.begin(), tags.end(), CopyTag{});
  strands_.resize(1);
  current_ = 0;
  try {
    exec(program_.main, all_, 0);
  } catch (const StrandExit&) {  // every thread ran exit
  }
  if (turn_ == ir::TurnStep::Wait) {
    throw report_.turn_out_of_order(*last_turn_, "the group ends inside a turn, never passed");
  }
  check_copies_landed();
  check_products_waited();
  check_tensor_copies_waited();
}

void GroupRunner::exec(Range block, Active active, std::uint32_t depth) {
  std::vector<std::uint32_t> live;  // the threads left once some have run exit
  std::uint32_t exits = exits_;
  for (std::uint32_t i = block.begin; i < block.end; ++i) {
    exec_op(program_.code[i], active, depth);
    if (exits_ == exits) continue;
    exits = exits_;
    active = live_threads(active, live);
    if (active.empty()) return;
  }
}

void GroupRunner::exec_op(const Instr& in, Active active, std::uint32_t depth) {
  switch (in.exec) {
    case Exec::Constant: {
      Slot* r = row(in.result);
      for (std::uint32_t t : active) r[t] = in.imm;
      return;
    }
    case Exec::ConstexprRef:
      return run_constexpr(in, active);
    case Exec::Builtin:
      return run_builtin(in, active);
    case Exec::Evaluate:
      return run_evaluate(in, active);
    case Exec::Copy:
      return copy(in, active);
    case Exec::VarStore:
      return var_store(in, active);
    case Exec::RegsDecl:
      return regs_decl(in, active);
    case Exec::RegsLoad:
    case Exec::RegsStore:
      return regs_access(in, active);
    case Exec::FragDecl:
      check_products_done(in, active);
      return frag_decl(in, active);
    case Exec::FragLoad:
    case Exec::FragStore:
      check_products_done(in, active);
      return frag_access(in, active);
    case Exec::FragMma:
      check_products_done(in, active);
      return frag_mma(in, active);
    case Exec::FragGet:
    case Exec::FragSet:
    case Exec::FragCoord:
      check_products_done(in, active);
      return frag_element(in, active);
    case Exec::FragRowValue:
      check_products_done(in, active);
      return frag_row_value(in, active);
    case Exec::FragReduce:
      check_products_done(in, active);
      return frag_row_reduce(in, active);
    case Exec::FragConvert:
      check_products_done(in, active);
      return frag_convert(in, active);
    case Exec::WgMma:
      return wg_mma(in, active);
    case Exec::WgCommit:
      return wg_commit(active);
    case Exec::WgWait:
      return wg_wait(in, active);
    case Exec::ProxyFence:
      for (std::uint32_t t : active) ++proxy_fences_[t];
      return;
    case Exec::CopyTensor:
      copy_tensor(in, active);
      return wake_waiters();
    case Exec::Mbarrier:
      mbarrier(in, active);
      return wake_waiters();
    case Exec::Exit:
      return exit_threads(in, active);
    case Exec::NoEffect:
      return;
    case Exec::CopyAsync:
      return copy_async(in, active);
    case Exec::AsyncCommit:
      return async_commit(active);
    case Exec::AsyncWait:
      return async_wait(in, active);
    case Exec::Load:
      return load(in, active);
    case Exec::Store:
      return store(in, active);
    case Exec::Atomic:
      return atomic(in, active);
    case Exec::Barrier:
      return barrier(in, active);
    case Exec::BarrierAmong:
      return barrier_among(in, active);
    case Exec::SimdgroupBarrier:
      return simdgroup_barrier(in, active);
    case Exec::Turn:
      return turn(in, active);
    case Exec::Simd:
      return simd(in, active);
    case Exec::Reduce:
      return reduce(in, active);
    case Exec::For:
      return run_for(in, active, depth);
    case Exec::If:
      return run_if(in, active, depth);
  }
}

void GroupRunner::run_for(const Instr& in, Active active, std::uint32_t depth) {
  Slot* counter = row(in.result);
  const Slot* start = row(in.args[0]);
  const Slot* end = row(in.args[1]);
  const Slot* step = row(in.args[2]);
  const bool is_signed = is_signed_int(in.type);
  auto below_end = [&](std::uint32_t t) {
    return is_signed ? static_cast<std::int32_t>(counter[t]) < static_cast<std::int32_t>(end[t])
                     : counter[t] < end[t];
  };
  std::uint32_t* looping = (*masks_)[2 * std::size_t{depth}].data();
  if (in.exact) {  // the counter derives from its start and its step
    std::uint32_t* mark = wraps(in.result);
    const std::uint32_t* from_start = wraps(in.args[0]);
    const std::uint32_t* from_step = wraps(in.args[2]);
    for (std::uint32_t t : active) mark[t] = from_start[t] != 0 ? from_start[t] : from_step[t];
  }
  std::size_t n = 0;
  for (std::uint32_t t : active) {
    counter[t] = start[t];
    if (!below_end(t)) continue;
    if (step[t] == 0) throw report_.zero_step(in, t, start[t], end[t]);
    looping[n++] = t;
  }
  const IntBounds bounds = int_bounds(in.type);
  while (n > 0) {
    if (++trips_ > options_.step_budget) {
      const std::uint32_t t = looping[0];
      throw report_.runaway(in, options_.step_budget, t, counter[t], end[t], step[t]);
    }
    exec(in.body, Active(looping, n), depth + 1);
    std::size_t still = 0;
    for (std::size_t k = 0; k < n; ++k) {
      const std::uint32_t t = looping[k];
      if (in.exact) {
        const std::int64_t next = int_value(counter[t], in.type) + int_value(step[t], in.type);
        if (next < bounds.lo || next > bounds.hi) mark_counter(in, t, counter[t], step[t]);
      }
      counter[t] = ir::wrap_bits(in.type, counter[t] + step[t]);
      if (below_end(t) && exited_[t] == 0) looping[still++] = t;
    }
    n = still;
  }
}

void GroupRunner::run_if(const Instr& in, Active active, std::uint32_t depth) {
  const Slot* cond = row(in.args[0]);
  std::uint32_t* then_threads = (*masks_)[2 * std::size_t{depth}].data();
  std::uint32_t* else_threads = (*masks_)[2 * std::size_t{depth} + 1].data();
  std::size_t n_then = 0;
  std::size_t n_else = 0;
  for (std::uint32_t t : active) {
    if (cond[t] != 0) {
      then_threads[n_then++] = t;
    } else {
      else_threads[n_else++] = t;
    }
  }
  if (in.concurrent && n_then > 0 && n_else > 0) {
    return run_concurrently(in, Active(then_threads, n_then), Active(else_threads, n_else), depth);
  }
  if (n_then > 0) exec(in.body, Active(then_threads, n_then), depth + 1);
  if (n_else > 0) exec(in.other, Active(else_threads, n_else), depth + 1);
}

void GroupRunner::run_constexpr(const Instr& in, Active active) {
  Slot* r = row(in.result);
  const Slot v = scalar_slot(*bindings_.scalars[in.buffer], in.type);
  for (std::uint32_t t : active) r[t] = v;
}

void GroupRunner::run_builtin(const Instr& in, Active active) {
  Slot* r = row(in.result);
  const std::uint32_t size[3] = {grid_.group_size.x, grid_.group_size.y, grid_.group_size.z};
  const std::uint32_t groups[3] = {grid_.groups.x, grid_.groups.y, grid_.groups.z};
  const std::uint32_t group[3] = {group_.x, group_.y, group_.z};
  const std::vector<std::uint32_t>& tid = tid_[in.axis];
  auto per_thread = [&](auto value_of) {
    for (std::uint32_t t : active) r[t] = value_of(t);  // u32, as the verifier requires
  };
  switch (in.builtin) {
    case ir::Builtin::ThreadId:
      return per_thread([&](std::uint32_t t) { return tid[t]; });
    case ir::Builtin::GroupId:
      return per_thread([&](std::uint32_t) { return group[in.axis]; });
    case ir::Builtin::GroupSize:
      return per_thread([&](std::uint32_t) { return size[in.axis]; });
    case ir::Builtin::GridGroups:
      return per_thread([&](std::uint32_t) { return groups[in.axis]; });
    case ir::Builtin::GlobalId:
      return per_thread([&](std::uint32_t t) { return group[in.axis] * size[in.axis] + tid[t]; });
    case ir::Builtin::Lane:
      return per_thread([](std::uint32_t t) { return t % 32; });
    case ir::Builtin::Simdgroup:
      return per_thread([](std::uint32_t t) { return t / 32; });
    case ir::Builtin::SimdgroupCount:
      return per_thread([&](std::uint32_t) { return (threads_ + 31) / 32; });
  }
}

void GroupRunner::run_evaluate(const Instr& in, Active active) {
  if (in.exact) track_wraps(in, active);
  const Slot* operands[3] = {row(in.args[0]), row(in.args[1]), row(in.args[2])};
  if (const auto thread = evaluate_lanes(in, active, row(in.result), operands)) {
    throw report_.division_by_zero(in, *thread);
  }
}

void GroupRunner::copy(const Instr& in, Active active) {
  if (in.exact) track_wraps(in, active);
  Slot* r = row(in.result);
  const Slot* a = row(in.args[0]);
  for (std::uint32_t t : active) r[t] = a[t];
}

void GroupRunner::var_store(const Instr& in, Active active) {
  if (in.exact) track_wraps(in, active);
  Slot* var = row(in.args[0]);
  const Slot* v = row(in.args[1]);
  for (std::uint32_t t : active) var[t] = v[t];
}

void GroupRunner::regs_decl(const Instr& in, Active active) {
  const Slot* init = row(in.args[0]);
  for (std::uint32_t e = 0; e < in.elements; ++e) {
    Slot* element = row(in.result + e);
    for (std::uint32_t t : active) element[t] = init[t];
  }
}

void GroupRunner::regs_access(const Instr& in, Active active) {
  const Slot* index = row(in.args[1]);
  const bool is_store = in.exec == Exec::RegsStore;
  const Slot* value = is_store ? row(in.args[2]) : nullptr;
  Slot* result = is_store ? nullptr : row(in.result);
  for (std::uint32_t t : active) {
    const std::int64_t i = int_value(index[t], in.arg_types[1]);
    if (i < 0 || i >= static_cast<std::int64_t>(in.elements)) {
      throw report_.out_of_bounds(in, t, "register array", i, in.elements);
    }
    Slot* element = row(in.args[0] + static_cast<std::uint32_t>(i));
    if (is_store) {
      element[t] = value[t];
    } else {
      result[t] = element[t];
    }
  }
}

}  // namespace iron::runtime::sim
