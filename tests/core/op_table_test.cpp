/// The op table's internal consistency: every rule its readers rely on (names, shapes, traits,
/// type rules), checked on the table itself and shown to catch a broken row; and the verifier
/// accepting exactly the element types op_defined_on allows.
#include "iron/core/op_table.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <map>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "iron/core/ir.hpp"
#include "iron/core/parser.hpp"
#include "iron/core/verifier.hpp"

namespace iron::ir {
namespace {

constexpr std::array kEveryDType = {DType::F32, DType::F16, DType::BF16, DType::I32, DType::U32,
                                    DType::U8,  DType::I8,  DType::U16,  DType::Bool};

/// Lower-case words of letters and digits joined by `.` or `_`.
bool well_formed_name(std::string_view name) {
  if (name.empty() || name.front() == '.' || name.back() == '.') return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_';
  });
}

/// Collects "NAME: why" for each broken rule of one row.
class RowCheck {
 public:
  RowCheck(const OpInfo& op, std::vector<std::string>& problems) : op_(op), problems_(problems) {}

  void run() {
    if (!well_formed_name(op_.name)) bad("name is not lower-case words joined by '.' or '_'");
    by_class();
    by_type_rule();
    by_traits();
  }

 private:
  void bad(std::string_view why) { problems_.push_back(fmt::format("{}: {}", op_.name, why)); }
  void expect(bool holds, std::string_view why) {
    if (!holds) bad(why);
  }

  bool is(OpTrait t) const { return op_.has(t); }

  /// The operand count, blocks, result and traits each op class implies.
  void by_class() {
    switch (op_.op_class) {
      case OpClass::Leaf:
        expect(op_.operands == 0, "a leaf takes operands");
        expect(op_.result == ResultRule::Required && is(kPure), "a leaf is not a pure value");
        break;
      case OpClass::Unary:
        expect(op_.operands == 1, "a unary op does not take one operand");
        expect(op_.result == ResultRule::Required && is(kPure), "a unary op is not a pure value");
        break;
      case OpClass::Binary:
        expect(op_.operands == 2, "a binary op does not take two operands");
        expect(op_.result == ResultRule::Required && is(kPure), "a binary op is not a pure value");
        break;
      case OpClass::Compare:
        expect(op_.operands == 2, "a comparison does not take two operands");
        expect(op_.result == ResultRule::Required && is(kPure), "a comparison is not a pure value");
        expect(op_.types == TypeRule::Comparison, "a comparison without the comparison type rule");
        break;
      case OpClass::Atomic:
        expect(op_.operands == 2, "an atomic does not take an index and a value");
        expect(op_.result == ResultRule::Optional, "an atomic's previous value is not optional");
        expect(is(kEffect) && is(kReadsMemory) && is(kWritesMemory),
               "an atomic does not read, write and have an effect");
        break;
      case OpClass::Simd:
      case OpClass::Group:
        expect(op_.result == ResultRule::Required, "a collective defines no value");
        expect(is(kConvergent), "a collective is not convergent");
        expect(op_.types == TypeRule::CollectiveNumber || op_.types == TypeRule::CollectiveMove,
               "a collective without a collective type rule");
        break;
      case OpClass::Other:
        break;
    }
    if (op_.op_class != OpClass::Other)
      expect(op_.blocks == 0, "only ops of class Other own blocks");
  }

