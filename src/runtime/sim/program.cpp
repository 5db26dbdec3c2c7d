/// Flattens a kernel into a Program after the verifier has accepted it: operand rows and types,
/// buffers, immediates and how each op runs. A malformed kernel reports the verifier's findings.
#include "program.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <string>

#include "iron/core/op_views.hpp"
#include "iron/core/verifier.hpp"
#include "iron/runtime/sim.hpp"

namespace iron::runtime::sim {
namespace {

using ir::OpKind;
using ir::TypeRule;

/// How ops of kind k run: ops of one type rule run alike.
constexpr Exec exec_of(OpKind k) {
  const ir::OpInfo& info = ir::op_info(k);
  switch (info.types) {
    case TypeRule::Constant:
      return Exec::Constant;
    case TypeRule::ConstexprValue:
      return Exec::ConstexprRef;
    case TypeRule::ThreadGeometry:
      return Exec::Builtin;
    case TypeRule::FloatOrSigned:
    case TypeRule::IntegerOrBool:
    case TypeRule::Integer:
    case TypeRule::Float:
    case TypeRule::Number:
    case TypeRule::Comparison:
    case TypeRule::Selection:
    case TypeRule::Conversion:
    case TypeRule::Reinterpretation:
      return Exec::Evaluate;
    case TypeRule::TensorAccess:
    case TypeRule::SharedAccess:
      return info.has(ir::kWritesMemory) ? Exec::Store : Exec::Load;
    case TypeRule::AtomicNumber:
    case TypeRule::AtomicInteger:
      return Exec::Atomic;
    case TypeRule::CollectiveNumber:
      return info.op_class == ir::OpClass::Group ? Exec::Reduce : Exec::Simd;
    case TypeRule::CollectiveMove:
      return Exec::Simd;
    case TypeRule::SameAsResult:
      return Exec::Copy;
    case TypeRule::VariableStore:
      return Exec::VarStore;
    case TypeRule::LoopBounds:
      return Exec::For;
    case TypeRule::Condition:
      return Exec::If;
    case TypeRule::NoOperands:
      if (k == OpKind::WgTurn) return Exec::Turn;
      if (k == OpKind::BarrierAmong) return Exec::BarrierAmong;
      if (k == OpKind::BarrierSimdgroup) return Exec::SimdgroupBarrier;
      if (k == OpKind::WgRegisters) return Exec::NoEffect;
      if (k == OpKind::Exit) return Exec::Exit;
      return k == OpKind::FenceProxyAsync ? Exec::ProxyFence : Exec::Barrier;
    case TypeRule::RegisterArray:
      return Exec::RegsDecl;
    case TypeRule::RegisterAccess:
      return info.has(ir::kWritesMemory) ? Exec::RegsStore : Exec::RegsLoad;
    case TypeRule::FragmentDecl:
      return Exec::FragDecl;
    case TypeRule::FragmentAccess:
      return k == OpKind::FragStore ? Exec::FragStore : Exec::FragLoad;
    case TypeRule::FragmentMultiply:
      return Exec::FragMma;
    case TypeRule::AsyncCopy:
      return Exec::CopyAsync;
    case TypeRule::AsyncGroup:
      if (k == OpKind::WgCommit) return Exec::WgCommit;
      return k == OpKind::AsyncWait ? Exec::AsyncWait : Exec::AsyncCommit;
    case TypeRule::FragmentElement:
      if (k == OpKind::FragCoord) return Exec::FragCoord;
      if (k == OpKind::FragRowValue) return Exec::FragRowValue;
      return info.has(ir::kWritesMemory) ? Exec::FragSet : Exec::FragGet;
    case TypeRule::FragmentTransform:
      return k == OpKind::FragRowReduce ? Exec::FragReduce : Exec::FragConvert;
    case TypeRule::WarpgroupMultiply:
      return Exec::WgMma;
    case TypeRule::WarpgroupWait:
      return Exec::WgWait;
    case TypeRule::PipelineBounds:  // sim_run expands pipelines first; compile() refuses them
    case TypeRule::PipelineIndex:
    case TypeRule::TargetQuery:     // sim_run answers target queries first; compile() refuses them
    case TypeRule::Specialization:  // and binds or drops specializations
    case TypeRule::TileCopy:        // and lowers tile copies
      break;
    case TypeRule::TensorCopy:
      return Exec::CopyTensor;
    case TypeRule::Mbarrier:
      return Exec::Mbarrier;
  }
  return Exec::Barrier;
}

/// Every op the interpreter evaluates with ir::evaluate is one that ir::evaluate computes.
constexpr bool evaluates_exactly_the_evaluable_ops() {
  for (std::size_t i = 0; i < ir::kOpTable.size(); ++i) {
    const auto k = static_cast<OpKind>(i);
    if ((exec_of(k) == Exec::Evaluate) != ir::is_evaluable(k)) return false;
  }
  return true;
}
static_assert(evaluates_exactly_the_evaluable_ops());

/// Throws SimError(BadArgument) listing the verifier's findings, if any.
void refuse_malformed(const ir::Kernel& kernel) {
  const std::vector<std::string> problems = ir::verify(kernel);
  if (problems.empty()) return;
  std::string text;
  for (const std::string& p : problems) text += (text.empty() ? "" : "\n") + p;
  throw SimError(SimError::Kind::BadArgument, text);
}

class Compiler {
 public:
  explicit Compiler(const ir::Kernel& kernel) : k_(kernel) {}

