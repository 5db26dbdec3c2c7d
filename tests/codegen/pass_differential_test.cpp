/// PassDifferential: kernels run on the simulator before and after the value-level passes
/// (fold, simplify, CSE, hoist, unroll, fold, simplify, CSE, DCE) must write bit-identical
/// outputs: every library kernel test in every dtype (lowered first, on each path of its target
/// queries, as the compiler runs those passes), hand-written kernels with special float
/// inputs, and a generated kernel storing every op on every type over edge-case constants.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "iron/codegen/passes/eliminate_common_subexpressions.hpp"
#include "iron/codegen/passes/eliminate_dead_code.hpp"
#include "iron/codegen/passes/fold_constants.hpp"
#include "iron/codegen/passes/hoist_loop_invariants.hpp"
#include "iron/codegen/passes/select_target_paths.hpp"
#include "iron/codegen/passes/simplify.hpp"
#include "iron/codegen/passes/unroll_loops.hpp"
#include "iron/core/error.hpp"
#include "iron/dsl/kernel.hpp"
#include "iron/runtime/sim.hpp"
#include "iron/testing/data.hpp"
#include "iron/testing/registry.hpp"
#include "iron/testing/runner.hpp"
#include "pass_test_harness.hpp"

namespace iron::pass_test {
namespace {

/// The value-level passes in pipeline order, then dead-code elimination.
ir::Kernel optimized(ir::Kernel kernel) {
  using namespace codegen;
  const TargetProfile target = TargetProfile::cuda(90);
  for (const Pass pass : {fold_constants, simplify, eliminate_common_subexpressions,
                          hoist_loop_invariants, unroll_loops, fold_constants, simplify,
                          eliminate_common_subexpressions, eliminate_dead_code}) {
    pass(kernel, target);
  }
  return kernel;
}

/// Arguments of one launch; outputs start as 0xAB bytes so unwritten elements compare too.
struct Args {
  std::vector<runtime::HostTensor> tensors;
  std::vector<runtime::Scalar> scalars;
};

/// `args` as the launch arguments of `kernel`, in parameter order.
std::vector<runtime::Arg> launch_args(const ir::Kernel& kernel, Args& args) {
  std::vector<runtime::Arg> out;
  for (std::size_t i = 0; i < kernel.params.size(); ++i) {
    if (kernel.params[i].kind == ir::ParamKind::Constexpr) {
      out.emplace_back(args.scalars[i]);
    } else {
      out.emplace_back(&args.tensors[i]);
    }
  }
  return out;
}

/// Runs `kernel` on fresh copies of `args` and returns every tensor afterwards.
std::vector<runtime::HostTensor> run(const ir::Kernel& kernel, Args args, runtime::Grid grid) {
  runtime::sim_run({&kernel, launch_args(kernel, args), grid});
  return std::move(args.tensors);
}
/// Runs `transformed` and expects the bytes of every tensor in `want` (the original's run).
void expect_outputs(const std::vector<runtime::HostTensor>& want, const ir::Kernel& transformed,
                    const Args& args, runtime::Grid grid) {
  std::vector<runtime::HostTensor> got;
  ASSERT_NO_THROW(got = run(transformed, args, grid)) << text_of(transformed);
  for (std::size_t i = 0; i < want.size(); ++i) {
    EXPECT_TRUE(want[i].bytes == got[i].bytes)
        << "output '" << transformed.params[i].name << "' differs after the passes:\n"
        << text_of(transformed);
  }
}

/// Runs both kernels and expects the same bytes in every tensor.
void expect_same_outputs(const ir::Kernel& original, const ir::Kernel& transformed,
                         const Args& args, runtime::Grid grid) {
  expect_outputs(run(original, args, grid), transformed, args, grid);
}

/// Whether a kernel or test is defined in the library under kernels/ (the test binary also
/// registers fixtures that fail on purpose, to test tracing and the sanitizer).
bool in_library(const ir::SourceLoc& loc) { return loc.file.starts_with("kernels/"); }

/// The arguments a registered test's setup describes, in parameter order.
Args args_of(const testing::TestSetup& setup) {
  Args args;
  for (const ir::Param& p : setup.kernel().params) {
    runtime::HostTensor tensor{p.dtype, {}};
    runtime::Scalar scalar{p.dtype};
    if (p.kind == ir::ParamKind::Input) tensor = setup.inputs().at(p.name);
    if (ir::is_output(p.kind)) {
      tensor.bytes.assign(setup.outputs().at(p.name) * dtype_size(p.dtype), std::byte{0xAB});
    }
    const auto initial = setup.initial_values().find(p.name);
    if (initial != setup.initial_values().end()) tensor = initial->second;
    if (p.kind == ir::ParamKind::Constexpr) scalar = setup.constants().at(p.name);
    args.tensors.push_back(std::move(tensor));
    args.scalars.push_back(scalar);
  }
  return args;
}

/// The kernel of `setup` as the simulator runs it on each path of its target queries (lowered
/// as the compiler lowers it before the value-level passes: paths taken, tile copies and
/// pipelines expanded), each with the tensors its run leaves.
std::vector<std::pair<ir::Kernel, std::vector<runtime::HostTensor>>> lowered_runs(
    const testing::TestSetup& setup) {
  const ir::Kernel& kernel = setup.kernel();
  std::vector<std::pair<ir::Kernel, std::vector<runtime::HostTensor>>> out;
  for (const bool products : {true, false}) {
    if (!products && !codegen::has_target_queries(kernel)) break;
    Args args = args_of(setup);
    runtime::SimOptions options;
    options.warpgroup_products = products;
    ir::Kernel lowered = runtime::simulated_kernel(
        {&kernel, launch_args(kernel, args), setup.launch_grid()}, options);
    std::vector<runtime::HostTensor> want = run(lowered, std::move(args), setup.launch_grid());
    out.emplace_back(std::move(lowered), std::move(want));
  }
  return out;
}

TEST(PassDifferential, EveryLibraryKernelStaysValid) {
  std::size_t checked = 0;
  for (const dsl::KernelInfo& info : dsl::registered_kernels()) {
    for (const DType dt : info.dtypes) {
      SCOPED_TRACE(info.name + " " + std::string(dtype_name(dt)));
      ir::Kernel traced;
      try {
        traced = info.trace(dt);
      } catch (const TraceError& e) {
        if (in_library(info.loc)) ADD_FAILURE() << e.what();
        continue;
      }
      const ir::Kernel kernel = optimized(traced);
      EXPECT_EQ(problems_of(kernel), "") << text_of(kernel);
      checked += in_library(info.loc);
    }
  }
  EXPECT_GE(checked, 15u) << "too few library kernels were checked";
}

TEST(PassDifferential, EveryLibraryKernelTestGivesIdenticalOutputs) {
  std::size_t compared = 0;
  for (const testing::TestCase& test : testing::registered_tests()) {
    for (const testing::DTypeTolerance& d : test.dtypes) {
      SCOPED_TRACE(test.name + " " + std::string(dtype_name(d.dtype)));
      testing::Rng rng(testing::case_seed(1, test.name, d.dtype));
      std::optional<testing::TestSetup> setup;
      std::vector<std::pair<ir::Kernel, std::vector<runtime::HostTensor>>> paths;
      try {
        setup.emplace(test.make(d.dtype, rng));
        paths = lowered_runs(*setup);
      } catch (const Error& e) {
        if (in_library(test.loc)) ADD_FAILURE() << e.what();
        continue;  // a fixture that fails on purpose: nothing to compare
      }
      for (const auto& [lowered, want] : paths) {
        expect_outputs(want, optimized(lowered), args_of(*setup), setup->launch_grid());
      }
      compared += in_library(test.loc);
    }
  }
  EXPECT_GE(compared, 30u) << "too few library kernel tests were compared";
}

runtime::HostTensor f32_tensor(const std::vector<float>& values) {
  runtime::HostTensor t{DType::F32, std::vector<std::byte>(values.size() * 4)};
  std::memcpy(t.bytes.data(), values.data(), t.bytes.size());
  return t;
}

runtime::HostTensor poisoned(DType dt, std::size_t count) {
  return {dt, std::vector<std::byte>(count * dtype_size(dt), std::byte{0xAB})};
}

/// 256 inputs with -0.0, infinities and NaN among random values, for 64 threads.
runtime::HostTensor special_inputs() {
  testing::Rng rng(7);
  std::vector<float> x = rng.uniform(256, -4.0f, 4.0f);
  const float inf = std::numeric_limits<float>::infinity();
  const float specials[] = {-0.0f, 0.0f, inf, -inf, std::numeric_limits<float>::quiet_NaN()};
  for (std::size_t i = 0; i < x.size(); i += 7) x[i] = specials[i % 5];
  return f32_tensor(x);
}

// Folding, identities, strength reduction, merging, hoisting, unrolling and a var that only
// updates itself, over inputs with -0.0, infinities and NaN.
constexpr std::string_view kLoopsAndBranches = R"(kernel diff_loops dtype=f32 mode=reduction
  param in x: f32
  param out out: f32
  param out outu: u32
  param out acc: f32
  param constexpr n: u32
  rule multiple_of 32
  values 40
{
  %0 = builtin global_id.x : u32
  %1 = const 0 : u32
  %2 = const 4 : u32
  %3 = const 1 : u32
  %4 = const 0 : f32
  %5 = var %4 : f32
  %6 = var %4 : f32
  for %7 = %1 to %2 step %3 : u32 {
    %8 = mul %0, %2 : u32
    %9 = add %8, %7 : u32
    %10 = load x[%9] : f32
    %11 = const 1 : f32
    %12 = mul %10, %11 : f32
    %13 = var.load %5 : f32
    %14 = add %13, %12 : f32
    var.store %5, %14 : f32
    %15 = var.load %6 : f32
    %16 = add %15, %4 : f32
    var.store %6, %16 : f32
    %17 = eq %7, %1 : bool
    if %17 {
      %18 = neg %10 : f32
      %19 = neg %18 : f32
      %20 = const -0 : f32
      %21 = add %19, %20 : f32
      store out[%9], %21 : f32
    } else {
      %22 = sub %14, %4 : f32
      %23 = mul %10, %4 : f32
      %24 = add %22, %23 : f32
      store out[%9], %24 : f32
    }
  }
  %25 = load x[%0] : f32
  %26 = bitcast %25 : u32
  %27 = const 8 : u32
  %28 = mul %26, %27 : u32
  %29 = div %28, %2 : u32
  %30 = rem %29, %27 : u32
  %31 = constexpr n : u32
  for %32 = %1 to %31 step %3 : u32 {
    %33 = mul %2, %27 : u32
    %34 = sub %33, %33 : u32
    %35 = add %30, %34 : u32
    %36 = div %35, %3 : u32
    %37 = mul %36, %32 : u32
    %38 = add %0, %37 : u32
    store outu[%0], %38 : u32
  }
  %39 = var.load %5 : f32
  store acc[%0], %39 : f32
}
)";

TEST(PassDifferential, HandWrittenKernelWithSpecialValues) {
  const ir::Kernel kernel = ir::parse_kernel(kLoopsAndBranches);
  ASSERT_EQ(problems_of(kernel), "");
  const ir::Kernel transformed = optimized(kernel);
  ASSERT_EQ(problems_of(transformed), "");
  const auto loops = [](const ir::Kernel& k) {
    std::size_t n = 0;
    ir::walk(k.body, [&](const ir::Op& op) { n += op.kind == ir::OpKind::For; });
    return n;
  };
  EXPECT_EQ(loops(transformed), 1u) << "the constant loop was not unrolled:\n"
                                    << text_of(transformed);
  Args args;
  args.tensors = {special_inputs(),
                  poisoned(DType::F32, 256),
                  poisoned(DType::U32, 64),
                  poisoned(DType::F32, 64),
                  {}};
  args.scalars.resize(5);
  args.scalars[4] = runtime::Scalar{DType::U32, 0.0, 3};
  expect_same_outputs(kernel, transformed, args, runtime::Grid::elementwise(64, 32));
}

/// Builds a kernel that stores `op(constants…)` for every op, type and pair of edge-case
/// constants the verifier accepts, each into its own output element.
class OpTable {
 public:
  OpTable() {
    for (const DType t : kTypes) values_[index(t)] = edge_values(t);
  }