  /// The operand count and shape each type rule reads.
  void by_type_rule() {
    switch (op_.types) {
      case TypeRule::Constant:
      case TypeRule::ConstexprValue:
      case TypeRule::ThreadGeometry:
        expect(op_.op_class == OpClass::Leaf, "a leaf's type rule on an op that is not a leaf");
        break;
      case TypeRule::TargetQuery:
        expect(op_.op_class == OpClass::Leaf && op_.result == ResultRule::Required && is(kPure),
               "a target query is not a pure leaf value");
        break;
      case TypeRule::Specialization:
        expect(op_.operands == 1 && op_.result == ResultRule::Required && is(kPure),
               "a specialization is not a pure value of its condition");
        break;
      case TypeRule::TileCopy:
      case TypeRule::TensorCopy:
        expect(op_.result == ResultRule::Forbidden && is(kEffect) && is(kReadsMemory) &&
                   is(kWritesMemory),
               "a tile copy does not read a tensor and write shared memory");
        break;
      case TypeRule::Mbarrier:
        expect(op_.result == ResultRule::Forbidden && is(kEffect) && is(kWritesMemory),
               "an mbarrier op does not update its barrier");
        break;
      case TypeRule::FloatOrSigned:
      case TypeRule::IntegerOrBool:
      case TypeRule::Integer:
      case TypeRule::Float:
      case TypeRule::Number:
        expect(op_.operands >= 1 && op_.blocks == 0 && op_.result == ResultRule::Required,
               "an arithmetic type rule on an op that is not a value of its operands");
        break;
      case TypeRule::Comparison:
        expect(op_.op_class == OpClass::Compare, "the comparison type rule on another class");
        break;
      case TypeRule::Selection:
        expect(op_.operands == 3, "a selection does not take a condition and two values");
        break;
      case TypeRule::Conversion:
      case TypeRule::Reinterpretation:
      case TypeRule::SameAsResult:
        expect(op_.operands == 1 && op_.result == ResultRule::Required,
               "a conversion or copy is not a value of one operand");
        break;
      case TypeRule::TensorAccess:
      case TypeRule::SharedAccess:
        expect(is(kWritesMemory)
                   ? op_.operands == 2 && op_.result == ResultRule::Forbidden
                   : op_.operands == 1 && op_.result == ResultRule::Required && is(kReadsMemory),
               "an access is neither a load (index, value) nor a store (index, value; no result)");
        break;
      case TypeRule::AtomicNumber:
      case TypeRule::AtomicInteger:
        expect(op_.op_class == OpClass::Atomic, "an atomic type rule on another class");
        break;
      case TypeRule::CollectiveNumber:
        expect(op_.operands == 1, "a collective of a value takes more than the value");
        break;
      case TypeRule::CollectiveMove:
        expect(op_.operands == 2, "a shuffle does not take a value and a lane");
        break;
      case TypeRule::VariableStore:
        expect(op_.operands == 2 && op_.result == ResultRule::Forbidden && is(kWritesMemory),
               "a variable store does not write a value into a variable");
        break;
      case TypeRule::LoopBounds:
        expect(op_.operands == 3 && op_.blocks == 1, "a loop does not take bounds and a body");
        break;
      case TypeRule::RegisterArray:
        expect(op_.operands == 1 && op_.result == ResultRule::Required && !is(kPure),
               "a register array is not declared from an initial value");
        break;
      case TypeRule::RegisterAccess:
        expect(is(kWritesMemory)
                   ? op_.operands == 3 && op_.result == ResultRule::Forbidden
                   : op_.operands == 2 && op_.result == ResultRule::Required && is(kReadsMemory),
               "a register access is neither a load (array, index) nor a store (array, index, "
               "value; no result)");
        break;
      case TypeRule::FragmentDecl:
        expect(op_.operands == 1 && op_.result == ResultRule::Required && !is(kPure),
               "a fragment is not declared from an initial value");
        break;
      case TypeRule::FragmentAccess:
        expect(op_.operands == 3 && op_.result == ResultRule::Forbidden &&
                   op_.traits == kFragmentUpdate,
               "a fragment access is not a simdgroup's load or store of (offset, fragment, "
               "stride)");
        break;
      case TypeRule::FragmentMultiply:
        expect(op_.operands == 3 && op_.result == ResultRule::Forbidden &&
                   op_.traits == kFragmentUpdate,
               "a fragment product does not update d from a and b across the simdgroup");
        break;
      case TypeRule::WarpgroupMultiply:
        expect(op_.operands == 5 && op_.result == ResultRule::Forbidden &&
                   op_.traits == kFragmentUpdate,
               "a warpgroup product does not update d from two offsets and strides");
        break;
      case TypeRule::WarpgroupWait:
        expect(op_.operands == 1 && op_.result == ResultRule::Forbidden &&
                   op_.traits == kFragmentUpdate,
               "a warpgroup wait does not update the accumulator it waits for");
        break;
      case TypeRule::AsyncCopy:
        expect(op_.operands == 3 && op_.result == ResultRule::Forbidden && is(kWritesMemory) &&
                   is(kReadsMemory),
               "an asynchronous copy does not read a tensor and write shared memory");
        break;
      case TypeRule::AsyncGroup:
        expect(op_.operands == 0 && op_.result == ResultRule::Forbidden && is(kEffect),
               "a copy group op takes operands or defines a value");
        break;
      case TypeRule::PipelineBounds:
        expect(op_.operands == 3 && op_.blocks == 2 && op_.result == ResultRule::Forbidden &&
                   is(kEffect),
               "a pipeline does not take bounds and a load and a compute block");
        break;
      case TypeRule::PipelineIndex:
        expect(op_.operands == 0 && op_.blocks == 0 && op_.result == ResultRule::Required &&
                   is(kEffect),
               "a pipeline index takes operands or defines no value, or may move");
        break;
      case TypeRule::FragmentElement:
        expect(op_.blocks == 0 && op_.operands >= 1 && op_.operands <= 2 &&
                   (op_.result == ResultRule::Required) != is(kWritesMemory),
               "a fragment element op does not take a fragment (and a value to set it, or a row "
               "vector to read), or both sets it and defines a value");
        break;
      case TypeRule::FragmentTransform:
        expect(op_.operands == 2 && op_.result == ResultRule::Forbidden &&
                   op_.traits == kFragmentUpdate,
               "a fragment transform does not write one fragment from another across the "
               "simdgroup");
        break;
      case TypeRule::Condition:
        expect(op_.operands == 1 && op_.blocks == 2,
               "a branch does not take a condition and two "
               "blocks");
        break;
      case TypeRule::NoOperands:
        expect(op_.operands == 0, "an op of no operands takes operands");
        break;
    }
  }

