/// The expression of every op that defines a value, and the access a memory op makes.
#pragma once

#include <string>
#include <utility>

#include "context.hpp"

namespace iron::codegen::c_like {

/// The target of a load, store or atomic: a tensor parameter or a shared allocation.
Access access_of(const ir::Op& op, const Context& cx);

/// Shared allocation `shared` when it is one (>= 0), else tensor parameter `param`: an access's
/// space and base, without its index.
Access target_of(int param, int shared, const Context& cx);
/// Where element `index` (a value's name) of shared allocation `a` lives: `index` itself, or its
/// place in a swizzled row (ir::SharedAlloc::swizzle).
std::string placed_index(const ir::SharedAlloc& a, const std::string& index);
/// log2 of a swizzled row's elements and of a 16-byte chunk's, for fragment helpers; {0, 0} for
/// an allocation in order.
std::pair<int, int> swizzle_shifts(const ir::SharedAlloc& a);

/// The 4-byte type a constexpr of type `t` is passed as: f32 for floats, i32 for signed and u32
/// for unsigned integers and bools; the kernel converts it where it reads it.
DType constexpr_carrier(DType t);

/// The expression computing `op`'s result.
std::string value_expression(const ir::Op& op, const Context& cx);

}  // namespace iron::codegen::c_like