  Program run() {
    types_.assign(k_.num_values, DType::U32);
    vectors_.assign(k_.num_values, {});
    ir::walk(k_.body, [&](const ir::Op& op) {
      if (op.result != ir::kNoValue) types_[op.result] = op.type;
    });
    p_.kernel = &k_;
    p_.rows = k_.num_values + 1;  // the last row takes results nobody reads
    p_.tensor_use.resize(k_.params.size());
    p_.main = block(k_.body, 0);
    mark_index_arithmetic(p_);
    return std::move(p_);
  }

 private:
  Range block(const ir::Block& b, std::uint32_t depth) {
    const auto begin = static_cast<std::uint32_t>(p_.code.size());
    p_.code.resize(begin + b.ops.size());
    for (std::size_t i = 0; i < b.ops.size(); ++i) p_.code[begin + i] = instr(b.ops[i]);
    for (std::size_t i = 0; i < b.ops.size(); ++i) {
      const ir::Op& op = b.ops[i];
      if (op.blocks.empty()) continue;
      p_.depth = std::max(p_.depth, depth + 1);
      const std::size_t nested = p_.code.size();
      const Range body = block(op.blocks[0], depth + 1);
      const Range other = op.blocks.size() > 1 ? block(op.blocks[1], depth + 1) : Range{};
      Instr& in = p_.code[begin + i];
      in.body = body;
      in.other = other;
      in.concurrent =
          in.exec == Exec::If && body.end > body.begin && other.end > other.begin &&
          std::any_of(p_.code.begin() + static_cast<std::ptrdiff_t>(nested), p_.code.end(),
                      [](const Instr& x) { return x.kind == OpKind::MbarWait; });
    }
    return {begin, begin + static_cast<std::uint32_t>(b.ops.size())};
  }

