/// Flattens a kernel into a Program, checking everything the interpreter relies on.
#include "program.hpp"

#include <fmt/format.h>

#include <string>

#include "arith.hpp"
#include "iron/runtime/sim.hpp"

namespace iron::runtime::sim {
namespace {

using ir::OpClass;
using ir::OpKind;

constexpr std::uint32_t kMaxDepth = 256;

struct Shape {
  std::size_t args;
  std::size_t min_blocks = 0, max_blocks = 0;
};

Shape shape_of(OpKind k) {
  switch (ir::op_class(k)) {
    case OpClass::Leaf:
      return {0};
    case OpClass::Unary:
      return {1};
    case OpClass::Binary:
    case OpClass::Compare:
    case OpClass::Atomic:
      return {2};
    case OpClass::Group:
      return {1};
    case OpClass::Simd:
      return {k == OpKind::SimdSum || k == OpKind::SimdMax || k == OpKind::SimdMin ||
                      k == OpKind::SimdPrefixSum || k == OpKind::SimdPrefixExclusiveSum
                  ? 1u
                  : 2u};
    case OpClass::Other:
      break;
  }
  switch (k) {
    case OpKind::Select:
    case OpKind::Fma:
      return {3};
    case OpKind::Store:
    case OpKind::SharedStore:
    case OpKind::VarStore:
      return {2};
    case OpKind::Barrier:
      return {0};
    case OpKind::For:
      return {3, 1, 1};
    case OpKind::If:
      return {1, 1, 2};
    default:
      return {1};  // Cast, Bitcast, Load, SharedLoad, VarDecl, VarLoad, Extract
  }
}

bool is_plain_access(OpKind k) {
  return k == OpKind::Load || k == OpKind::Store || k == OpKind::SharedLoad ||
         k == OpKind::SharedStore;
}

/// Operands of `op`: a vector store takes one value per lane.
std::size_t arity(const ir::Op& op) {
  const bool store = op.kind == OpKind::Store || op.kind == OpKind::SharedStore;
  return shape_of(op.kind).args + (store && op.lanes > 1 ? op.lanes - 1 : 0);
}

class Compiler {
 public:
  explicit Compiler(const ir::Kernel& kernel) : k_(kernel) {}

  Program run() {
    types_.assign(k_.num_values, DType::U32);
    defs_.assign(k_.num_values, nullptr);
    vectors_.assign(k_.num_values, {});
    ir::walk(k_.body, [&](const ir::Op& op) {
      if (op.result < k_.num_values) {
        types_[op.result] = op.type;
        defs_[op.result] = &op;
      }
    });
    p_.kernel = &k_;
    p_.rows = k_.num_values + 1;  // the last row takes results nobody reads
    p_.tensor_use.resize(k_.params.size());
    p_.main = block(k_.body, 0);
    mark_index_arithmetic(p_);
    return std::move(p_);
  }

 private:
  [[noreturn]] void bad(const ir::Op& op, const std::string& what) const {
    throw SimError(SimError::Kind::BadArgument,
                   fmt::format("{}: malformed IR, cannot simulate '{}' at {}: {}", k_.name,
                               ir::op_name(op.kind), format_loc(op.loc), what));
  }

  Range block(const ir::Block& b, std::uint32_t depth) {
    const auto begin = static_cast<std::uint32_t>(p_.code.size());
    p_.code.resize(begin + b.ops.size());
    for (std::size_t i = 0; i < b.ops.size(); ++i) p_.code[begin + i] = instr(b.ops[i]);
    for (std::size_t i = 0; i < b.ops.size(); ++i) {
      const ir::Op& op = b.ops[i];
      if (op.blocks.empty()) continue;
      if (depth >= kMaxDepth) bad(op, fmt::format("nesting deeper than {} blocks", kMaxDepth));
      p_.depth = std::max(p_.depth, depth + 1);
      const Range body = block(op.blocks[0], depth + 1);
      const Range other = op.blocks.size() > 1 ? block(op.blocks[1], depth + 1) : Range{};
      p_.code[begin + i].body = body;
      p_.code[begin + i].other = other;
    }
    return {begin, begin + static_cast<std::uint32_t>(b.ops.size())};
  }