  /// The kernel text and how many elements each output (one per type, in kTypes order) has.
  std::string kernel() {
    for (const DType t : kTypes) {
      for (std::size_t a = 0; a < values_[index(t)].size(); ++a) {
        for (const ir::OpKind k : kUnary) unary(k, t, a);
        for (const DType to : kTypes) {
          conversion(ir::OpKind::Cast, t, to, a);
          if (t != DType::Bool && to != DType::Bool && dtype_size(t) == dtype_size(to)) {
            conversion(ir::OpKind::Bitcast, t, to, a);
          }
        }
        for (std::size_t b = 0; b < values_[index(t)].size(); ++b) {
          for (const ir::OpKind k : kBinary) binary(k, t, a, b);
          if (is_float(t))
            append_op(ir::OpKind::Fma, t, t, {value(t, a), value(t, b), value(t, b)});
        }
      }
    }
    std::string head = "kernel op_table dtype=f32 mode=elementwise\n";
    for (const DType t : kTypes) {
      head += "  param out out_" + std::string(dtype_name(t)) + ": " + std::string(dtype_name(t)) +
              "\n";
    }
    return head + "  values " + std::to_string(next_) + "\n{\n" + body_ + "}\n";
  }

  std::size_t stores(DType t) const { return stores_[index(t)]; }