  /// What the traits, blocks, result and C function imply of each other.
  void by_traits() {
    if (is(kPure)) {
      expect(!is(kEffect) && !is(kReadsMemory) && !is(kWritesMemory) && !is(kConvergent),
             "a pure op has an effect, reads or writes memory, or is convergent");
    }
    if (op_.blocks > 0) expect(is(kEffect), "an op with blocks has no effect");
    if (is(kWritesMemory)) expect(is(kEffect), "an op that writes memory has no effect");
    if (op_.result == ResultRule::Forbidden) {
      expect(is(kEffect), "an op that defines no value has no effect (it would be dead)");
    }
    if (op_.result == ResultRule::Optional) {
      expect(op_.op_class == OpClass::Atomic, "only atomics define a value optionally");
    }
    if (is(kCommutative)) {
      expect(op_.op_class == OpClass::Binary || op_.op_class == OpClass::Compare,
             "a commutative op that is not a binary op or a comparison");
    }
    if (!op_.c_function.empty()) {
      expect(type_rule_allows(op_.types, DType::F32) && is(kPure) && op_.operands >= 1,
             "a C math function on an op that is not a pure float op");
    }
    if (is(kApproximate)) {
      expect(is(kPure) && op_.types == TypeRule::Float && op_.c_function.empty(),
             "an approximate op is not a pure float function without a C function");
    }
  }

  const OpInfo& op_;
  std::vector<std::string>& problems_;
};

/// Every broken rule of `table`, as "NAME: why"; empty when the table is consistent.
std::vector<std::string> table_problems(std::span<const OpInfo> table) {
  std::vector<std::string> problems;
  std::set<std::string_view> names;
  for (const OpInfo& op : table) {
    if (!names.insert(op.name).second) problems.push_back(fmt::format("{}: named twice", op.name));
    RowCheck(op, problems).run();
  }
  return problems;
}

TEST(OpTable, IsConsistent) { EXPECT_EQ(table_problems(kOpTable), std::vector<std::string>{}); }

TEST(OpTable, EveryNameParsesBackToItsKind) {
  for (std::size_t i = 0; i < kOpTable.size(); ++i) {
    const auto kind = static_cast<OpKind>(i);
    OpKind parsed = OpKind::Const;
    ASSERT_TRUE(parse_op_name(kOpTable[i].name, parsed)) << kOpTable[i].name;
    EXPECT_EQ(parsed, kind) << kOpTable[i].name;
    EXPECT_EQ(&op_info(kind), &kOpTable[i]);
  }
}