  Instr instr(const ir::Op& op) {
    if (static_cast<unsigned>(op.type) > static_cast<unsigned>(DType::Bool)) bad(op, "bad type");
    if (static_cast<unsigned>(op.kind) > static_cast<unsigned>(OpKind::If)) bad(op, "bad op kind");
    check_lanes(op);
    const Shape s = shape_of(op.kind);
    if (op.args.size() != arity(op)) {
      bad(op, fmt::format("takes {} operands, has {}", arity(op), op.args.size()));
    }
    if (op.blocks.size() < s.min_blocks || op.blocks.size() > s.max_blocks) {
      bad(op, fmt::format("has {} nested blocks", op.blocks.size()));
    }
    Instr in;
    in.kind = op.kind;
    in.cls = ir::op_class(op.kind);
    in.type = op.type;
    in.lanes = op.lanes;
    in.op = &op;
    for (std::size_t i = 0; i < op.args.size(); ++i) {
      if (op.args[i] >= k_.num_values) {
        bad(op, fmt::format("uses %{}, but the kernel has {} values", op.args[i], k_.num_values));
      }
      if (vectors_[op.args[i]].lanes > 1 && op.kind != OpKind::Extract) {
        bad(op, fmt::format("uses vector %{} as a scalar", op.args[i]));
      }
      if (i < std::size(in.args)) in.args[i] = op.args[i];
    }
    if (op.args.size() > 0) in.arg_type = types_[op.args[0]];
    if (op.args.size() > 1) in.arg1_type = types_[op.args[1]];
    if (op.result != ir::kNoValue && op.result >= k_.num_values) {
      bad(op, fmt::format("defines %{}, but the kernel has {} values", op.result, k_.num_values));
    }
    if (op.lanes > 1 && (op.kind == OpKind::Store || op.kind == OpKind::SharedStore)) {
      in.lane_args = static_cast<std::uint32_t>(p_.lane_args.size());
      p_.lane_args.insert(p_.lane_args.end(), op.args.begin() + 1, op.args.end());
    }
    if (op.lanes > 1 && op.result != ir::kNoValue) {
      in.result = p_.rows;  // the lanes get rows of their own, read by extract
      p_.rows += op.lanes;
      vectors_[op.result] = {in.result, op.lanes};
    } else if (op.result != ir::kNoValue) {
      in.result = op.result;
    } else if (op.kind == OpKind::For) {
      in.result = p_.rows++;  // the induction value needs a row of its own
    } else {
      in.result = k_.num_values;
    }
    check(op, in);
    return in;
  }

  void require(const ir::Op& op, bool ok, const char* what) const {
    if (!ok) bad(op, what);
  }

  void check_lanes(const ir::Op& op) const {
    if (op.lanes == 1) return;
    require(op, is_plain_access(op.kind), "only loads and stores can be vector accesses");
    require(op, op.lanes == 2 || op.lanes == 4 || op.lanes == 8 || op.lanes == 16,
            "a vector access has 2, 4, 8 or 16 lanes");
    require(op,
            op.result != ir::kNoValue || op.kind == OpKind::Store || op.kind == OpKind::SharedStore,
            "a vector load must define a value");
  }

  /// An extract reads the row of its lane of a vector compiled before it.
  void check_extract(const ir::Op& op, Instr& in) const {
    const Vector& v = vectors_[op.args[0]];
    require(op, v.lanes > 1, "operand is not a vector");
    if (op.ivalue < 0 || op.ivalue >= v.lanes) {
      bad(op, fmt::format("lane {} of a vector of {} lanes", op.ivalue, v.lanes));
    }
    require(op, op.type == in.arg_type, "type differs from the vector's element type");
    in.args[0] = v.first_row + static_cast<std::uint32_t>(op.ivalue);
  }

  void require_defined(const ir::Op& op, OpKind k, DType t) const {
    if (!arith_defined(k, t)) {
      bad(op, fmt::format("'{}' is not defined on {}", ir::op_name(k), dtype_name(t)));
    }
  }

  void check_tensor(const ir::Op& op, Instr& in, bool writes) {
    require(op, op.param >= 0 && op.param < static_cast<int>(k_.params.size()),
            "names no kernel parameter");
    const ir::Param& p = k_.params[op.param];
    require(op, p.kind != ir::ParamKind::Constexpr, "names a constexpr, not a tensor");
    if (writes && !ir::is_output(p.kind)) {
      bad(op, fmt::format("writes '{}', which is an input tensor", p.name));
    }
    if (op.type != p.dtype) {
      bad(op, fmt::format("has type {}, but tensor '{}' holds {}", dtype_name(op.type), p.name,
                          dtype_name(p.dtype)));
    }
    in.buffer = op.param;
    in.on_output = ir::is_output(p.kind);
    TensorUse& use = p_.tensor_use[op.param];
    (ir::op_class(op.kind) == OpClass::Atomic ? use.atomic
     : writes                                 ? use.stored
                                              : use.loaded) = true;
  }