  static constexpr DType kTypes[] = {DType::F32,  DType::F16,    DType::BF16,  DType::I32,
                                     DType::U32,  DType::U8,     DType::I8,    DType::U16,
                                     DType::Bool, DType::F8E4M3, DType::F8E5M2};

 private:
  static constexpr ir::OpKind kUnary[] = {
      ir::OpKind::Neg, ir::OpKind::Not,   ir::OpKind::Sqrt,  ir::OpKind::Rsqrt,
      ir::OpKind::Exp, ir::OpKind::Exp2,  ir::OpKind::Log,   ir::OpKind::Log2,
      ir::OpKind::Sin, ir::OpKind::Cos,   ir::OpKind::Tanh,  ir::OpKind::Erf,
      ir::OpKind::Abs, ir::OpKind::Recip, ir::OpKind::Floor, ir::OpKind::Ceil};
  static constexpr ir::OpKind kBinary[] = {
      ir::OpKind::Add, ir::OpKind::Sub, ir::OpKind::Mul, ir::OpKind::Div,   ir::OpKind::Rem,
      ir::OpKind::Min, ir::OpKind::Max, ir::OpKind::Pow, ir::OpKind::Atan2, ir::OpKind::And,
      ir::OpKind::Or,  ir::OpKind::Xor, ir::OpKind::Shl, ir::OpKind::Shr,   ir::OpKind::Eq,
      ir::OpKind::Ne,  ir::OpKind::Lt,  ir::OpKind::Le,  ir::OpKind::Gt,    ir::OpKind::Ge};

