/// Pipelined loops (docs/tensor-cores.md, "Pipelines"): the steps p = start, start + step, … <
/// end, each loaded into one slot of a ring of shared memory and then computed on, with the loads
/// of later steps in flight while a step is computed.
///
///   auto tile = ring<T>(kTile);                  // kTile elements per stage
///   pipelined(0u, k, 32u, 4,                     // up to 4 stages
///       [&](auto p, auto slot) { copy_async<8>(tile[slot * kTile + …], x[p + …]); },
///       [&](auto p, auto slot) { … load(tile[slot * kTile + …]) … });
///
/// The load block only starts copies into its slot (copy_async, or plain shared stores); the
/// pipeline commits and waits for them and puts the barriers in (expand_pipelines). How many
/// stages run is the target's choice: as many as asked for that fit in its shared memory, one
/// where copies are synchronous.
#pragma once

#include <cstdint>

#include "iron/dsl/control.hpp"
#include "iron/dsl/memory.hpp"

namespace iron::dsl {

namespace detail {
void record_pipeline(ir::ValueId start, ir::ValueId end, ir::ValueId step, std::uint32_t stages,
                     std::uint32_t lag, std::uint32_t consumers);
/// This pipeline block's step (p) and slot, as pipeline.index ops at its top.
ir::ValueId record_pipeline_index(bool slot);
}  // namespace detail

/// A ring: `per_stage` elements of shared memory for each stage of the kernel's pipelines.
template <Element T>
Shared<T> ring(std::uint32_t per_stage, SourceLocation where = SourceLocation::current()) {
  auto& t = detail::Tracer::current();
  t.at(where);
  return Shared<T>(t.add_shared(dtype_of<T>, per_stage, /*ring=*/true));
}

/// A ring whose stages are placed in swizzled rows (Swizzled); `per_stage` is whole rows.
template <Element T>
Shared<T> ring(std::uint32_t per_stage, Swizzled layout,
               SourceLocation where = SourceLocation::current()) {
  auto& t = detail::Tracer::current();
  t.at(where);
  return Shared<T>(t.add_shared(dtype_of<T>, per_stage, /*ring=*/true, layout.row));
}

/// A group split in two (warp specialization): its first `consumers` threads (whole warpgroups,
/// a multiple of 128) run the compute block and the rest, a warpgroup or more, load. On a target
/// with tensor maps (sm_90a) the loading warpgroup's first thread issues the TMA copies, an
/// mbarrier ring tells it when the consumers are done with a slot, the consumers never wait at a
/// group barrier, and the two sides rebalance their registers (setmaxnreg); elsewhere every
/// thread runs the load block and only the consumers compute. Code after the pipeline runs in
/// every thread, so the kernel guards what only the consumers may do.
struct Specialized {
  std::uint32_t consumers = 0;
};

namespace detail {
template <class Load, class Compute>
void trace_pipeline(const Expr<u32>& start, const Expr<u32>& end, const Expr<u32>& step,
                    std::uint32_t stages, Load&& load, Compute&& compute, std::uint32_t lag,
                    std::uint32_t consumers, SourceLocation where) {
  Tracer::current().at(where);
  record_pipeline(start.id(), end.id(), step.id(), stages, lag, consumers);
  const auto block = [&](std::size_t index, auto&& body, const char* construct) {
    ScopeGuard guard;
    guard.open(index, construct);
    auto p = Expr<u32>::wrap(record_pipeline_index(false));
    auto slot = Expr<u32>::wrap(record_pipeline_index(true));
    body(p, slot);
    guard.finish();
  };
  block(0, load, "pipeline's load block");
  Tracer::current().at(where);
  block(1, compute, "pipeline's compute block");
}
}  // namespace detail

/// Traces a pipelined loop of up to `stages` stages (1 to 16; at most 8 where its loads are
/// copy groups rather than TMA copies): `load(p, slot)` fills ring slot
/// `slot` for step p, `compute(p, slot)` uses it. With a `lag` of L, the compute of a step may
/// leave its warpgroup products reading its slot for L more steps (it waits with
/// warpgroup_wait(L, …), and the kernel waits for the rest after the loop): on a target whose
/// products are asynchronous (sm_90a) slots are then refilled L steps later, and the pipeline
/// needs L + 2 stages; elsewhere the products are synchronous and the lag changes nothing.
template <class Load, class Compute>
void pipelined(const Expr<u32>& start, const Expr<u32>& end, const Expr<u32>& step,
               std::uint32_t stages, Load&& load, Compute&& compute, std::uint32_t lag = 0,
               SourceLocation where = SourceLocation::current()) {
  detail::trace_pipeline(start, end, step, stages, load, compute, lag, 0, where);
}

/// pipelined() with the group split into consumers and a producer (Specialized).
template <class Load, class Compute>
void pipelined(const Expr<u32>& start, const Expr<u32>& end, const Expr<u32>& step,
               std::uint32_t stages, Load&& load, Compute&& compute, std::uint32_t lag,
               Specialized split, SourceLocation where = SourceLocation::current()) {
  detail::trace_pipeline(start, end, step, stages, load, compute, lag, split.consumers, where);
}

}  // namespace iron::dsl