  Instr instr(const ir::Op& op) {
    Instr in;
    in.kind = op.kind;
    in.exec = exec_of(op.kind);
    in.type = op.type;
    in.lanes = op.lanes;
    in.op = &op;
    in.operands = static_cast<std::uint8_t>(std::min(op.args.size(), std::size(in.args)));
    for (std::size_t i = 0; i < in.operands; ++i) {
      in.args[i] = op.args[i];
      in.arg_types[i] = types_[op.args[i]];
    }
    in.result = result_row(op, in);
    switch (in.exec) {
      case Exec::Constant:
        in.imm = ir::constant_value(op.type, op.fvalue, op.ivalue).bits;
        break;
      case Exec::ConstexprRef:
        in.buffer = op.param;
        break;
      case Exec::Builtin:
        in.builtin = op.builtin;
        in.axis = op.axis;
        break;
      case Exec::Copy:
        if (op.kind == OpKind::Extract) read_lane(ir::ExtractOp(op), in);
        break;
      case Exec::RegsDecl:
        in.elements = static_cast<std::uint32_t>(op.ivalue);
        break;
      case Exec::RegsLoad:
      case Exec::RegsStore:
        in.args[0] = vectors_[op.args[0]].first_row;
        in.elements = vectors_[op.args[0]].lanes;
        break;
      case Exec::Load:
      case Exec::Store:
      case Exec::Atomic:
        resolve_buffer(ir::AccessOp(op), in);
        break;
      case Exec::FragDecl:
        in.fragment = op.fragment;
        in.elements = op.fragment.elements_per_lane();
        break;
      case Exec::FragLoad:
      case Exec::FragStore:
        fragment_access(ir::FragAccessOp(op), in);
        break;
      case Exec::FragGet:
      case Exec::FragSet:
      case Exec::FragCoord:
      case Exec::FragRowValue: {
        const ir::FragSlotOp slot(op);
        in.fragment = fragments_[slot.fragment()];
        in.inner = slot.slot();
        in.axis = op.axis;
        in.args[0] = vectors_[slot.fragment()].first_row;
        if (in.exec == Exec::FragRowValue) in.args[1] = vectors_[slot.row_vector()].first_row;
        break;
      }
      case Exec::FragReduce:
      case Exec::FragConvert: {
        const ir::FragTransformOp transform(op);
        in.fragment = fragments_[transform.source()];
        in.inner = static_cast<std::uint32_t>(op.ivalue);
        in.args[0] = vectors_[transform.destination()].first_row;
        in.args[1] = vectors_[transform.source()].first_row;
        break;
      }
      case Exec::CopyAsync:
        in.buffer = op.shared;
        in.on_shared = true;
        in.source = op.param;
        in.on_output = ir::is_output(k_.params[op.param].kind);
        p_.tensor_use[op.param].loaded = true;
        break;
      case Exec::AsyncWait:
        in.inner = static_cast<std::uint32_t>(op.ivalue);
        break;
      case Exec::CopyTensor:
        in.buffer = op.shared;
        in.on_shared = true;
        in.source = op.shared_b;
        in.inner = static_cast<std::uint32_t>(op.ivalue);
        p_.tensor_use[k_.tensor_maps[in.inner].param].loaded = true;
        break;
      case Exec::Mbarrier:
        in.buffer = op.shared;
        in.imm = static_cast<Slot>(op.ivalue);
        break;
      case Exec::AsyncCommit:
      case Exec::WgCommit:
      case Exec::ProxyFence:
      case Exec::Exit:
      case Exec::NoEffect:
        break;
      case Exec::WgMma:
        in.fragment = fragments_[op.args[0]];
        in.elements = in.fragment.elements_per_lane();
        in.inner = static_cast<std::uint32_t>(op.ivalue);
        in.layout = op.layout;
        in.buffer = op.shared;
        in.source = op.shared_b;
        in.on_shared = true;
        in.args[0] = vectors_[op.args[0]].first_row;
        if (ir::WgMmaOp(op).a_in_registers()) in.args[1] = vectors_[op.args[1]].first_row;
        p_.warpgroup_products = true;
        break;
      case Exec::Turn:
        in.inner = static_cast<std::uint32_t>(op.ivalue);
        in.axis = op.axis;
        break;
      case Exec::BarrierAmong:
        in.inner = static_cast<std::uint32_t>(op.ivalue);
        break;
      case Exec::WgWait:
        in.fragment = fragments_[op.args[0]];
        in.inner = static_cast<std::uint32_t>(op.ivalue);
        in.args[0] = vectors_[op.args[0]].first_row;
        break;
      case Exec::FragMma: {
        const ir::FragMmaOp mma(op);
        in.fragment = fragments_[mma.d()];
        in.elements = in.fragment.elements_per_lane();
        in.inner = fragments_[mma.a()].cols;
        for (std::size_t i = 0; i < 3; ++i) in.args[i] = vectors_[op.args[i]].first_row;
        break;
      }
      case Exec::Evaluate:
      case Exec::VarStore:
      case Exec::Barrier:
      case Exec::SimdgroupBarrier:
      case Exec::Simd:
      case Exec::Reduce:
      case Exec::For:
      case Exec::If:
        break;
    }
    return in;
  }

