/// Pipelined loops: each `pipeline` becomes a prologue that starts the first stages' loads, a
/// loop that waits for one stage, starts the load of the stage after the ring's end and
/// computes on the waited one, with the ring's allocations sized for the stages the target
/// can hold (docs/compiler.md, "expand_pipelines").
#pragma once

#include <cstdint>

#include "iron/codegen/target.hpp"
#include "iron/core/ir.hpp"

namespace iron::codegen {

/// The stages the kernel's pipelines run with on `target`: the fewest any pipeline asks for (at
/// most ir::kMaxGroupStages where a pipeline's loads are copy groups rather than TMA copies),
/// lowered until its rings fit beside its other shared memory in the kernel's share of a
/// multiprocessor (TargetProfile::shared_bytes_for its occupancy; at least 1); 1 where the target's
/// asynchronous copies are synchronous. 0 for a kernel without pipelines.
std::uint32_t pipeline_stages(const ir::Kernel& kernel, const TargetProfile& target);

void expand_pipelines(ir::Kernel& kernel, const TargetProfile& target);

}  // namespace iron::codegen
