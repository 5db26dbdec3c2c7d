/// Per-op-kind rules of Iron IR, read from the op table: operand counts, blocks, results, and
/// operand/result types checked by each type rule, whose element-type part is op_defined_on.
#include "op_rules.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <initializer_list>

namespace iron::ir {
namespace {

/// Whether some atomic op takes values of type `t`.
bool any_atomic_on(DType t) {
  for (std::size_t i = 0; i < kOpTable.size(); ++i) {
    const auto k = static_cast<OpKind>(i);
    if (op_class(k) == OpClass::Atomic && op_defined_on(k, t)) return true;
  }
  return false;
}

/// Checks one op's types against its type rule; collects the problems.
class TypeCheck {
 public:
  TypeCheck(const Kernel& k, const Op& op, const std::vector<DType>& t) : k_(k), op_(op), t_(t) {}

  std::vector<std::string> run() {
    switch (op_info(op_.kind).types) {
      case TypeRule::Constant:
        constant();
        break;
      case TypeRule::ConstexprValue:
        constexpr_value();
        break;
      case TypeRule::ThreadGeometry:
        thread_geometry();
        break;
      case TypeRule::FloatOrSigned:
        arithmetic("needs a float or signed integer, got {}");
        break;
      case TypeRule::IntegerOrBool:
        arithmetic("needs integers or bools, got {}");
        break;
      case TypeRule::Integer:
        arithmetic("needs integers, got {}");
        break;
      case TypeRule::Float:
        arithmetic("needs floats, got {}");
        break;
      case TypeRule::Number:
        arithmetic("needs numbers, got {}");
        break;
      case TypeRule::Comparison:
        same({t_[0], t_[1]});
        if (op_.type != DType::Bool) fail("result must be bool, got {}", dtype_name(op_.type));
        break;
      case TypeRule::Selection:
        condition(t_[0]);
        same({t_[1], t_[2], op_.type});
        break;
      case TypeRule::Conversion:  // any type to any other
        break;
      case TypeRule::Reinterpretation:
        if (dtype_size(t_[0]) != dtype_size(op_.type)) {
          fail("{} and {} differ in size", dtype_name(t_[0]), dtype_name(op_.type));
        }
        break;
      case TypeRule::TensorAccess:
        tensor_access();
        break;
      case TypeRule::SharedAccess:
        shared_access();
        break;
      case TypeRule::AtomicNumber:
      case TypeRule::AtomicInteger:
        atomic();
        break;
      case TypeRule::CollectiveNumber:
        same({t_[0], op_.type});
        element("needs numbers, got {}");
        break;
      case TypeRule::CollectiveMove:
        same({t_[0], op_.type});
        if (!is_integer(t_[1])) fail("lane operand must be an integer, got {}", dtype_name(t_[1]));
        break;
      case TypeRule::SameAsResult:
        same({t_[0], op_.type});
        break;
      case TypeRule::VariableStore:
        same({t_[0], t_[1], op_.type});
        break;
      case TypeRule::LoopBounds:
        arithmetic("bounds must be integers, got {}");
        break;
      case TypeRule::PipelineBounds:
        if (op_.type != DType::U32)
          fail("a pipeline's bounds are u32, not {}", dtype_name(op_.type));
        arithmetic("bounds must be integers, got {}");
        if (op_.consumers % kWarpgroupThreads != 0) {
          fail("a pipeline's consumers are whole warpgroups ({} threads), not {}",
               kWarpgroupThreads, op_.consumers);
        }
        break;
      case TypeRule::PipelineIndex:
        if (op_.type != DType::U32) fail("a pipeline index is a u32, not {}", dtype_name(op_.type));
        if (op_.axis > 1) fail("axis {} is neither the step (0) nor the slot (1)", op_.axis);
        break;
      case TypeRule::Condition:
        condition(t_[0]);
        break;
      case TypeRule::Specialization:
        condition(t_[0]);
        if (op_.type != DType::Bool) fail("result must be bool, got {}", dtype_name(op_.type));
        break;
      case TypeRule::NoOperands:
        if (op_.kind == OpKind::WgRegisters) register_budget();
        if (op_.kind == OpKind::WgTurn) turn();
        if (op_.kind == OpKind::BarrierAmong) barrier_among();
        break;
      case TypeRule::RegisterArray:
        same({t_[0], op_.type});
        if (op_.ivalue < 1 || op_.ivalue > kMaxRegs) {
          fail("a register array holds 1 to {} elements, not {}", kMaxRegs, op_.ivalue);
        }
        break;
      case TypeRule::RegisterAccess:
        register_access();
        break;
      case TypeRule::FragmentDecl:
        same({t_[0], op_.type});
        fragment_decl();
        break;
      case TypeRule::FragmentAccess:
        fragment_access();
        break;
      case TypeRule::FragmentMultiply:
        fragment_multiply();
        break;
      case TypeRule::WarpgroupMultiply:
        warpgroup_multiply();
        break;
      case TypeRule::WarpgroupWait:
        if (t_[0] != DType::F32) fail("waits for an f32 accumulator, got {}", dtype_name(t_[0]));
        if (op_.ivalue < 0 || op_.ivalue > kMaxPendingGroups) {
          fail("waits for all but 0 to {} groups, not {}", kMaxPendingGroups, op_.ivalue);
        }
        break;
      case TypeRule::AsyncCopy:
        async_copy();
        break;
      case TypeRule::TileCopy:
        tile_copy();
        break;
      case TypeRule::TensorCopy:
        tensor_copy();
        break;
      case TypeRule::Mbarrier:
        mbarrier();
        break;
      case TypeRule::TargetQuery:
        if (op_.type != DType::Bool) fail("result must be bool, got {}", dtype_name(op_.type));
        if (op_.ivalue < 0 ||
            op_.ivalue > static_cast<std::int64_t>(TargetFeature::LargeSharedMemory)) {
          fail("asks about target feature {}, which does not exist", op_.ivalue);
        }
        break;
      case TypeRule::AsyncGroup:
        if (op_.kind == OpKind::AsyncWait && (op_.ivalue < 0 || op_.ivalue > kMaxPendingGroups)) {
          fail("waits for all but 0 to {} groups, not {}", kMaxPendingGroups, op_.ivalue);
        }
        break;
      case TypeRule::FragmentTransform:
        fragment_transform();
        break;
      case TypeRule::FragmentElement:
        if (op_.kind == OpKind::FragCoord) {
          if (op_.type != DType::U32) fail("a coordinate is a u32, not {}", dtype_name(op_.type));
          if (op_.axis > 1) fail("axis {} is neither the row (0) nor the column (1)", op_.axis);
        } else if (op_.kind == OpKind::FragSet || op_.kind == OpKind::FragRowValue) {
          same({t_[0], t_[1], op_.type});
        } else {
          same({t_[0], op_.type});
        }
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
    if (std::all_of(types.begin(), types.end(), [&](DType t) { return t == types[0]; })) {
      return true;
    }
    std::string text;
    for (DType x : types) text += (text.empty() ? "" : ", ") + std::string(dtype_name(x));
    fail("types differ ({})", text);
    return false;
  }

  /// The op's element type (its result's) is one it is defined on; reports `what` otherwise.
  void element(fmt::format_string<std::string_view> what) {
    if (!op_defined_on(op_.kind, op_.type)) fail(what, dtype_name(op_.type));
  }

  /// Operands and result of one type, one the op is defined on.
  void arithmetic(fmt::format_string<std::string_view> what) {
    std::vector<DType> types = t_;
    types.push_back(op_.type);
    if (same(types)) element(what);
  }

  void condition(DType t) {
    if (t != DType::Bool) fail("condition must be bool, got {}", dtype_name(t));
  }

  /// regs.load %array[%index] and regs.store %array[%index], %value: the value and the result
  /// of the array's element type, an integer index.
  void register_access() {
    if (!is_integer(t_[1])) fail("index must be an integer, got {}", dtype_name(t_[1]));
    if (op_.kind == OpKind::RegsStore) {
      same({t_[0], t_[2], op_.type});
    } else {
      same({t_[0], op_.type});
    }
  }

  /// frag.rowreduce %d, %f, max|sum: f32 throughout. frag.convert %a, %f: an f32 source, and
  /// the op's type a's (fragment_decl checks that it is one an A holds).
  void fragment_transform() {
    if (op_.kind == OpKind::FragRowReduce) {
      same({t_[0], t_[1], op_.type});
      if (op_.ivalue != static_cast<std::int64_t>(RowReduction::Max) &&
          op_.ivalue != static_cast<std::int64_t>(RowReduction::Sum)) {
        fail("reduction {} is neither max (0) nor sum (1)", op_.ivalue);
      }
      return;
    }
    same({t_[0], op_.type});
    if (t_[1] != DType::F32) fail("converts an f32 accumulator, not {}", dtype_name(t_[1]));
  }

  /// frag: a role and a shape made of whole m16n8k16 tiles, an element type the role allows.
  void fragment_decl() {
    const FragmentShape& f = op_.fragment;
    if (!f.tiled()) {
      fail("a {} fragment is made of {}x{} tiles, so {}x{} is not a fragment shape",
           fragment_role_name(f.role), tile_rows(f.role), tile_cols(f.role), f.rows, f.cols);
    } else if (f.elements_per_lane() > kMaxFragmentElements) {
      fail("a {}x{} fragment puts {} elements in each lane, more than the {} registers allow",
           f.rows, f.cols, f.elements_per_lane(), kMaxFragmentElements);
    }
    const bool operand_type =
        op_.type == DType::F16 || op_.type == DType::BF16 || op_.type == DType::F32;
    if (f.role == FragmentRole::Acc ? op_.type != DType::F32 : !operand_type) {
      fail("a {} fragment holds {}, not {}", fragment_role_name(f.role),
           f.role == FragmentRole::Acc ? "f32" : "f16, bf16 or f32", dtype_name(op_.type));
    }
  }

  /// frag.load/frag.store: integer offset and stride; the memory's element type is the
  /// fragment's; a store writes an output tensor or shared memory.
  void fragment_access() {
    if (!is_integer(t_[0]) || !is_integer(t_[2])) {
      fail("offset and stride must be integers, got {} and {}", dtype_name(t_[0]),
           dtype_name(t_[2]));
    }
    const Param* p = param();
    const SharedAlloc* s = shared();
    if ((p == nullptr) == (s == nullptr) || (p != nullptr && p->kind == ParamKind::Constexpr)) {
      fail("needs one target: a tensor parameter or a shared allocation");
      return;
    }
    if (op_.kind == OpKind::FragStore && p != nullptr && p->kind == ParamKind::Input) {
      problems_.push_back(fmt::format("stores into input tensor '{}'", p->name));
    }
    same({p != nullptr ? p->dtype : s->dtype, t_[1], op_.type});
  }

  /// copy.async: 4, 8 or 16 bytes from a tensor into a shared allocation of the same type,
  /// integer indices, a bool.
  void async_copy() {
    if (!is_integer(t_[0]) || !is_integer(t_[1])) {
      fail("indices must be integers, got {} and {}", dtype_name(t_[0]), dtype_name(t_[1]));
    }
    condition(t_[2]);
    const Param* p = param();
    const SharedAlloc* s = shared();
    if (p == nullptr || p->kind == ParamKind::Constexpr || s == nullptr) {
      fail("copies from a tensor parameter into a shared allocation");
      return;
    }
    same({p->dtype, s->dtype, op_.type});
    const std::size_t bytes = op_.lanes * dtype_size(op_.type);
    if (bytes != 4 && bytes != 8 && bytes != 16) {
      fail("copies 4, 8 or 16 bytes, not {} elements of {}", op_.lanes, dtype_name(op_.type));
    }
  }

  /// Every operand a u32.
  void unsigned_operands() {
    for (const DType t : t_) {
      if (t != DType::U32) fail("operands must be u32, got {}", dtype_name(t));
    }
  }

  /// Operands u32 but those at `signed_at`, i32 (an image copy's pixel coordinates).
  void unsigned_operands_but(std::initializer_list<std::size_t> signed_at) {
    for (std::size_t i = 0; i < t_.size(); ++i) {
      const bool coordinate = std::find(signed_at.begin(), signed_at.end(), i) != signed_at.end();
      const DType want = coordinate ? DType::I32 : DType::U32;
      if (t_[i] != want) {
        fail("operand {} must be {}, got {}", i, dtype_name(want), dtype_name(t_[i]));
      }
    }
  }

  /// copy.tile: a tensor and an allocation of one type; a box of whole 16-byte row pieces; the
  /// image form's box whole pixel rows, its row and column coordinates i32.
  void tile_copy() {
    if (op_.ivalue == 0) {
      unsigned_operands();
    } else {
      unsigned_operands_but({4, 9});
      if (op_.ivalue < 0 || op_.fragment.rows % static_cast<std::uint64_t>(op_.ivalue) != 0) {
        fail("an image box of {} rows is not whole rows of {} pixels", op_.fragment.rows,
             op_.ivalue);
      }
    }
    const Param* p = param();
    const SharedAlloc* s = shared();
    if (p == nullptr || p->kind == ParamKind::Constexpr || s == nullptr) {
      fail("copies from a tensor parameter into a shared allocation");
      return;
    }
    same({p->dtype, s->dtype, op_.type});
    const std::uint32_t rows = op_.fragment.rows;
    const std::uint32_t cols = op_.fragment.cols;
    if (rows < 1 || rows > 256 || cols < 1 || cols > 256 || cols * dtype_size(op_.type) % 16 != 0 ||
        16 % dtype_size(op_.type) != 0) {
      fail(
          "copies a box of 1 to 256 rows of at most 256 elements in 16-byte pieces, not {}x{} "
          "of {}",
          rows, cols, dtype_name(op_.type));
    }
  }

  /// copy.tensor: one of the kernel's tensor maps into an allocation of its type, completing an
  /// mbarrier's transaction.
  void tensor_copy() {
    const SharedAlloc* s = shared();
    if (op_.ivalue < 0 || static_cast<std::size_t>(op_.ivalue) >= k_.tensor_maps.size()) {
      fail("reads tensor map {}, which the kernel does not have", op_.ivalue);
      return;
    }
    const TensorMap& map = k_.tensor_maps[static_cast<std::size_t>(op_.ivalue)];
    if ((map.box_width != 0) != (op_.axis == 1)) {
      fail("copies {} map with the operands of {} one",
           map.box_width != 0 ? "an image" : "a matrix", op_.axis == 1 ? "an image" : "a matrix");
      return;
    }
    if (op_.axis == 1) {
      unsigned_operands_but({1, 5});
    } else {
      unsigned_operands();
    }
    const bool tensor = map.param >= 0 && static_cast<std::size_t>(map.param) < k_.params.size();
    if (s == nullptr || !tensor) {
      fail("copies from a tensor map into a shared allocation");
      return;
    }
    same({k_.params[static_cast<std::size_t>(map.param)].dtype, s->dtype, op_.type});
    barriers(op_.shared_b);
  }

  /// mbar.*: an allocation of u32 pairs; init counts at least one arrival.
  void mbarrier() {
    unsigned_operands();
    barriers(op_.shared);
    if (op_.kind == OpKind::MbarInit && op_.ivalue < 1) {
      fail("counts at least one arrival, not {}", op_.ivalue);
    }
    if (op_.kind == OpKind::MbarExpect && (op_.ivalue < 0 || op_.ivalue >= (1 << 20))) {
      fail("expects 0 to 2^20 - 1 bytes, not {}", op_.ivalue);
    }
  }

  /// wg.turn: begin, wait or pass among 2 … kMaxTurnWarpgroups warpgroups.
  void turn() {
    if (op_.ivalue < 2 || op_.ivalue > kMaxTurnWarpgroups) {
      fail("2 to {} warpgroups take turns, not {}", kMaxTurnWarpgroups, op_.ivalue);
    }
    if (op_.axis > static_cast<std::uint8_t>(TurnStep::Pass)) {
      fail("a turn is begun (axis 0), waited for (1) or passed (2), not axis {}", op_.axis);
    }
  }

  /// barrier.among: the group's first whole simdgroups, at least one.
  void barrier_among() {
    if (op_.ivalue < kSimdgroupThreads || op_.ivalue > kMaxGroupThreads ||
        op_.ivalue % kSimdgroupThreads != 0) {
      fail(
          "a barrier joins the group's first whole simdgroups, a multiple of {} from {} to {} "
          "threads, not {}",
          kSimdgroupThreads, kSimdgroupThreads, kMaxGroupThreads, op_.ivalue);
    }
  }

  /// wg.registers: a multiple of 8 from 24 to 256, raised or lowered.
  void register_budget() {
    if (op_.ivalue < kMinRegisterBudget || op_.ivalue > kMaxRegisterBudget || op_.ivalue % 8 != 0) {
      fail("a thread owns a multiple of 8 from {} to {} registers, not {}", kMinRegisterBudget,
           kMaxRegisterBudget, op_.ivalue);
    }
    if (op_.axis > 1)
      fail("registers are lowered (axis 0) or raised (axis 1), not axis {}", op_.axis);
  }

  void barriers(int alloc) {
    if (alloc < 0 || static_cast<std::size_t>(alloc) >= k_.shared.size() ||
        k_.shared[static_cast<std::size_t>(alloc)].dtype != DType::U32) {
      fail("needs an allocation of mbarriers (u32 pairs)");
    }
  }

  /// frag.mma d, a, b: an f32 accumulator; A and B of one type.
  void fragment_multiply() {
    if (t_[0] != DType::F32 || op_.type != DType::F32) {
      fail("accumulates in f32, got {}", dtype_name(t_[0]));
    }
    same({t_[1], t_[2]});
  }

  /// wg.mma d, A, B: an f32 accumulator; integer offsets and strides; A and B in two shared
  /// allocations of one float type, K a multiple of 16 up to 64 (one 128-byte row of 16-bit;
  /// for 8-bit floats a multiple of 32 up to 128, B column-major: the instruction reads 8-bit
  /// operands K-major only). The register form: A a fragment of B's type, K a multiple of 16 up
  /// to 256 (up to 64 for a column-major B, whose rows run along K).
  void warpgroup_multiply() {
    if (t_[0] != DType::F32 || op_.type != DType::F32) {
      fail("accumulates in f32, got {}", dtype_name(t_[0]));
    }
    const bool registers = op_.shared < 0;
    for (std::size_t i = registers ? 2 : 1; i < t_.size(); ++i) {
      if (!is_integer(t_[i]))
        fail("offsets and strides must be integers, got {}", dtype_name(t_[i]));
    }
    const SharedAlloc* b = shared_b();
    if (b == nullptr || (!registers && shared() == nullptr)) {
      fail("reads B{} from a shared allocation", registers ? "" : " and A");
      return;
    }
    const DType a_type = registers ? t_[1] : shared()->dtype;
    if (a_type != b->dtype || !is_float(a_type)) {
      fail("multiplies float operands of one type, got {} and {}", dtype_name(a_type),
           dtype_name(b->dtype));
    }
    if (is_f8(b->dtype)) {
      if (registers) fail("reads 8-bit float operands from shared memory only");
      if (op_.layout != MatrixLayout::ColMajor) {
        fail("reads an 8-bit float B column-major ([n, k]) only");
      }
      if (op_.ivalue < 32 || op_.ivalue > 128 || op_.ivalue % 32 != 0) {
        fail("K is a multiple of 32 from 32 to 128 for 8-bit floats, not {}", op_.ivalue);
      }
      return;
    }
    const std::int64_t k_max = registers && op_.layout == MatrixLayout::RowMajor ? 256 : 64;
    if (op_.ivalue < 16 || op_.ivalue > k_max || op_.ivalue % 16 != 0) {
      fail("K is a multiple of 16 from 16 to {}, not {}", k_max, op_.ivalue);
    }
  }

  void integer_index() {
    if (!is_integer(t_[0])) fail("index must be an integer, got {}", dtype_name(t_[0]));
  }

  const Param* param() const {
    if (op_.param < 0 || static_cast<std::size_t>(op_.param) >= k_.params.size()) return nullptr;
    return &k_.params[op_.param];
  }

  const SharedAlloc* shared() const { return allocation(op_.shared); }
  const SharedAlloc* shared_b() const { return allocation(op_.shared_b); }
  const SharedAlloc* allocation(int index) const {
    if (index < 0 || static_cast<std::size_t>(index) >= k_.shared.size()) return nullptr;
    return &k_.shared[index];
  }

  void constant() {
    if (op_.type == DType::Bool && op_.ivalue != 0 && op_.ivalue != 1) {
      fail("a bool constant must be 0 or 1, got {}", op_.ivalue);
    }
  }

  void constexpr_value() {
    const Param* p = param();
    if (p == nullptr || p->kind != ParamKind::Constexpr) {
      fail("refers to a parameter that is not a constexpr");
    } else if (p->dtype != op_.type) {
      fail("type {} differs from constexpr '{}' of type {}", dtype_name(op_.type), p->name,
           dtype_name(p->dtype));
    }
  }

  void thread_geometry() {
    const int max_axis = builtin_has_axis(op_.builtin) ? 2 : 0;
    if (op_.axis > max_axis) fail("{} has axis {}", builtin_name(op_.builtin), op_.axis);
    element("type must be u32, got {}");
  }

  void atomic() {
    integer_index();
    const DType t = op_.type;
    if (!any_atomic_on(t)) {
      fail("works on f32, i32 and u32 only, got {}", dtype_name(t));
    } else {
      element("works on integers only, got {}");
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

  /// The element, the result and (for a store) every stored value of one type.
  void accessed_types(DType element_type) {
    std::vector<DType> types = {element_type, op_.type};
    if (op_info(op_.kind).has(kWritesMemory)) types.insert(types.end(), t_.begin() + 1, t_.end());
    same(types);
  }

  void tensor_access() {
    integer_index();
    const Param* p = param();
    if (p == nullptr || p->kind == ParamKind::Constexpr) {
      fail("target is not a tensor parameter");
      return;
    }
    if (op_info(op_.kind).has(kWritesMemory) && p->kind == ParamKind::Input) {
      problems_.push_back(fmt::format("stores into input tensor '{}'", p->name));
    }
    accessed_types(p->dtype);
  }

  void shared_access() {
    integer_index();
    const SharedAlloc* s = shared();
    if (s == nullptr) {
      fail("refers to no shared allocation");
      return;
    }
    accessed_types(s->dtype);
  }

  const Kernel& k_;
  const Op& op_;
  const std::vector<DType>& t_;
  std::vector<std::string> problems_;
};

}  // namespace

std::size_t op_arity(const Op& op) {
  const OpInfo& info = op_info(op.kind);
  const bool vector_store =
      op.lanes > 1 && info.has(kWritesMemory) &&
      (info.types == TypeRule::TensorAccess || info.types == TypeRule::SharedAccess);
  // wg.mma's register form has its A fragment where the shared form has A's offset and stride;
  // a row-major B adds its panel stride.
  const bool registers_form = op.kind == OpKind::WgMma && op.shared < 0;
  const bool b_panels = op.kind == OpKind::WgMma && op.layout == MatrixLayout::RowMajor;
  // An image copy adds the images, their width, the image and the box's first column (copy.tile)
  // or the last two (copy.tensor).
  std::size_t image = 0;
  if (op.kind == OpKind::CopyTile && op.ivalue != 0) image = 4;
  if (op.kind == OpKind::CopyTensor && op.axis == 1) image = 2;
  return info.operands + (vector_store ? op.lanes - 1 : 0) - (registers_form ? 1 : 0) +
         (b_panels ? 1 : 0) + image;
}

std::size_t op_block_count(OpKind k) { return op_info(k).blocks; }

ResultRule op_result_rule(OpKind k) { return op_info(k).result; }

std::vector<std::string> op_type_problems(const Kernel& k, const Op& op,
                                          const std::vector<DType>& operands) {
  return TypeCheck(k, op, operands).run();
}

}  // namespace iron::ir