  static std::size_t index(DType t) { return static_cast<std::size_t>(t); }

  static std::vector<std::string> edge_values(DType t) {
    switch (t) {
      case DType::F32:
        return {"0",      "-0",  "1",    "-1.5", "3",     "0.1",       "1e+30",
                "-1e-30", "inf", "-inf", "nan",  "70000", "2147483648"};
      case DType::F16:
      case DType::BF16:
        return {"0", "-0", "1", "-1.5", "3", "0.1", "65504", "1e-07", "inf", "nan", "300"};
      case DType::F8E4M3:
      case DType::F8E5M2:
        return {"0", "-0", "1", "-1.5", "0.1", "448", "500", "57344", "0.001", "inf", "nan"};
      case DType::I32:
        return {"0", "1", "-1", "7", "-7", "31", "32", "-2147483648", "2147483647"};
      case DType::U32:
        return {"0", "1", "7", "31", "32", "2147483648", "4294967295"};
      case DType::U8:
        return {"0", "1", "7", "128", "255"};
      case DType::I8:
        return {"0", "1", "-1", "7", "-128", "127"};
      case DType::U16:
        return {"0", "1", "15", "32768", "65535"};
      case DType::Bool:
        return {"0", "1"};
    }
    return {};
  }

  /// The value id of constant `a` of type t, declared on first use.
  std::string value(DType t, std::size_t a) {
    auto& ids = consts_[index(t)];
    if (ids.size() <= a) ids.resize(values_[index(t)].size());
    if (ids[a].empty()) {
      ids[a] = fresh();
      body_ += "  " + ids[a] + " = const " + values_[index(t)][a] + " : " +
               std::string(dtype_name(t)) + "\n";
    }
    return ids[a];
  }

