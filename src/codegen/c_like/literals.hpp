/// Exact literal text for Iron constants in C-like languages.
#pragma once

#include <cstdint>
#include <string>

#include "dialect.hpp"

namespace iron::codegen::c_like {

/// The integer a Const op of an integer or bool type stands for, wrapped to its type as the
/// simulator does (u8 300 is 44, i8 255 is -1).
std::int64_t const_integer(const ir::Op& c);

/// An integer literal of type `t` ("5u", "-3", "true"); negative ones are not parenthesized.
std::string integer_literal(DType t, std::int64_t v);

/// An f32 literal that reads back as exactly `v`: the shortest digits with an `f` suffix, or the
/// dialect's bit pattern for inf and NaN.
std::string f32_literal(float v, const Dialect& dialect);

/// The literal of a Const op: exact for every type (f16/bf16 values are rounded to their type
/// first, then converted from an exact f32 literal).
std::string const_literal(const ir::Op& c, const Dialect& dialect, Needs& needs);

}  // namespace iron::codegen::c_like