  /// The row `in` writes: its value's, the first of its lanes' for a vector load, a row of its
  /// own for a loop's induction value, the scratch row when it defines nothing.
  std::uint32_t result_row(const ir::Op& op, const Instr& in) {
    if (op.lanes > 1 && op.result != ir::kNoValue) {
      const std::uint32_t first = p_.rows;  // the lanes get rows of their own, read by extract
      p_.rows += op.lanes;
      vectors_[op.result] = {first, op.lanes};
      return first;
    }
    if (op.kind == OpKind::RegsDecl || op.kind == OpKind::FragDecl) {
      // the elements get rows of their own, read by regs.* and frag.*
      const auto elements = static_cast<std::uint32_t>(
          op.kind == OpKind::RegsDecl ? op.ivalue : op.fragment.elements_per_lane());
      const std::uint32_t first = p_.rows;
      p_.rows += elements;
      vectors_[op.result] = {first, elements};
      if (op.kind == OpKind::FragDecl) fragments_[op.result] = op.fragment;
      return first;
    }
    if (op.result != ir::kNoValue) return op.result;
    if (in.exec == Exec::For) return p_.rows++;
    return k_.num_values;
  }

  /// An extract reads the row of its lane of a vector compiled before it.
  void read_lane(ir::ExtractOp<const ir::Op> extract, Instr& in) const {
    const Vector& v = vectors_[extract.vector()];
    in.args[0] = v.first_row + static_cast<std::uint32_t>(extract.lane());
  }

  void resolve_buffer(ir::AccessOp<const ir::Op> access, Instr& in) {
    const ir::Op& op = access.op();
    if (access.is_shared()) {
      in.buffer = op.shared;
      in.on_shared = true;
    } else {
      in.buffer = op.param;
      in.on_output = ir::is_output(k_.params[op.param].kind);
      TensorUse& use = p_.tensor_use[op.param];
      (in.exec == Exec::Atomic ? use.atomic : access.is_store() ? use.stored : use.loaded) = true;
      p_.tensor_atomics |= in.exec == Exec::Atomic;
    }
    if (access.is_store() && op.lanes > 1) {
      in.lane_args = static_cast<std::uint32_t>(p_.lane_args.size());
      const auto values = access.values();
      p_.lane_args.insert(p_.lane_args.end(), values.begin(), values.end());
    }
  }

  /// frag.load/store: the fragment's rows and shape, the tensor or allocation it accesses.
  void fragment_access(ir::FragAccessOp<const ir::Op> access, Instr& in) {
    const ir::Op& op = access.op();
    in.fragment = fragments_[access.fragment()];
    in.elements = in.fragment.elements_per_lane();
    in.layout = access.layout();
    in.args[1] = vectors_[access.fragment()].first_row;
    if (access.is_shared()) {
      in.buffer = op.shared;
      in.on_shared = true;
      return;
    }
    in.buffer = op.param;
    in.on_output = ir::is_output(k_.params[op.param].kind);
    TensorUse& use = p_.tensor_use[op.param];
    (access.is_store() ? use.stored : use.loaded) = true;
  }

  /// Where the lanes of a vector value live.
  /// The rows of a vector's lanes, or of a register array's elements.
  struct Vector {
    std::uint32_t first_row = 0;
    std::uint32_t lanes = 1;
  };

  const ir::Kernel& k_;
  Program p_;
  std::vector<DType> types_;
  std::vector<Vector> vectors_;  ///< by value id: lanes > 1 for a vector compiled so far
  std::map<ir::ValueId, ir::FragmentShape> fragments_;  ///< the fragments declared so far
};

}  // namespace

Program compile(const ir::Kernel& kernel) {
  refuse_malformed(kernel);
  ir::walk(kernel.body, [&](const ir::Op& op) {
    if (op.kind == OpKind::Pipeline) {
      throw SimError(SimError::Kind::BadArgument,
                     fmt::format("{}: a pipeline reached the simulator unexpanded (run "
                                 "expand_pipelines first)",
                                 kernel.name));
    }
    if (op.kind == OpKind::TargetHas || op.kind == OpKind::Specialize) {
      throw SimError(SimError::Kind::BadArgument,
                     fmt::format("{}: a {} reached the simulator unanswered (run "
                                 "select_target_paths first)",
                                 kernel.name,
                                 op.kind == OpKind::TargetHas ? "target query" : "specialization"));
    }
    if (ir::op_info(op.kind).types == ir::TypeRule::TileCopy) {
      throw SimError(SimError::Kind::BadArgument,
                     fmt::format("{}: {} reached the simulator (run lower_tile_copies first)",
                                 kernel.name, ir::op_name(op.kind)));
    }
  });
  return Compiler(kernel).run();
}

}  // namespace iron::runtime::sim
