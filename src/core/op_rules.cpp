/// Per-op-kind rules of Iron IR: operand counts, blocks, results and operand/result types.
#include "op_rules.hpp"

#include <fmt/format.h>

namespace iron::ir {
namespace {

bool is_any(OpKind k, std::initializer_list<OpKind> kinds) {
  for (OpKind x : kinds) {
    if (x == k) return true;
  }
  return false;
}

/// Shuffles and broadcast take a second, integer operand (lane, mask or delta).
bool is_simd_move(OpKind k) {
  return is_any(k, {OpKind::SimdShuffle, OpKind::SimdShuffleXor, OpKind::SimdShuffleUp,
                    OpKind::SimdShuffleDown, OpKind::SimdBroadcast});
}

/// Checks one op's types; collects the problems.
class TypeCheck {
 public:
  TypeCheck(const Kernel& k, const Op& op, const std::vector<DType>& t) : k_(k), op_(op), t_(t) {}

  std::vector<std::string> run() {
    switch (op_class(op_.kind)) {
      case OpClass::Leaf:
        leaf();
        break;
      case OpClass::Unary:
      case OpClass::Binary:
        arithmetic();
        break;
      case OpClass::Compare:
        same({t_[0], t_[1]});
        if (op_.type != DType::Bool) fail("result must be bool, got {}", dtype_name(op_.type));
        break;
      case OpClass::Atomic:
        atomic();
        break;
      case OpClass::Simd:
      case OpClass::Group:
        collective();
        break;
      case OpClass::Other:
        other();
        break;
    }
    return std::move(problems_);
  }

 private:
  template <class... Args>
  void fail(fmt::format_string<Args...> what, const Args&... args) {
    problems_.push_back(fmt::format("{}: {}", op_name(op_.kind),
                                    fmt::vformat(what, fmt::make_format_args(args...))));
  }

  /// Whether all `types` are one type; reports them otherwise.
  bool same(std::vector<DType> types) {
    for (DType t : types) {
      if (t == types[0]) continue;
      std::string text;
      for (DType x : types) text += (text.empty() ? "" : ", ") + std::string(dtype_name(x));
      fail("types differ ({})", text);
      return false;
    }
    return true;
  }

  void integer_index() {
    if (!is_integer(t_[0])) fail("index must be an integer, got {}", dtype_name(t_[0]));
  }

  const Param* param() const {
    if (op_.param < 0 || static_cast<std::size_t>(op_.param) >= k_.params.size()) return nullptr;
    return &k_.params[op_.param];
  }

  const SharedAlloc* shared() const {
    if (op_.shared < 0 || static_cast<std::size_t>(op_.shared) >= k_.shared.size()) return nullptr;
    return &k_.shared[op_.shared];
  }

  void leaf() {
    if (op_.kind == OpKind::Const) {
      if (op_.type == DType::Bool && op_.ivalue != 0 && op_.ivalue != 1) {
        fail("a bool constant must be 0 or 1, got {}", op_.ivalue);
      }
    } else if (op_.kind == OpKind::ConstexprRef) {
      const Param* p = param();
      if (p == nullptr || p->kind != ParamKind::Constexpr) {
        fail("refers to a parameter that is not a constexpr");
      } else if (p->dtype != op_.type) {
        fail("type {} differs from constexpr '{}' of type {}", dtype_name(op_.type), p->name,
             dtype_name(p->dtype));
      }
    } else {
      const int max_axis = builtin_has_axis(op_.builtin) ? 2 : 0;
      if (op_.axis > max_axis) fail("{} has axis {}", builtin_name(op_.builtin), op_.axis);
      if (op_.type != DType::U32) fail("type must be u32, got {}", dtype_name(op_.type));
    }
  }

  void arithmetic() {
    std::vector<DType> types = t_;
    types.push_back(op_.type);
    if (!same(types)) return;
    const DType t = op_.type;
    const OpKind k = op_.kind;
    if (is_any(k, {OpKind::Neg, OpKind::Abs})) {
      if (!is_float(t) && !is_signed_int(t))
        fail("needs a float or signed integer, got {}", dtype_name(t));
    } else if (is_any(k, {OpKind::Not, OpKind::And, OpKind::Or, OpKind::Xor})) {
      if (is_float(t)) fail("needs integers or bools, got {}", dtype_name(t));
    } else if (is_any(k, {OpKind::Shl, OpKind::Shr})) {
      if (!is_integer(t)) fail("needs integers, got {}", dtype_name(t));
    } else if (op_class(k) == OpClass::Unary || is_any(k, {OpKind::Pow, OpKind::Atan2})) {
      if (!is_float(t)) fail("needs floats, got {}", dtype_name(t));
    } else if (t == DType::Bool) {
      fail("needs numbers, got bool");
    }
  }

  void collective() {
    same({t_[0], op_.type});
    if (is_simd_move(op_.kind)) {
      if (!is_integer(t_[1])) fail("lane operand must be an integer, got {}", dtype_name(t_[1]));
    } else if (op_.type == DType::Bool) {
      fail("needs numbers, got bool");
    }
  }

