/// Checks that IR is well formed: types, scopes, structure and the dispatch contract.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "iron/core/ir.hpp"

namespace iron::ir {

/// The most values (`num_values`) a kernel may declare. Every consumer of the IR sizes tables by
/// it, so the verifier refuses a larger count before allocating anything; the largest library
/// kernel, after the whole pipeline, uses a few thousand.
inline constexpr std::uint32_t kMaxValues = 1u << 20;

/// What a kernel must be at a point of its life. Traced: well formed (what the DSL makes and
/// every pass keeps). Lowered: also ready for an emitter, after the whole pass pipeline: no
/// register array is left (every index of one must be a constant once loops are unrolled).
enum class Stage : std::uint8_t { Traced, Lowered };

/// Every problem found, each as "kernel K: file:line: what"; empty when the kernel is valid.
std::vector<std::string> verify(const Kernel& kernel, Stage stage = Stage::Traced);

/// Throws IrError listing every problem when verify() finds any.
void verify_or_throw(const Kernel& kernel);

}  // namespace iron::ir
