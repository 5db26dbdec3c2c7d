/// The text form: printing, parsing, and exact round trips of every op kind.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <set>

#include "iron/core/parser.hpp"
#include "iron/core/printer.hpp"
#include "iron/core/verifier.hpp"

namespace iron::ir {
namespace {

// Every op kind, nested for/if/else, vars, shared memory (laid out), atomics on tensors and on
// shared allocations, vector accesses, builtins with and without an axis, special float constants
// and constexpr rules.
// Written in the printer's exact layout, so printing the parsed kernel reproduces it.
constexpr std::string_view kEveryOp =
    R"(kernel iron_everything dtype=f16 mode=reduction  ; kernels/test/every-op_v2.cpp:10
  param in inp: f16
  param out out: f16
  param out counts: u32
  param out sums: f32
  param constexpr alpha: f32
  param constexpr n: u32
  shared shm0: f32[256] offset=0
  shared shm1: u32[32] offset=1024
  shared_bytes 1152
  rule multiple_of 128
  rule at_least 64
  rule at_most 1024
  rule exactly n/4
  rule exactly n
  rule power_of_two
  tensor_map sums [0, n, 8] box 16, 8 swizzle 0
  values 114
{
  %0 = builtin global_id.x : u32  ; kernels/test/every-op_v2.cpp:12
  %1 = builtin thread_id.y : u32
  %2 = builtin group_id.z : u32
  %3 = builtin group_size.x : u32
  %4 = builtin grid_groups.y : u32
  %5 = builtin lane : u32
  %6 = builtin simdgroup : u32
  %7 = builtin simdgroup_count : u32
  %8 = load inp[%0] : f16  ; kernels/test/every-op_v2.cpp:13
  %9 = cast %8 : f32
  %10 = constexpr alpha : f32
  %11 = constexpr n : u32
  %12 = const 2.5 : f32
  %13 = const inf : f32
  %14 = const -inf : f32
  %15 = const nan : f32
  %16 = const -0.125 : f32
  %17 = const 1e+30 : f32
  %18 = const -7 : i32
  %19 = const 1 : bool
  %20 = const 0 : u32
  %21 = const 1 : u32
  %22 = neg %9 : f32
  %23 = neg %18 : i32
  %24 = sqrt %9 : f32
  %25 = rsqrt %9 : f32
  %26 = exp %9 : f32
  %27 = exp2 %9 : f32
  %28 = log %9 : f32
  %29 = log2 %9 : f32
  %30 = sin %9 : f32
  %31 = cos %9 : f32
  %32 = tanh %9 : f32
  %96 = erf %9 : f32
  %97 = exp2.approx %9 : f32
  %98 = recip.approx %9 : f32
  %99 = regs %9, 4 : f32
  regs.store %99, %21, %98 : f32
  %100 = regs.load %99, %0 : f32
  %101 = frag %12, acc, 16, 8 : f32
  %102 = frag %8, a, 16, 16 : f16
  %103 = frag %8, b, 16, 8 : f16
  frag.load inp[%20], %102, %11, row : f16
  frag.load inp[%20], %103, %11, col : f16
  frag.mma %101, %102, %103 : f32
  frag.store @shm0[%20], %101, %11, row : f32
  %104 = frag.get %101, 3 : f32
  frag.set %101, %104, 2 : f32
  %105 = frag.coord %101, 1, row : u32
  %106 = frag.coord %102, 7, col : u32
  %107 = frag %12, acc, 16, 8 : f32
  frag.rowreduce %107, %101, max : f32
  frag.rowreduce %107, %101, sum : f32
  %108 = frag.rowvalue %101, %107, 3 : f32
  %109 = frag %12, acc, 16, 16 : f32
  frag.convert %102, %109 : f16
  frag.store @shm0[%20], %109, %11, row, cols 0 16 : f32
  copy.async @shm0[%20], sums[%20], %19 : f32x4
  async.commit
  async.wait 1
  fence.proxy.async
  wg.mma %101, @shm0[%20], %11, @shm0[%20], %11, col, 16 : f32
  wg.mma %101, @shm0[%20], %11, @shm0[%20], %11, row %20, 64 : f32
  wg.commit
  wg.wait %101, 1
  %112 = target.has warpgroup_products : bool
  %113 = specialize %112 : bool
  copy.tile @shm0[%0], sums[%0], %0, %0, %0, %0, box 4, 4 : f32
  mbar.init @shm1[%0], 1
  mbar.expect @shm1[%0], 64
  copy.tensor @shm0[%0], map 0, %0, %0, @shm1[%0] : f32
  mbar.wait @shm1[%0], %0
  mbar.inval @shm1[%0]
  mbar.arrive @shm1[%0]
  wg.registers dec 40
  wg.registers inc 232
  wg.turn begin 2
  wg.turn wait 2
  wg.turn pass 2
  barrier.among 256
  barrier.simdgroup
  exit
  pipeline %0 to %0 step %0 stages 2 consumers 128 : u32 {
    %110 = pipeline.index step : u32
  } then {
    %111 = pipeline.index slot : u32
  }
  %33 = abs %9 : f32
  %34 = recip %9 : f32
  %35 = floor %9 : f32
  %36 = ceil %9 : f32
  %37 = not %19 : bool
  %38 = add %9, %10 : f32
  %39 = sub %38, %12 : f32
  %40 = mul %39, %16 : f32
  %41 = div %40, %17 : f32
  %42 = rem %41, %12 : f32
  %43 = min %42, %13 : f32
  %44 = max %43, %14 : f32
  %45 = pow %44, %12 : f32
  %46 = atan2 %45, %15 : f32
  %47 = and %0, %11 : u32
  %48 = or %47, %21 : u32
  %49 = xor %48, %5 : u32
  %50 = shl %49, %21 : u32
  %51 = shr %50, %21 : u32
  %52 = rem %51, %11 : u32
  %53 = eq %52, %20 : bool
  %54 = ne %9, %12 : bool
  %55 = lt %0, %11 : bool
  %56 = le %9, %12 : bool
  %57 = gt %9, %12 : bool
  %58 = ge %18, %18 : bool
  %59 = select %55, %46, %9 : f32
  %60 = fma %59, %10, %9 : f32
  %61 = bitcast %60 : u32
  %62 = bitcast %61 : f32
  shared.store @shm0[%1], %62 : f32
  barrier  ; kernels/test/every-op_v2.cpp:20
  %63 = shared.load @shm0[%5] : f32
  %64 = simd.sum %63 : f32
  %65 = simd.max %64 : f32
  %66 = simd.min %65 : f32
  %67 = simd.prefix_sum %66 : f32
  %68 = simd.prefix_exclusive_sum %67 : f32
  %69 = simd.shuffle %68, %5 : f32
  %70 = simd.shuffle_xor %69, %21 : f32
  %71 = simd.shuffle_up %70, %21 : f32
  %72 = simd.shuffle_down %71, %21 : f32
  %73 = simd.broadcast %72, %20 : f32
  %74 = reduce.sum %73 : f32
  %75 = reduce.max %74 : f32
  %76 = reduce.min %75 : f32
  %77 = var %76 : f32
  for %78 = %20 to %11 step %21 : u32 {  ; kernels/test/every-op_v2.cpp:30
    %79 = var.load %77 : f32
    %80 = add %79, %9 : f32
    var.store %77, %80 : f32
    %81 = lt %78, %3 : bool
    if %81 {  ; kernels/test/every-op_v2.cpp:33
      for %82 = %78 to %11 step %21 rolled : u32 {
        %83 = var.load %77 : f32
        var.store %77, %83 : f32
      }
    } else {
      %84 = atomic.add sums[%78], %80 : f32
    }
  }
  if %53 {
    atomic.max counts[%0], %52 : u32
    %85 = atomic.min @shm1[%5], %52 : u32
    %86 = atomic.and @shm1[%5], %85 : u32
    %87 = atomic.or counts[%0], %86 : u32
    %88 = atomic.xor counts[%0], %87 : u32
    %89 = atomic.xchg @shm1[%6], %88 : u32
  }
  %90 = var.load %77 : f32
  %91 = cast %90 : f16
  %92 = load inp[%20] : f16x8  ; kernels/test/every-op_v2.cpp:38
  %93 = extract %92, 7 : f16  ; kernels/test/every-op_v2.cpp:38
  store out[%20], %93, %91, %93, %91 : f16x4
  shared.store @shm0[%20], %63, %90 : f32x2
  %94 = shared.load @shm0[%20] : f32x4
  %95 = extract %94, 3 : f32
  store out[%0], %91 : f16  ; kernels/test/every-op_v2.cpp:40
}
)";

::testing::AssertionResult Differ(const std::string& where) {
  return ::testing::AssertionFailure() << "kernels differ at " << where;
}

bool same_double(double a, double b) {
  return (std::isnan(a) && std::isnan(b)) ||
         std::bit_cast<std::uint64_t>(a) == std::bit_cast<std::uint64_t>(b);
}

bool same_loc(const SourceLoc& a, const SourceLoc& b) {
  return a.file == b.file && a.line == b.line;
}

::testing::AssertionResult BlocksEqual(const Block& a, const Block& b, const std::string& where) {
  if (a.ops.size() != b.ops.size()) return Differ(where + ".ops.size");
  for (std::size_t i = 0; i < a.ops.size(); ++i) {
    const Op& x = a.ops[i];
    const Op& y = b.ops[i];
    const std::string at = where + "[" + std::to_string(i) + "]";
    if (x.kind != y.kind) return Differ(at + ".kind");
    if (x.type != y.type) return Differ(at + ".type");
    if (x.result != y.result) return Differ(at + ".result");
    if (x.args != y.args) return Differ(at + ".args");
    if (!same_double(x.fvalue, y.fvalue)) return Differ(at + ".fvalue");
    if (x.ivalue != y.ivalue) return Differ(at + ".ivalue");
    if (x.builtin != y.builtin) return Differ(at + ".builtin");
    if (x.axis != y.axis) return Differ(at + ".axis");
    if (x.lanes != y.lanes) return Differ(at + ".lanes");
    if (x.param != y.param) return Differ(at + ".param");
    if (x.shared != y.shared) return Differ(at + ".shared");
    if (x.shared_b != y.shared_b) return Differ(at + ".shared_b");
    if (x.layout != y.layout) return Differ(at + ".layout");
    if (!same_loc(x.loc, y.loc)) return Differ(at + ".loc");
    if (x.blocks.size() != y.blocks.size()) return Differ(at + ".blocks.size");
    for (std::size_t j = 0; j < x.blocks.size(); ++j) {
      auto r = BlocksEqual(x.blocks[j], y.blocks[j], at + ".blocks[" + std::to_string(j) + "]");
      if (!r) return r;
    }
  }
  return ::testing::AssertionSuccess();
}

/// Field-by-field equality of two kernels (NaN constants compare equal to each other).
::testing::AssertionResult KernelsEqual(const Kernel& a, const Kernel& b) {
  if (a.name != b.name) return Differ("name");
  if (a.dtype != b.dtype) return Differ("dtype");
  if (a.num_values != b.num_values) return Differ("num_values");
  if (!same_loc(a.loc, b.loc)) return Differ("loc");
  if (a.params.size() != b.params.size()) return Differ("params.size");
  for (std::size_t i = 0; i < a.params.size(); ++i) {
    const Param& x = a.params[i];
    const Param& y = b.params[i];
    if (x.name != y.name || x.kind != y.kind || x.dtype != y.dtype) {
      return Differ("params[" + std::to_string(i) + "]");
    }
  }
  if (a.shared.size() != b.shared.size()) return Differ("shared.size");
  for (std::size_t i = 0; i < a.shared.size(); ++i) {
    const SharedAlloc& x = a.shared[i];
    const SharedAlloc& y = b.shared[i];
    if (x.name != y.name || x.dtype != y.dtype || x.size != y.size || x.offset != y.offset) {
      return Differ("shared[" + std::to_string(i) + "]");
    }
  }
  if (a.shared_bytes != b.shared_bytes) return Differ("shared_bytes");
  if (a.tensor_maps != b.tensor_maps) return Differ("tensor_maps");
  if (a.dispatch.mode != b.dispatch.mode) return Differ("dispatch.mode");
  const auto& ra = a.dispatch.group_size_rules;
  const auto& rb = b.dispatch.group_size_rules;
  if (ra.size() != rb.size()) return Differ("rules.size");
  for (std::size_t i = 0; i < ra.size(); ++i) {
    if (ra[i].kind != rb[i].kind || ra[i].value != rb[i].value ||
        ra[i].constexpr_name != rb[i].constexpr_name || ra[i].divisor != rb[i].divisor) {
      return Differ("rules[" + std::to_string(i) + "]");
    }
  }
  return BlocksEqual(a.body, b.body, "body");
}

TEST(IrText, EveryOpKindRoundTrips) {
  const Kernel k = parse_kernel(kEveryOp);
  EXPECT_EQ(print_kernel(k), kEveryOp);
  EXPECT_TRUE(KernelsEqual(parse_kernel(print_kernel(k)), k));
  EXPECT_EQ(verify(k), std::vector<std::string>{});

  std::set<OpKind> seen;
  walk(k.body, [&](const Op& op) { seen.insert(op.kind); });
#define IRON_X(e, s, c, ...) EXPECT_TRUE(seen.count(OpKind::e)) << "no " << s << " op in kEveryOp";
  IRON_IR_OPS(IRON_X)
#undef IRON_X
}

TEST(IrText, ParsesFieldsAsPrinted) {
  const Kernel k = parse_kernel(kEveryOp);
  EXPECT_EQ(k.name, "iron_everything");
  EXPECT_EQ(k.dtype, DType::F16);
  EXPECT_EQ(k.dispatch.mode, DispatchMode::Reduction);
  EXPECT_EQ(k.loc.file, "kernels/test/every-op_v2.cpp");
  EXPECT_EQ(k.loc.line, 10u);
  ASSERT_EQ(k.dispatch.group_size_rules.size(), 6u);
  const SizeRule& per_n = k.dispatch.group_size_rules[3];
  EXPECT_EQ(per_n.kind, SizeRule::Kind::Exactly);
  EXPECT_EQ(per_n.constexpr_name, "n");
  EXPECT_EQ(per_n.divisor, 4);
  EXPECT_EQ(k.dispatch.group_size_rules[4].divisor, 1);

  const std::vector<Op>& ops = k.body.ops;
  EXPECT_EQ(ops[0].builtin, Builtin::GlobalId);
  EXPECT_EQ(ops[0].axis, 0);
  EXPECT_EQ(ops[0].loc.line, 12u);
  EXPECT_EQ(ops[2].axis, 2);
  EXPECT_EQ(ops[5].builtin, Builtin::Lane);
  EXPECT_EQ(ops[8].param, k.find_param("inp"));
  EXPECT_EQ(ops[12].fvalue, 2.5);
  EXPECT_EQ(ops[13].fvalue, std::numeric_limits<double>::infinity());
  EXPECT_EQ(ops[14].fvalue, -std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(ops[15].fvalue));
  EXPECT_EQ(ops[18].ivalue, -7);
  EXPECT_EQ(ops[18].type, DType::I32);

  const Op& store = ops.back();
  EXPECT_EQ(store.kind, OpKind::Store);
  EXPECT_EQ(store.result, kNoValue);
  EXPECT_EQ(store.type, DType::F16);  // the stored value's type
  EXPECT_EQ(store.lanes, 1);

  EXPECT_EQ(k.shared_bytes, 1152u);
  EXPECT_EQ(k.shared[0].offset, 0u);
  EXPECT_EQ(k.shared[1].offset, 1024u);
  const Op& vector_load = ops[ops.size() - 7];
  EXPECT_EQ(vector_load.kind, OpKind::Load);
  EXPECT_EQ(vector_load.type, DType::F16);
  EXPECT_EQ(vector_load.lanes, 8);
  const Op& extract = ops[ops.size() - 6];
  EXPECT_EQ(extract.kind, OpKind::Extract);
  EXPECT_EQ(extract.args, std::vector<ValueId>{92});
  EXPECT_EQ(extract.ivalue, 7);
  EXPECT_EQ(extract.lanes, 1);
  const Op& vector_store = ops[ops.size() - 5];
  EXPECT_EQ(vector_store.lanes, 4);
  EXPECT_EQ(vector_store.args, (std::vector<ValueId>{20, 93, 91, 93, 91}));

  const Op* loop = nullptr;
  for (const Op& op : ops) {
    if (op.kind == OpKind::For) loop = &op;
  }
  ASSERT_NE(loop, nullptr);
  ASSERT_EQ(loop->blocks.size(), 1u);
  const Op& branch = loop->blocks[0].ops.back();
  ASSERT_EQ(branch.kind, OpKind::If);
  ASSERT_EQ(branch.blocks.size(), 2u);
  EXPECT_EQ(branch.blocks[0].ops[0].kind, OpKind::For);
  EXPECT_EQ(loop->ivalue, 0) << "unrolled as the compilers choose";
  EXPECT_EQ(branch.blocks[0].ops[0].ivalue, 1) << "rolled";
  EXPECT_EQ(branch.blocks[1].ops[0].kind, OpKind::AtomicAdd);
  EXPECT_EQ(branch.blocks[1].ops[0].param, k.find_param("sums"));
  EXPECT_EQ(branch.blocks[1].ops[0].shared, -1);
  EXPECT_EQ(branch.loc.line, 33u);
}

/// The kernel of the grammar's example, built by hand as the tracer would.
Kernel scale_kernel() {
  Kernel k;
  k.name = "iron_scale";
  k.dtype = DType::F16;
  k.loc = {"kernels/ops/scale.cpp", 10};
  k.params = {{"inp", ParamKind::Input, DType::F16},
              {"out", ParamKind::Output, DType::F16},
              {"alpha", ParamKind::Constexpr, DType::F32}};
  k.num_values = 5;
  Op id;
  id.kind = OpKind::Builtin;
  id.builtin = Builtin::GlobalId;
  id.result = 0;
  id.loc = {"kernels/ops/scale.cpp", 12};
  Op load;
  load.kind = OpKind::Load;
  load.type = DType::F16;
  load.param = 0;
  load.args = {0};
  load.result = 1;
  Op cast;
  cast.kind = OpKind::Cast;
  cast.type = DType::F32;
  cast.args = {1};
  cast.result = 2;
  Op alpha;
  alpha.kind = OpKind::ConstexprRef;
  alpha.type = DType::F32;
  alpha.param = 2;
  alpha.result = 3;
  Op mul;
  mul.kind = OpKind::Mul;
  mul.type = DType::F32;
  mul.args = {2, 3};
  mul.result = 4;
  Op store;
  store.kind = OpKind::Store;
  store.type = DType::F16;
  store.param = 1;
  store.args = {0, 4};
  store.loc = {"kernels/ops/scale.cpp", 13};
  k.body.ops = {id, load, cast, alpha, mul, store};
  return k;
}

TEST(IrText, PrintsTheDocumentedLayout) {
  const Kernel k = scale_kernel();
  EXPECT_EQ(print_kernel(k),
            "kernel iron_scale dtype=f16 mode=elementwise  ; kernels/ops/scale.cpp:10\n"
            "  param in inp: f16\n"
            "  param out out: f16\n"
            "  param constexpr alpha: f32\n"
            "  values 5\n"
            "{\n"
            "  %0 = builtin global_id.x : u32  ; kernels/ops/scale.cpp:12\n"
            "  %1 = load inp[%0] : f16\n"
            "  %2 = cast %1 : f32\n"
            "  %3 = constexpr alpha : f32\n"
            "  %4 = mul %2, %3 : f32\n"
            "  store out[%0], %4 : f16  ; kernels/ops/scale.cpp:13\n"
            "}\n");
  EXPECT_TRUE(KernelsEqual(parse_kernel(print_kernel(k)), k));
}

TEST(IrText, LocationsCanBeLeftOut) {
  const std::string text = print_kernel(scale_kernel(), {.locations = false});
  EXPECT_EQ(text.find(';'), std::string::npos) << text;
  const Kernel k = parse_kernel(text);
  EXPECT_FALSE(k.loc.known());
  EXPECT_FALSE(k.body.ops[0].loc.known());
}

TEST(IrText, PrintsValueIdsAsStored) {
  Kernel k = scale_kernel();
  k.num_values = 100;
  k.body.ops[0].result = 42;
  k.body.ops[1].args = {42};
  k.body.ops[5].args = {42, 4};
  const std::string text = print_kernel(k);
  EXPECT_NE(text.find("%42 = builtin global_id.x"), std::string::npos) << text;
  EXPECT_NE(text.find("store out[%42], %4"), std::string::npos) << text;
  EXPECT_TRUE(KernelsEqual(parse_kernel(text), k));
}

TEST(IrText, ToleratesSpacingCommentsAndCrlf) {
  const Kernel k = parse_kernel(
      "# a hand-written kernel\r\n"
      "\n"
      "kernel   iron_scale dtype = f16 mode= elementwise ;kernels/ops/scale.cpp:10\r\n"
      "param in inp :f16\n"
      "\tparam out out:f16\n"
      "  param constexpr alpha : f32\n"
      "   # values are numbered from zero\n"
      "values 5\n"
      "{\n"
      "%0=builtin global_id.x:u32;   kernels/ops/scale.cpp:12   \n"
      "      %1 = load inp [ %0 ] : f16\n"
      "%2 = cast %1 : f32\n"
      "%3 = constexpr alpha : f32\n"
      "%4 = mul %2,%3 : f32\n"
      "store out[%0] , %4 : f16 ; kernels/ops/scale.cpp:13\n"
      "}\n"
      "# trailing comment\n");
  EXPECT_TRUE(KernelsEqual(k, scale_kernel()));
}

TEST(IrText, FloatConstantsRoundTripExactly) {
  const double values[] = {0.1,
                           1.0 / 3.0,
                           -0.0,
                           5e-324,
                           1e-300,
                           std::numeric_limits<double>::max(),
                           3.4028234663852886e+38,
                           -65504.0,
                           std::numeric_limits<double>::infinity()};
  for (double v : values) {
    Kernel k = scale_kernel();
    Op c;
    c.kind = OpKind::Const;
    c.type = DType::F32;
    c.fvalue = v;
    c.result = 5;
    k.num_values = 6;
    k.body.ops.insert(k.body.ops.begin(), c);
    const Kernel parsed = parse_kernel(print_kernel(k));
    EXPECT_EQ(std::bit_cast<std::uint64_t>(parsed.body.ops[0].fvalue),
              std::bit_cast<std::uint64_t>(v))
        << print_kernel(k);
  }
}

// Before layout (shared_bytes 0) an offset is printed only when set; after it, always.
TEST(IrText, SharedOffsetsArePrintedWhenSetOrLaidOut) {
  const std::string body =
      "  values 1\n"
      "{\n"
      "  %0 = builtin lane : u32\n"
      "  shared.store @b[%0], %0 : u32\n"
      "}\n";
  const std::string head = "kernel k dtype=f32 mode=reduction\n";
  const std::string unplaced = head + "  shared a: f32[8]\n  shared b: u32[4] offset=32\n" + body;
  Kernel k = parse_kernel(unplaced);
  EXPECT_EQ(k.shared[1].offset, 32u);
  EXPECT_EQ(print_kernel(k), unplaced);
  k.shared_bytes = 48;
  const std::string placed =
      head + "  shared a: f32[8] offset=0\n  shared b: u32[4] offset=32\n  shared_bytes 48\n" +
      body;
  EXPECT_EQ(print_kernel(k), placed);
  EXPECT_TRUE(KernelsEqual(parse_kernel(placed), k));
}

TEST(IrText, SharedAndParamNamesAreSeparate) {
  const std::string text =
      "kernel k dtype=f32 mode=reduction\n"
      "  param out acc: u32\n"
      "  shared acc: u32[32]\n"
      "  rule multiple_of 32\n"
      "  values 3\n"
      "{\n"
      "  %0 = builtin lane : u32\n"
      "  %1 = atomic.add @acc[%0], %0 : u32\n"
      "  %2 = atomic.add acc[%0], %1 : u32\n"
      "}\n";
  const Kernel k = parse_kernel(text);
  EXPECT_EQ(k.body.ops[1].shared, 0);
  EXPECT_EQ(k.body.ops[1].param, -1);
  EXPECT_EQ(k.body.ops[2].shared, -1);
  EXPECT_EQ(k.body.ops[2].param, 0);
  EXPECT_EQ(print_kernel(k), text);
  EXPECT_EQ(verify(k), std::vector<std::string>{});
}

}  // namespace
}  // namespace iron::ir