  std::string fresh() { return "%" + std::to_string(next_++); }

  /// Appends `%r = kind operands : type` and stores it into the output of its type.
  void append_op(ir::OpKind kind, DType operand, DType type,
                 const std::vector<std::string>& operands) {
    const bool int_division = (kind == ir::OpKind::Div || kind == ir::OpKind::Rem) &&
                              !is_float(operand) && operands.back() == value(operand, 0);
    if (int_division) return;  // the simulator reports division by zero
    std::string line = "  " + fresh() + " = " + std::string(ir::op_name(kind));
    for (std::size_t i = 0; i < operands.size(); ++i) {
      line += (i == 0 ? " " : ", ") + operands[i];
    }
    const std::string result = "%" + std::to_string(next_ - 1);
    const std::string where = fresh();
    body_ += line + " : " + std::string(dtype_name(type)) + "\n";
    body_ += "  " + where + " = const " + std::to_string(stores_[index(type)]++) + " : u32\n";
    body_ += "  store out_" + std::string(dtype_name(type)) + "[" + where + "], " + result + " : " +
             std::string(dtype_name(type)) + "\n";
  }

  void unary(ir::OpKind k, DType t, std::size_t a) {
    const bool neg_or_abs = k == ir::OpKind::Neg || k == ir::OpKind::Abs;
    const bool ok = k == ir::OpKind::Not ? !is_float(t)
                    : neg_or_abs         ? is_float(t) || is_signed_int(t)
                                         : is_float(t);
    if (ok) append_op(k, t, t, {value(t, a)});
  }

  void binary(ir::OpKind k, DType t, std::size_t a, std::size_t b) {
    const bool logic = k == ir::OpKind::And || k == ir::OpKind::Or || k == ir::OpKind::Xor;
    const bool shift = k == ir::OpKind::Shl || k == ir::OpKind::Shr;
    const bool float_only = k == ir::OpKind::Pow || k == ir::OpKind::Atan2;
    const bool compare = ir::op_class(k) == ir::OpClass::Compare;
    const bool ok = compare      ? true
                    : logic      ? !is_float(t)
                    : shift      ? is_integer(t)
                    : float_only ? is_float(t)
                                 : t != DType::Bool;
    if (ok) append_op(k, t, compare ? DType::Bool : t, {value(t, a), value(t, b)});
  }

  void conversion(ir::OpKind k, DType from, DType to, std::size_t a) {
    append_op(k, from, to, {value(from, a)});
  }

  std::vector<std::string> values_[std::size(kTypes)];
  std::vector<std::string> consts_[std::size(kTypes)];
  std::size_t stores_[std::size(kTypes)] = {};
  std::string body_;
  int next_ = 0;
};

TEST(PassDifferential, FoldingMatchesTheSimulatorOnEveryOpAndType) {
  OpTable table;
  const ir::Kernel kernel = ir::parse_kernel(table.kernel());
  ASSERT_EQ(problems_of(kernel), "");
  ir::Kernel folded = kernel;
  codegen::fold_constants(folded, codegen::TargetProfile::cuda(90));
  ASSERT_EQ(problems_of(folded), "");
  const auto computed = [](const ir::Kernel& k) {
    std::size_t n = 0;
    ir::walk(k.body, [&](const ir::Op& op) {
      n += op.kind != ir::OpKind::Const && op.kind != ir::OpKind::Store;
    });
    return n;
  };
  EXPECT_LT(computed(folded), computed(kernel) / 4) << "too little was folded";
  Args args;
  for (const DType t : OpTable::kTypes) {
    args.tensors.push_back(poisoned(t, table.stores(t)));
    args.scalars.emplace_back();
  }
  expect_same_outputs(kernel, folded, args, runtime::Grid::elementwise(1, 1));
}

}  // namespace
}  // namespace iron::pass_test