/// Only the leaves, the accesses and extract hold anything besides their operands (what the
/// text form spells out and the hash reads), each what its type rule names.
TEST(OpTable, AttributesFollowTheTypeRule) {
  std::map<OpAttributes, std::vector<std::string_view>> held;
  for (std::size_t i = 0; i < kOpTable.size(); ++i) {
    const OpAttributes a = op_attributes(static_cast<OpKind>(i));
    if (a != OpAttributes::None) held[a].push_back(kOpTable[i].name);
  }
  const std::map<OpAttributes, std::vector<std::string_view>> expected = {
      {OpAttributes::Literal, {"const"}},
      {OpAttributes::Constexpr, {"constexpr"}},
      {OpAttributes::Builtin, {"builtin"}},
      {OpAttributes::Tensor, {"load", "store"}},
      {OpAttributes::Shared, {"shared.load", "shared.store"}},
      {OpAttributes::TensorOrShared,
       {"atomic.add", "atomic.max", "atomic.min", "atomic.and", "atomic.or", "atomic.xor",
        "atomic.xchg"}},
      {OpAttributes::Lane, {"extract"}},
      {OpAttributes::Count, {"regs"}},
      {OpAttributes::Fragment, {"frag"}},
      {OpAttributes::FragmentMemory, {"frag.load", "frag.store"}},
      {OpAttributes::FragmentSlot, {"frag.get", "frag.set", "frag.coord", "frag.rowvalue"}},
      {OpAttributes::Reduction, {"frag.rowreduce"}},
      {OpAttributes::AsyncCopy, {"copy.async"}},
      {OpAttributes::Pending, {"async.wait"}},
      {OpAttributes::StageIndex, {"pipeline.index"}},
      {OpAttributes::Stages, {"pipeline"}},
      {OpAttributes::WarpgroupOperands, {"wg.mma"}},
      {OpAttributes::WarpgroupPending, {"wg.wait"}},
      {OpAttributes::Feature, {"target.has"}},
      {OpAttributes::TileBox, {"copy.tile"}},
      {OpAttributes::TensorBox, {"copy.tensor"}},
      {OpAttributes::Barrier,
       {"mbar.init", "mbar.expect", "mbar.wait", "mbar.inval", "mbar.arrive"}},
      {OpAttributes::RegisterBudget, {"wg.registers"}},
      {OpAttributes::Turn, {"wg.turn"}},
      {OpAttributes::Threads, {"barrier.among"}},
  };
  EXPECT_EQ(held, expected);
}

/// The table with row `kind` changed by `edit`, and the problems found in it.
template <class Edit>
std::vector<std::string> problems_after(OpKind kind, Edit edit) {
  auto table = kOpTable;
  edit(table[static_cast<std::size_t>(kind)]);
  return table_problems(table);
}

TEST(OpTable, ConsistencyCheckCatchesABrokenRow) {
  using Problems = std::vector<std::string>;
  EXPECT_EQ(problems_after(OpKind::Sub, [](OpInfo& op) { op.name = "add"; }),
            Problems{"add: named twice"});
  EXPECT_EQ(problems_after(OpKind::Add, [](OpInfo& op) { op.traits |= kEffect; }),
            Problems{"add: a pure op has an effect, reads or writes memory, or is convergent"});
  EXPECT_EQ(problems_after(OpKind::Neg, [](OpInfo& op) { op.traits |= kCommutative; }),
            Problems{"neg: a commutative op that is not a binary op or a comparison"});
  EXPECT_EQ(problems_after(OpKind::Max, [](OpInfo& op) { op.operands = 3; }),
            Problems{"max: a binary op does not take two operands"});
  EXPECT_EQ(problems_after(OpKind::For, [](OpInfo& op) { op.traits = 0; }),
            Problems{"for: an op with blocks has no effect"});
  EXPECT_EQ(problems_after(OpKind::Barrier, [](OpInfo& op) { op.traits = kConvergent; }),
            Problems{"barrier: an op that defines no value has no effect (it would be dead)"});
  EXPECT_EQ(problems_after(OpKind::Shl, [](OpInfo& op) { op.c_function = "ldexp"; }),
            Problems{"shl: a C math function on an op that is not a pure float op"});
  EXPECT_EQ(problems_after(OpKind::Exp2Approx, [](OpInfo& op) { op.c_function = "exp2"; }),
            Problems{"exp2.approx: an approximate op is not a pure float function without a C "
                     "function"});
  EXPECT_EQ(problems_after(OpKind::Lt, [](OpInfo& op) { op.types = TypeRule::Number; }),
            Problems{"lt: a comparison without the comparison type rule"});
  EXPECT_EQ(problems_after(OpKind::SimdShuffle, [](OpInfo& op) { op.operands = 1; }),
            Problems{"simd.shuffle: a shuffle does not take a value and a lane"});
  EXPECT_EQ(problems_after(OpKind::Store, [](OpInfo& op) { op.result = ResultRule::Required; }),
            Problems{"store: an access is neither a load (index, value) nor a store (index, "
                     "value; no result)"});
  EXPECT_EQ(problems_after(OpKind::AtomicAdd, [](OpInfo& op) { op.traits &= ~kReadsMemory; }),
            Problems{"atomic.add: an atomic does not read, write and have an effect"});
  EXPECT_EQ(problems_after(OpKind::Exp, [](OpInfo& op) { op.name = "Exp"; }),
            Problems{"Exp: name is not lower-case words joined by '.' or '_'"});
}