  void atomic() {
    integer_index();
    const DType t = op_.type;
    if (t != DType::F32 && t != DType::I32 && t != DType::U32) {
      fail("works on f32, i32 and u32 only, got {}", dtype_name(t));
    } else if (!is_integer(t) && is_any(op_.kind, {OpKind::AtomicAnd, OpKind::AtomicOr,
                                                   OpKind::AtomicXor, OpKind::AtomicExchange})) {
      fail("works on integers only, got {}", dtype_name(t));
    }
    const Param* p = param();
    const SharedAlloc* s = shared();
    if ((p == nullptr) == (s == nullptr)) {
      fail("needs one target: an output tensor or a shared allocation");
    } else if (p != nullptr && !is_output(p->kind)) {
      fail("target '{}' is not an output tensor", p->name);
    } else {
      same({p != nullptr ? p->dtype : s->dtype, t_[1], t});
    }
  }

  void tensor_access() {
    integer_index();
    const Param* p = param();
    if (p == nullptr || p->kind == ParamKind::Constexpr) {
      fail("target is not a tensor parameter");
      return;
    }
    if (op_.kind == OpKind::Store && p->kind == ParamKind::Input) {
      problems_.push_back(fmt::format("stores into input tensor '{}'", p->name));
    }
    std::vector<DType> types = {p->dtype, op_.type};
    if (op_.kind == OpKind::Store) types.insert(types.end(), t_.begin() + 1, t_.end());
    same(types);
  }

  void shared_access() {
    integer_index();
    const SharedAlloc* s = shared();
    if (s == nullptr) {
      fail("refers to no shared allocation");
      return;
    }
    std::vector<DType> types = {s->dtype, op_.type};
    if (op_.kind == OpKind::SharedStore) types.insert(types.end(), t_.begin() + 1, t_.end());
    same(types);
  }

  void other() {
    switch (op_.kind) {
      case OpKind::Select:
        if (t_[0] != DType::Bool) fail("condition must be bool, got {}", dtype_name(t_[0]));
        same({t_[1], t_[2], op_.type});
        break;
      case OpKind::Fma:
        if (same({t_[0], t_[1], t_[2], op_.type}) && !is_float(op_.type)) {
          fail("needs floats, got {}", dtype_name(op_.type));
        }
        break;
      case OpKind::Bitcast:
        if (dtype_size(t_[0]) != dtype_size(op_.type)) {
          fail("{} and {} differ in size", dtype_name(t_[0]), dtype_name(op_.type));
        }
        break;
      case OpKind::Load:
      case OpKind::Store:
        tensor_access();
        break;
      case OpKind::SharedLoad:
      case OpKind::SharedStore:
        shared_access();
        break;
      case OpKind::VarDecl:
      case OpKind::VarLoad:
      case OpKind::Extract:
        same({t_[0], op_.type});
        break;
      case OpKind::VarStore:
        same({t_[0], t_[1], op_.type});
        break;
      case OpKind::For:
        if (same({t_[0], t_[1], t_[2], op_.type}) && !is_integer(op_.type)) {
          fail("bounds must be integers, got {}", dtype_name(op_.type));
        }
        break;
      case OpKind::If:
        if (t_[0] != DType::Bool) fail("condition must be bool, got {}", dtype_name(t_[0]));
        break;
      default:  // cast converts any type to any other; barrier has no operands
        break;
    }
  }

  const Kernel& k_;
  const Op& op_;
  const std::vector<DType>& t_;
  std::vector<std::string> problems_;
};

}  // namespace

std::size_t op_arity(OpKind k) {
  if (is_any(k, {OpKind::Select, OpKind::Fma, OpKind::For})) return 3;
  if (is_any(k, {OpKind::Store, OpKind::SharedStore, OpKind::VarStore}) || is_simd_move(k)) {
    return 2;
  }
  switch (op_class(k)) {
    case OpClass::Leaf:
      return 0;
    case OpClass::Binary:
    case OpClass::Compare:
    case OpClass::Atomic:
      return 2;
    default:
      return k == OpKind::Barrier ? 0 : 1;
  }
}

std::size_t op_block_count(OpKind k) {
  if (k == OpKind::For) return 1;
  return k == OpKind::If ? 2 : 0;
}

ResultRule op_result_rule(OpKind k) {
  if (op_class(k) == OpClass::Atomic) return ResultRule::Optional;
  if (is_any(k,
             {OpKind::Store, OpKind::SharedStore, OpKind::VarStore, OpKind::Barrier, OpKind::If})) {
    return ResultRule::Forbidden;
  }
  return ResultRule::Required;
}

std::vector<std::string> op_type_problems(const Kernel& k, const Op& op,
                                          const std::vector<DType>& operands) {
  return TypeCheck(k, op, operands).run();
}

}  // namespace iron::ir
