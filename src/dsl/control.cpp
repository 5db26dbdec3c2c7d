/// Symbolic loops, pipelines and branches: opening and closing their blocks, and catching early
/// exits.
#include "iron/dsl/control.hpp"

#include <fmt/format.h>

namespace iron::dsl::detail {

void ScopeGuard::open(std::size_t index, const char* construct) {
  tracer_ = &Tracer::current();
  opened_at_ = tracer_->loc();
  tracer_->open_block(index);
  depth_ = tracer_->depth();
  construct_ = construct;
  exceptions_ = std::uncaught_exceptions();
}

void ScopeGuard::finish() {
  if (tracer_ == nullptr) return;
  IRON_INTERNAL_ASSERT(tracer_->depth() == depth_, "a nested scope is still open");
  tracer_->close_block();
  tracer_ = nullptr;
}

ScopeGuard::~ScopeGuard() {
  if (tracer_ == nullptr) return;
  // During unwinding the exception itself is reported by trace_kernel.
  if (std::uncaught_exceptions() <= exceptions_) {
    tracer_->defer_error(opened_at_,
                         fmt::format("`break` or `return` leaves the {} opened here; the rest of "
                                     "its body would be silently dropped",
                                     construct_));
  }
  while (tracer_->depth() >= depth_) tracer_->close_block();
}

ir::ValueId record_for(ir::ValueId start, ir::ValueId end, ir::ValueId step, DType type,
                       bool rolled) {
  ir::Op& op = Tracer::current().record(ir::OpKind::For, type, {start, end, step});
  op.ivalue = rolled ? 1 : 0;
  return op.result;
}

void record_pipeline(ir::ValueId start, ir::ValueId end, ir::ValueId step, std::uint32_t stages,
                     std::uint32_t lag, std::uint32_t consumers) {
  Tracer& t = Tracer::current();
  if (stages < 1 || stages > ir::kMaxStages) {
    t.fail(fmt::format("pipelined(): {} stages; a pipeline has 1 to {}", stages, ir::kMaxStages));
  }
  if (lag != 0 && lag + 2 > stages) {
    t.fail(
        fmt::format("pipelined(): lag {} needs at least {} stages, not {}", lag, lag + 2, stages));
  }
  if (consumers % ir::kWarpgroupThreads != 0) {
    t.fail(fmt::format("pipelined(): {} consumers; consumers are whole warpgroups ({} threads)",
                       consumers, ir::kWarpgroupThreads));
  }
  ir::Op& op = t.record(ir::OpKind::Pipeline, DType::U32, {start, end, step});
  op.ivalue = stages;
  op.axis = static_cast<std::uint8_t>(lag);
  op.consumers = consumers;
}

ir::ValueId record_pipeline_index(bool slot) {
  ir::Op& op = Tracer::current().record(ir::OpKind::PipelineIndex, DType::U32, {});
  op.axis = slot ? 1 : 0;
  return op.result;
}

void record_if(ir::ValueId cond) { Tracer::current().record(ir::OpKind::If, DType::Bool, {cond}); }

BranchScope::BranchScope(const Expr<boolean>& cond, SourceLocation where) {
  Tracer::current().at(where);
  record_if(cond.id());
  guard_.open(0, "IRON_IF branch");
}

BranchScope::BranchScope(SourceLocation where) {
  Tracer& t = Tracer::current();
  t.at(where);
  if (t.if_awaiting_else() == nullptr) {
    t.fail("IRON_ELSE must directly follow the body of an IRON_IF");
  }
  guard_.open(1, "IRON_ELSE branch");
}

}  // namespace iron::dsl::detail