/// A kernel whose one op of kind `k` works on values of type `t` (its operands are loaded from
/// a tensor of that type, a shuffle's lane is the thread's id), its result stored.
std::string kernel_of(OpKind k, DType t) {
  const OpInfo& op = op_info(k);
  const std::string_view type = dtype_name(t);
  std::string line;
  if (op.op_class == OpClass::Atomic) {
    line = fmt::format("%2 = {} y[%0], %1 : {}", op.name, type);
  } else if (op.types == TypeRule::CollectiveMove) {
    line = fmt::format("%2 = {} %1, %0 : {}", op.name, type);
  } else {
    std::string operands;
    for (int i = 0; i < op.operands; ++i) operands += i == 0 ? " %1" : ", %1";
    line = fmt::format("%2 = {}{} : {}", op.name, operands, type);
  }
  return fmt::format(
      "kernel k dtype=f32 mode=tiled\n"
      "  param in x: {0}\n"
      "  param out y: {0}\n"
      "  rule multiple_of 32\n"
      "  values 3\n"
      "{{\n"
      "  %0 = builtin global_id.x : u32\n"
      "  %1 = load x[%0] : {0}\n"
      "  {1}\n"
      "  store y[%0], %2 : {0}\n"
      "}}\n",
      type, line);
}

/// The verifier and op_defined_on agree on every op whose type rule constrains its element
/// type, for every dtype: the simulator and constant folding, which ask op_defined_on, never
/// see an op the verifier let through on a type they do not define it on.
TEST(OpTable, VerifierAcceptsExactlyTheTypesAnOpIsDefinedOn) {
  int checked = 0;
  for (std::size_t i = 0; i < kOpTable.size(); ++i) {
    const auto k = static_cast<OpKind>(i);
    const TypeRule rule = kOpTable[i].types;
    const bool element_rule = rule == TypeRule::FloatOrSigned || rule == TypeRule::IntegerOrBool ||
                              rule == TypeRule::Integer || rule == TypeRule::Float ||
                              rule == TypeRule::Number || rule == TypeRule::CollectiveNumber ||
                              rule == TypeRule::CollectiveMove || rule == TypeRule::AtomicNumber ||
                              rule == TypeRule::AtomicInteger;
    if (!element_rule) continue;
    for (DType t : kEveryDType) {
      const std::string text = kernel_of(k, t);
      const std::vector<std::string> problems = verify(parse_kernel(text));
      if (op_defined_on(k, t)) {
        EXPECT_EQ(problems, std::vector<std::string>{}) << text;
      } else {
        ASSERT_EQ(problems.size(), 1u) << text;
        EXPECT_EQ(problems[0].rfind(fmt::format("kernel k: {}: ", kOpTable[i].name), 0), 0u)
            << problems[0];
      }
      ++checked;
    }
  }
  EXPECT_GT(checked, 400);
}

TEST(OpTable, NegAndAbsAreDefinedOnFloatsAndSignedIntegersOnly) {
  for (OpKind k : {OpKind::Neg, OpKind::Abs}) {
    for (DType t : kEveryDType) {
      EXPECT_EQ(op_defined_on(k, t), is_float(t) || is_signed_int(t)) << dtype_name(t);
    }
  }
}

}  // namespace
}  // namespace iron::ir
