/// Malformed text IR: every parse error names its line and what was expected.
#include <gtest/gtest.h>

#include "iron/core/error.hpp"
#include "iron/core/parser.hpp"

namespace iron::ir {
namespace {

constexpr std::string_view kHeader =
    "kernel k dtype=f32 mode=elementwise\n"  // line 1
    "  param in inp: f32\n"                  // line 2
    "  param out out: f32\n"                 // line 3
    "  shared shm0: f32[64]\n"               // line 4
    "  values 8\n"                           // line 5
    "{\n"                                    // line 6
    "  %0 = builtin global_id.x : u32\n";    // line 7

/// The message of the IrError that parsing `text` throws ("" when it parses).
std::string parse_error(std::string_view text) {
  try {
    parse_kernel(text);
  } catch (const IrError& e) {
    return e.what();
  }
  return "";
}

/// The error for a kernel whose line 8 is `line`.
std::string body_error(std::string_view line) {
  return parse_error(std::string(kHeader) + std::string(line) + "\n}\n");
}

TEST(IrParseErrors, ValidPrefixParses) { EXPECT_EQ(body_error("  barrier"), ""); }

TEST(IrParseErrors, BodyLinesNameWhatWasExpected) {
  EXPECT_EQ(body_error("  %1 = frobnicate %0 : u32"), "line 8: unknown op 'frobnicate'");
  EXPECT_EQ(body_error("  %1 = add %0, %0"),
            "line 8: expected ':' before the type, found end of line");
  EXPECT_EQ(body_error("  %1 = add %0, %0 : f64"), "line 8: unknown type 'f64'");
  EXPECT_EQ(body_error("  %1 = add %0 %0 : u32"),
            "line 8: expected ':' before the type, found '%0'");
  EXPECT_EQ(body_error("  %1 = add %0, : u32"), "line 8: expected an operand value, found ':'");
  EXPECT_EQ(body_error("  %1 add %0, %0 : u32"),
            "line 8: expected '=' after the result value, found 'add'");
  EXPECT_EQ(body_error("  %x = add %0, %0 : u32"), "line 8: bad value id '%x'");
  EXPECT_EQ(body_error("  % = add %0, %0 : u32"), "line 8: expected a name or number after '%'");
  EXPECT_EQ(body_error("  %1 = add %0, %0 : u32 u32"), "line 8: unexpected 'u32' at end of line");
  EXPECT_EQ(body_error("  %1 = load missing[%0] : f32"), "line 8: unknown parameter 'missing'");
  EXPECT_EQ(body_error("  %1 = load inp %0 : f32"),
            "line 8: expected '[' before the index, found '%0'");
  EXPECT_EQ(body_error("  %1 = shared.load shm0[%0] : f32"),
            "line 8: expected a shared allocation '@name', found 'shm0'");
  EXPECT_EQ(body_error("  %1 = shared.load @shm9[%0] : f32"),
            "line 8: unknown shared allocation '@shm9'");
  EXPECT_EQ(body_error("  %1 = const 1.5x : f32"), "line 8: bad float constant '1.5x'");
  EXPECT_EQ(body_error("  %1 = const 1.5 : i32"), "line 8: bad integer constant '1.5'");
  EXPECT_EQ(body_error("  %1 = builtin global_id : u32"),
            "line 8: builtin global_id needs an axis (.x, .y or .z)");
  EXPECT_EQ(body_error("  %1 = builtin lane.x : u32"), "line 8: builtin lane takes no axis");
  EXPECT_EQ(body_error("  %1 = builtin group_id.w : u32"),
            "line 8: bad axis 'w' (expected x, y or z)");
  EXPECT_EQ(body_error("  %1 = builtin warp_id : u32"), "line 8: unknown builtin 'warp_id'");
  EXPECT_EQ(body_error("  %1 = for %2 = %0 to %0 step %0 : u32 {"),
            "line 8: write a loop as 'for %N = %a to %b step %c'");
  EXPECT_EQ(body_error("  for %1 = %0 until %0 step %0 : u32 {"),
            "line 8: expected 'to', found 'until'");
}

TEST(IrParseErrors, VectorTypesAndExtract) {
  EXPECT_EQ(body_error("  %1 = load inp[%0] : f32x4"), "");
  EXPECT_EQ(body_error("  %1 = load inp[%0] : f32x1"),
            "line 8: bad vector type 'f32x1' (expected f32xN with N lanes, N >= 2)");
  EXPECT_EQ(body_error("  %1 = load inp[%0] : f32x"),
            "line 8: bad vector type 'f32x' (expected f32xN with N lanes, N >= 2)");
  EXPECT_EQ(body_error("  %1 = load inp[%0] : f32x999"),
            "line 8: bad vector type 'f32x999' (expected f32xN with N lanes, N >= 2)");
  EXPECT_EQ(body_error("  %1 = load inp[%0] : f64x2"), "line 8: unknown type 'f64x2'");
  EXPECT_EQ(body_error("  %1 = extract %0 : u32"),
            "line 8: expected ',' before the lane, found ':'");
  EXPECT_EQ(body_error("  %1 = extract %0, %0 : u32"), "line 8: expected the lane, found '%0'");
  EXPECT_EQ(body_error("  %1 = extract 3 : u32"), "line 8: expected the vector operand, found '3'");
  EXPECT_EQ(parse_error("kernel k dtype=f32 mode=tiled\n  param in x: f32x4\n"),
            "line 2: unknown type 'f32x4'");
}

TEST(IrParseErrors, LocationComments) {
  EXPECT_EQ(body_error("  barrier  ; kernels/a.cpp"),
            "line 8: expected a location 'file:line' after ';', found 'kernels/a.cpp'");
  EXPECT_EQ(body_error("  barrier  ; kernels/a.cpp:0"),
            "line 8: expected a location 'file:line' after ';', found 'kernels/a.cpp:0'");
  EXPECT_EQ(body_error("  ; kernels/a.cpp:3"),
            "line 8: expected a statement before the location comment");
  EXPECT_EQ(parse_error("kernel k dtype=f32 mode=elementwise\n  values 1  ; a.cpp:3\n{\n}\n"),
            "line 2: this line takes no location");
  EXPECT_EQ(body_error("  if %0 {  ; a.cpp:3\n  }  ; a.cpp:4"),
            "line 9: a line with only braces takes no location");
}

TEST(IrParseErrors, BlockStructure) {
  EXPECT_EQ(parse_error(std::string(kHeader)), "line 7: expected '}', found end of input");
  EXPECT_EQ(parse_error(std::string(kHeader) + "  for %1 = %0 to %0 step %0 : u32 {\n"
                                               "    barrier\n"
                                               "  } else {\n"
                                               "  }\n}\n"),
            "line 10: 'else' or 'then' closing the loop opened on line 8");
  EXPECT_EQ(parse_error(std::string(kHeader) + "  if %0 {\n  } else {\n  } else {\n  }\n}\n"),
            "line 10: an 'if' (line 8) has one 'else' and no 'then'");
  EXPECT_EQ(parse_error(std::string(kHeader) + "} else {\n}\n"),
            "line 8: 'else' without 'if', or 'then' without 'pipeline'");
  EXPECT_EQ(parse_error(std::string(kHeader) + "}\nbarrier\n"),
            "line 9: unexpected text after the kernel's closing '}'");
}

TEST(IrParseErrors, Header) {
  EXPECT_EQ(parse_error(""), "line 1: expected 'kernel', found end of input");
  EXPECT_EQ(parse_error("# only a comment\n"), "line 1: expected 'kernel', found end of input");
  EXPECT_EQ(parse_error("kern k dtype=f32 mode=tiled\n"),
            "line 1: expected 'kernel', found 'kern'");
  EXPECT_EQ(parse_error("kernel k mode=tiled\n"), "line 1: expected 'dtype', found 'mode'");
  EXPECT_EQ(parse_error("kernel k dtype=f32 mode=grid\n"), "line 1: unknown dispatch mode 'grid'");
  EXPECT_EQ(parse_error("kernel k dtype=f32 mode=tiled\n"),
            "line 1: expected '{' opening the kernel body, found end of input");
  const std::string head = "kernel k dtype=f32 mode=tiled\n";
  EXPECT_EQ(parse_error(head + "  param input x: f32\n"), "line 2: unknown parameter kind 'input'");
  EXPECT_EQ(parse_error(head + "  param in x f32\n"),
            "line 2: expected ':' before the type, found 'f32'");
  EXPECT_EQ(parse_error(head + "  shared s: f32[-1]\n"),
            "line 2: expected the element count, found '-1'");
  EXPECT_EQ(parse_error(head + "  shared s: f32[4] at=4\n"),
            "line 2: expected 'offset', found 'at'");
  EXPECT_EQ(parse_error(head + "  shared s: f32[4] offset 4\n"),
            "line 2: expected '=' after 'offset', found '4'");
  EXPECT_EQ(parse_error(head + "  shared s: f32[4] offset=-4\n"),
            "line 2: expected the offset in bytes, found '-4'");
  EXPECT_EQ(parse_error(head + "  shared s: f32[4] overlays t\n"),
            "line 2: 'overlays t' names no earlier shared allocation");
  EXPECT_EQ(parse_error(head + "  shared s: f32[4] overlays\n"),
            "line 2: expected the overlaid allocation's name, found end of line");
  EXPECT_EQ(parse_error(head + "  shared_bytes\n"),
            "line 2: expected the shared memory size in bytes, found end of line");
  EXPECT_EQ(parse_error(head + "  rule multiple_of\n"),
            "line 2: expected the rule's bound (a number or a constexpr name), found end of line");
  EXPECT_EQ(parse_error(head + "  rule power_of_two 4\n"), "line 2: unexpected '4' at end of line");
  EXPECT_EQ(parse_error(head + "  rule exactly n/\n"),
            "line 2: expected the divisor, found end of line");
  EXPECT_EQ(parse_error(head + "  rule sometimes 4\n"), "line 2: unknown rule 'sometimes'");
  EXPECT_EQ(parse_error(head + "  values 3\n  values 4\n"), "line 3: 'values' given twice");
  EXPECT_EQ(parse_error(head + "  param in x: f32\n  %0 = builtin lane : u32\n"),
            "line 3: expected 'param', 'shared', 'shared_bytes', 'dispatch', 'rule', 'occupancy', "
            "'require', 'grid', 'layout', 'tensor_map', 'values' or '{', found '%0'");
  EXPECT_EQ(parse_error(head + "  params in x: f32\n"),
            "line 2: expected 'param', 'shared', 'shared_bytes', 'dispatch', 'rule', 'occupancy', "
            "'require', 'grid', 'layout', 'tensor_map', 'values' or '{', found 'params'");
}

}  // namespace
}  // namespace iron::ir