  void check_shared(const ir::Op& op, Instr& in) {
    require(op, op.shared >= 0 && op.shared < static_cast<int>(k_.shared.size()),
            "names no threadgroup allocation");
    const ir::SharedAlloc& a = k_.shared[op.shared];
    if (op.type != a.dtype) {
      bad(op, fmt::format("has type {}, but '{}' holds {}", dtype_name(op.type), a.name,
                          dtype_name(a.dtype)));
    }
    in.buffer = op.shared;
    in.on_shared = true;
  }

  void check_memory(const ir::Op& op, Instr& in, bool shared, bool writes) {
    require(op, is_integer(in.arg_type), "index is not an integer");
    if (shared) {
      check_shared(op, in);
    } else {
      check_tensor(op, in, writes);
    }
  }

  void check(const ir::Op& op, Instr& in) {
    switch (ir::op_class(op.kind)) {
      case OpClass::Unary:
      case OpClass::Binary:
        return require_defined(op, op.kind, op.type);
      case OpClass::Compare:
        require(op, op.type == DType::Bool, "a comparison must produce bool");
        return;
      case OpClass::Atomic:
        if (op.kind != OpKind::AtomicExchange) require_defined(op, combiner_of(op.kind), op.type);
        check_memory(op, in, op.param < 0, true);
        p_.tensor_atomics |= !in.on_shared;
        return;
      case OpClass::Simd:
        if (shape_of(op.kind).args == 1) {
          require_defined(op, combiner_of(op.kind), op.type);
        } else {
          require(op, is_integer(in.arg1_type), "the lane operand is not an integer");
        }
        return;
      case OpClass::Group:
        return require_defined(op, combiner_of(op.kind), op.type);
      default:
        break;
    }
    switch (op.kind) {
      case OpKind::Const:
        in.imm = const_slot(op.type, op.fvalue, op.ivalue);
        return;
      case OpKind::ConstexprRef:
        require(op,
                op.param >= 0 && op.param < static_cast<int>(k_.params.size()) &&
                    k_.params[op.param].kind == ir::ParamKind::Constexpr,
                "names no constexpr parameter");
        in.buffer = op.param;
        return;
      case OpKind::Builtin:
        require(op, op.builtin <= ir::Builtin::SimdgroupCount && op.axis < 3, "bad builtin");
        require(op, is_integer(op.type), "a builtin must have an integer type");
        in.builtin = op.builtin;
        in.axis = op.axis;
        return;
      case OpKind::Select:
        return require(op, in.arg_type == DType::Bool, "condition is not bool");
      case OpKind::Fma:
        return require_defined(op, OpKind::Fma, op.type);
      case OpKind::Bitcast:
        return require(op, bitcast_defined(in.arg_type, op.type), "types differ in size");
      case OpKind::Load:
        return check_memory(op, in, false, false);
      case OpKind::Store:
        return check_memory(op, in, false, true);
      case OpKind::SharedLoad:
        return check_memory(op, in, true, false);
      case OpKind::SharedStore:
        return check_memory(op, in, true, true);
      case OpKind::VarLoad:
      case OpKind::VarStore:
        require(op, defs_[op.args[0]] != nullptr && defs_[op.args[0]]->kind == OpKind::VarDecl,
                "operand is not a variable");
        return;
      case OpKind::Extract:
        return check_extract(op, in);
      case OpKind::For:
        return require(op, is_integer(op.type), "loop counter is not an integer");
      case OpKind::If:
        return require(op, in.arg_type == DType::Bool, "condition is not bool");
      default:
        return;  // Cast, VarDecl, Barrier: any types
    }
  }

  /// Where the lanes of a vector value live.
  struct Vector {
    std::uint32_t first_row = 0;
    std::uint8_t lanes = 1;
  };

  const ir::Kernel& k_;
  Program p_;
  std::vector<DType> types_;
  std::vector<const ir::Op*> defs_;
  std::vector<Vector> vectors_;  ///< by value id: lanes > 1 for a vector compiled so far
};

}  // namespace

Program compile(const ir::Kernel& kernel) { return Compiler(kernel).run(); }

}  // namespace iron::runtime::sim
