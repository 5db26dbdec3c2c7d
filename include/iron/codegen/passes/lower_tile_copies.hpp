/// Tile copies (copy.tile) made into what the target runs: each thread's share of 16-byte
/// copy.async everywhere, except a pipeline's loads on a target with tensor maps (sm_90a), which
/// expand_pipelines turns into Hopper's TMA copies (docs/compiler.md, "lower_tile_copies").
#pragma once

#include <optional>

#include "iron/codegen/target.hpp"
#include "iron/core/ir.hpp"

namespace iron::codegen {

/// The tensor map copy.tile `op` of `kernel` reads through as one TMA copy: its base, height and
/// width host expressions of constants and constexprs; its destination placed at a multiple of
/// 1024 bytes (swizzled rows of 128 bytes) or of 128 (rows in order); a 2- or 4-byte element.
/// nullopt when the copy does not qualify.
std::optional<ir::TensorMap> tile_tensor_map(const ir::Kernel& kernel, const ir::Op& op);

/// Whether `kernel` has tile copies (copy.tile).
bool has_tile_copies(const ir::Kernel& kernel);
/// Whether `block` itself (not its nested blocks) holds tile copies: a pipeline's load block
/// that keeps them for TMA.
bool has_tile_copies(const ir::Block& block);

void lower_tile_copies(ir::Kernel& kernel, const TargetProfile& target);

}  // namespace iron::codegen
