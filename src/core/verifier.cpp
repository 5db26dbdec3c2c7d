/// Checks a kernel's structure, value scopes, op types and dispatch contract.
#include "iron/core/verifier.hpp"

#include <fmt/format.h>

#include <optional>
#include <set>

#include "iron/core/error.hpp"
#include "iron/core/op_views.hpp"
#include "iron/core/size_expr.hpp"
#include "op_rules.hpp"

namespace iron::ir {
namespace {

/// Loads and stores of tensors and threadgroup memory: the only ops that take `lanes`.
bool is_plain_access(OpKind k) {
  const TypeRule t = op_info(k).types;
  return t == TypeRule::TensorAccess || t == TypeRule::SharedAccess;
}

/// Ops that need a group size that is a multiple of the 32-wide simdgroup: the convergent ones
/// (barriers, simdgroup and group collectives) and every access to threadgroup memory.
bool is_group_op(const Op& op) { return op_info(op.kind).has(kConvergent) || op.shared >= 0; }

/// What a value is: a plain value, a variable (var) or a register array (regs); the last two
/// are read and written only through their own ops.
enum class Storage : std::uint8_t { Value, Var, Regs, Fragment };

Storage storage_defined_by(OpKind k) {
  if (k == OpKind::VarDecl) return Storage::Var;
  if (k == OpKind::FragDecl) return Storage::Fragment;
  return k == OpKind::RegsDecl ? Storage::Regs : Storage::Value;
}

/// What operand `i` of `op` must be.
Storage storage_operand(const Op& op, std::size_t i) {
  const OpKind k = op.kind;
  const bool wg_fragment = (k == OpKind::WgMma && (i == 0 || (i == 1 && op.shared < 0))) ||
                           (k == OpKind::WgWait && i == 0);
  if (k == OpKind::FragMma || ((k == OpKind::FragLoad || k == OpKind::FragStore) && i == 1) ||
      wg_fragment) {
    return Storage::Fragment;
  }
  const TypeRule rule = op_info(k).types;
  if (rule == TypeRule::FragmentTransform || k == OpKind::FragRowValue ||
      (rule == TypeRule::FragmentElement && i == 0)) {
    return Storage::Fragment;
  }
  if (i != 0) return Storage::Value;
  if (k == OpKind::VarLoad || k == OpKind::VarStore) return Storage::Var;
  return k == OpKind::RegsLoad || k == OpKind::RegsStore ? Storage::Regs : Storage::Value;
}

std::string storage_mismatch(const Op& op, ValueId id, Storage is, Storage wanted) {
  switch (wanted) {
    case Storage::Var:
      return fmt::format("{} of %{}, which is not a variable", op_name(op.kind), id);
    case Storage::Regs:
      return fmt::format("{} of %{}, which is not a register array", op_name(op.kind), id);
    case Storage::Fragment:
      return fmt::format("{} of %{}, which is not a fragment", op_name(op.kind), id);
    case Storage::Value:
      break;
  }
  switch (is) {
    case Storage::Var:
      return fmt::format("uses variable %{} as a value (read it with var.load)", id);
    case Storage::Regs:
      return fmt::format("uses register array %{} as a value (read it with regs.load)", id);
    case Storage::Fragment:
      return fmt::format("uses fragment %{} as a value (fragments are read by frag.* only)", id);
    case Storage::Value:
      break;
  }
  return fmt::format("uses %{} as a value", id);
}

class Verifier {
 public:
  Verifier(const Kernel& k, Stage stage) : k_(k), stage_(stage) {}

  std::vector<std::string> run() {
    if (k_.num_values > kMaxValues) {
      report(k_.loc, fmt::format("declares {} values, more than the {} a kernel may have",
                                 k_.num_values, kMaxValues));
      return std::move(problems_);
    }
    values_.resize(k_.num_values);
    check_params();
    check_shared();
    check_rules();
    check_grid_rules();
    check_layouts();
    check_constexpr_rules();
    check_constexpr_bounds();
    check_occupancy();
    if (k_.body.ops.empty()) report(k_.loc, "empty kernel body");
    block(k_.body);
    check_contract();
    check_rings();
    check_swizzles();
    check_overlays();
    return std::move(problems_);
  }

 private:
  struct ValueInfo {
    bool defined = false;
    bool visible = false;
    Storage storage = Storage::Value;
    DType type = DType::U32;
    std::uint8_t lanes = 1;             ///< > 1 for the result of a vector load
    std::int64_t elements = 0;          ///< of a register array
    FragmentShape fragment;             ///< of a fragment
    std::optional<std::int64_t> known;  ///< an integer constant's value
  };

  void report(const SourceLoc& loc, std::string_view what) {
    if (loc.known()) {
      problems_.push_back(fmt::format("kernel {}: {}: {}", k_.name, format_loc(loc), what));
    } else {
      problems_.push_back(fmt::format("kernel {}: {}", k_.name, what));
    }
  }

  void check_params() {
    std::set<std::string> names;
    bool has_output = false;
    for (const Param& p : k_.params) {
      if (!names.insert(p.name).second)
        report(k_.loc, fmt::format("parameter '{}' declared twice", p.name));
      has_output |= is_output(p.kind);
    }
    if (!has_output) report(k_.loc, "has no output parameter");
  }

  void check_shared() {
    std::set<std::string> names;
    for (const SharedAlloc& s : k_.shared) {
      if (!names.insert(s.name).second) {
        report(k_.loc, fmt::format("shared allocation '{}' declared twice", s.name));
      }
      if (s.size == 0) report(k_.loc, fmt::format("shared allocation '{}' has size 0", s.name));
    }
  }

  void check_rules() {
    for (const SizeRule& r : k_.dispatch.group_size_rules) {
      const std::string_view name = size_rule_name(r.kind);
      if (r.kind == SizeRule::Kind::PowerOfTwo) continue;
      if (r.constexpr_name.empty()) {
        if (r.value <= 0)
          report(k_.loc, fmt::format("rule {} {}: the bound must be positive", name, r.value));
        continue;
      }
      const int p = k_.find_param(r.constexpr_name);
      if (p < 0 || k_.params[p].kind != ParamKind::Constexpr || !is_integer(k_.params[p].dtype)) {
        report(k_.loc, fmt::format("rule {} {}: '{}' is not an integer constexpr parameter", name,
                                   r.constexpr_name, r.constexpr_name));
      }
      if (r.divisor <= 0) {
        report(k_.loc, fmt::format("rule {} {}: the divisor {} must be positive", name,
                                   r.constexpr_name, r.divisor));
      }
    }
  }

  /// Every name in a contract expression is an integer constexpr parameter.
  void check_size_names(const SizeExpr& e, const SourceLoc& loc, std::string_view where) {
    for_each_leaf(e, [&](const SizeExpr& leaf) {
      if (leaf.kind == SizeExpr::Kind::Groups && leaf.axis > 2) {
        report(loc, fmt::format("{}: groups axis {} (expected 0, 1 or 2)", where, leaf.axis));
      }
      if (leaf.kind != SizeExpr::Kind::Constexpr) return;
      const int p = k_.find_param(leaf.name);
      if (p < 0 || k_.params[p].kind != ParamKind::Constexpr || !is_integer(k_.params[p].dtype)) {
        report(loc,
               fmt::format("{}: '{}' is not an integer constexpr parameter", where, leaf.name));
      }
    });
  }

  void check_grid_rules() {
    for (const GridRule& r : k_.dispatch.grid_rules) {
      if (r.axis > 2) {
        report(r.loc, fmt::format("grid rule on axis {} (expected 0, 1 or 2)", r.axis));
        continue;
      }
      check_size_names(r.bound, r.loc, fmt::format("grid rule on groups.{}", "xyz"[r.axis]));
    }
  }

  void check_layouts() {
    std::set<std::string> seen;
    for (const TensorLayout& l : k_.dispatch.layouts) {
      const int p = k_.find_param(l.param);
      if (p < 0 || k_.params[p].kind == ParamKind::Constexpr) {
        report(l.loc, fmt::format("layout of '{}', which is not a tensor parameter", l.param));
      }
      if (!seen.insert(l.param).second) {
        report(l.loc, fmt::format("layout of '{}' declared twice", l.param));
      }
      if (l.dims.empty()) report(l.loc, fmt::format("layout of '{}' has no dims", l.param));
      for (const SizeExpr& d : l.dims) {
        check_size_names(d, l.loc, fmt::format("layout of '{}'", l.param));
      }
    }
  }

  void check_constexpr_rules() {
    for (const ConstexprRule& r : k_.dispatch.constexpr_rules) {
      const std::string where =
          fmt::format("require {} multiple_of {}", r.constexpr_name, r.multiple);
      const int p = k_.find_param(r.constexpr_name);
      if (p < 0 || k_.params[p].kind != ParamKind::Constexpr || !is_integer(k_.params[p].dtype)) {
        report(r.loc, fmt::format("{}: '{}' is not an integer constexpr parameter", where,
                                  r.constexpr_name));
      }
      if (r.multiple <= 0) report(r.loc, where + ": the multiple must be positive");
    }
  }

  /// A range's name is an integer constexpr, and so is every name in its bound.
  void check_constexpr_bounds() {
    for (const ConstexprBound& b : k_.dispatch.constexpr_bounds) {
      const std::string where = fmt::format("require {} {} {}", b.constexpr_name,
                                            relation_name(b.relation), print_size_expr(b.bound));
      const int p = k_.find_param(b.constexpr_name);
      if (p < 0 || k_.params[p].kind != ParamKind::Constexpr || !is_integer(k_.params[p].dtype)) {
        report(b.loc, fmt::format("{}: '{}' is not an integer constexpr parameter", where,
                                  b.constexpr_name));
      }
      if (b.relation == GridRule::Relation::Equal) report(b.loc, where + ": expected <= or >=");
      check_size_names(b.bound, b.loc, where);
    }
  }

  /// The groups asked to fit a multiprocessor at once, each of the literal group-size bound
  /// (1024 without one), hold at most 2048 threads: the most any CUDA multiprocessor runs.
  void check_occupancy() {
    const std::uint32_t groups = k_.dispatch.occupancy;
    if (groups == 0) return;
    const std::int64_t bound = k_.dispatch.group_size_cap();
    if (groups * bound > kMaxResidentThreads) {
      report(k_.dispatch.loc,
             fmt::format("occupancy {}: {} groups of up to {} threads exceed the {} threads a "
                         "multiprocessor holds (declare a smaller at_most bound)",
                         groups, groups, bound, kMaxResidentThreads));
    }
  }

  /// A ring (one copy of an allocation per stage) belongs to a pipeline, and is gone once
  /// expand_pipelines has sized it.
  void check_rings() {
    bool has_pipeline = false;
    walk(k_.body, [&](const Op& op) { has_pipeline |= op.kind == OpKind::Pipeline; });
    for (const SharedAlloc& s : k_.shared) {
      if (!s.ring) continue;
      if (stage_ == Stage::Lowered) {
        report(k_.loc, fmt::format("ring {} reached lowering: run expand_pipelines first", s.name));
      } else if (!has_pipeline) {
        report(k_.loc, fmt::format("ring {} without a pipeline to cycle through it", s.name));
      }
    }
  }

  /// A swizzled row is a power of two of at least eight 16-byte chunks (the XOR keeps each chunk
  /// in its row), and the allocation holds whole rows.
  void check_swizzles() {
    for (const SharedAlloc& s : k_.shared) {
      if (s.swizzle == 0) continue;
      const std::uint64_t row_bytes = std::uint64_t{s.swizzle} * dtype_size(s.dtype);
      if ((s.swizzle & (s.swizzle - 1)) != 0 || row_bytes < 128) {
        report(k_.loc, fmt::format("shared {}: a swizzled row must be a power of two of at least "
                                   "128 bytes, not {} elements of {} ({} bytes)",
                                   s.name, s.swizzle, dtype_name(s.dtype), row_bytes));
      } else if (s.size % s.swizzle != 0) {
        report(k_.loc, fmt::format("shared {}: {} elements are not whole swizzled rows of {}",
                                   s.name, s.size, s.swizzle));
      }
    }
  }

  /// An overlay reuses the bytes of an earlier allocation that is not an overlay itself, and is
  /// a plain allocation (no ring of its own, no swizzle).
  void check_overlays() {
    for (std::size_t i = 0; i < k_.shared.size(); ++i) {
      const SharedAlloc& s = k_.shared[i];
      if (s.overlays < 0) continue;
      if (static_cast<std::size_t>(s.overlays) >= i) {
        report(k_.loc,
               fmt::format("shared {}: overlays an allocation that is not an earlier one", s.name));
      } else if (k_.shared[s.overlays].overlays >= 0) {
        report(k_.loc, fmt::format("shared {}: overlays {}, itself an overlay (overlay {} instead)",
                                   s.name, k_.shared[s.overlays].name,
                                   k_.shared[k_.shared[s.overlays].overlays].name));
      } else if (s.ring || s.swizzle != 0) {
        report(k_.loc, fmt::format("shared {}: an overlay is neither a ring nor swizzled", s.name));
      }
    }
  }

  void check_contract() {
    bool group_ops = !k_.shared.empty();
    bool warpgroup_ops = false;
    bool writes_output = false;
    walk(k_.body, [&](const Op& op) {
      group_ops |= is_group_op(op);
      warpgroup_ops |= op.kind == OpKind::WgMma;
      // a frag.load writes its fragment, not the tensor it reads
      const bool writes = op_info(op.kind).has(kWritesMemory) && op.kind != OpKind::FragLoad;
      writes_output |= writes && param(op) != nullptr && is_output(param(op)->kind);
    });
    if (!writes_output) report(k_.loc, "writes no output");
    if (!group_ops) return;
    bool multiple_of_32 = false;
    bool multiple_of_128 = false;
    for (const SizeRule& r : k_.dispatch.group_size_rules) {
      const bool implies_multiple =
          (r.kind == SizeRule::Kind::MultipleOf || r.kind == SizeRule::Kind::Exactly) &&
          r.constexpr_name.empty() && r.value > 0;
      multiple_of_32 |= implies_multiple && r.value % 32 == 0;
      multiple_of_128 |= implies_multiple && r.value % 128 == 0;
    }
    if (warpgroup_ops && !multiple_of_128) {
      report(k_.loc,
             "uses warpgroup products (wg.mma) but its dispatch contract does not require a "
             "group size that is a multiple of 128 (whole warpgroups)");
    }
    if (!multiple_of_32) {
      report(k_.loc,
             "uses simdgroup/threadgroup operations but its dispatch contract does not require a "
             "group size that is a multiple of 32");
    }
    if (k_.dispatch.mode == DispatchMode::Elementwise) {
      report(k_.loc, "uses simdgroup/threadgroup operations but its dispatch mode is elementwise");
    }
  }

  const Param* param(const Op& op) const {
    if (op.param < 0 || static_cast<std::size_t>(op.param) >= k_.params.size()) return nullptr;
    return &k_.params[op.param];
  }

  void block(const Block& b) {
    scopes_.emplace_back();
    for (const Op& op : b.ops) this->op(op);
    close_scope();
  }

  void close_scope() {
    for (ValueId id : scopes_.back()) values_[id].visible = false;
    scopes_.pop_back();
  }

  void op(const Op& op) {
    check_shape(op);
    check_pipeline_rules(op);
    if (op.kind == OpKind::Pipeline) {
      ++pipelines_open_;
      for (const Block& b : op.blocks) {
        if (b.ops.empty()) report(op.loc, "empty pipeline block");
        pipeline_block_ = &b;
        block(b);
      }
      pipeline_block_ = nullptr;
      --pipelines_open_;
      return;
    }
    if (op.kind == OpKind::For) {
      if (op.ivalue != 0 && op.ivalue != 1) {
        report(op.loc, fmt::format("for: ivalue {} is neither 0 nor 1 (rolled)", op.ivalue));
      }
      scopes_.emplace_back();  // the induction value is visible in the body only
      define(op);
      if (!op.blocks.empty()) {
        if (op.blocks[0].ops.empty()) report(op.loc, "empty loop body");
        block(op.blocks[0]);
      }
      close_scope();
      return;
    }
    if (op.kind == OpKind::If && op.blocks.size() == 2 && op.blocks[0].ops.empty() &&
        op.blocks[1].ops.empty()) {
      report(op.loc, "empty if: both blocks are empty");
    }
    for (const Block& b : op.blocks) block(b);
    define(op);
  }

  /// Pipelines exist until expand_pipelines; pipeline.index only at the top of one's blocks;
  /// their copy groups are the pipeline's to commit and wait for.
  void check_pipeline_rules(const Op& op) {
    const std::string_view name = op_name(op.kind);
    const bool pipeline_op = op.kind == OpKind::Pipeline || op.kind == OpKind::PipelineIndex;
    if (stage_ == Stage::Lowered && pipeline_op) {
      report(op.loc, fmt::format("{} reached lowering: run expand_pipelines first", name));
    }
    if (op.kind == OpKind::Pipeline && (op.ivalue < 1 || op.ivalue > kMaxStages)) {
      report(op.loc, fmt::format("a pipeline has 1 to {} stages, not {}", kMaxStages, op.ivalue));
    }
    if (op.kind == OpKind::Pipeline && op.axis + 2 > op.ivalue && op.axis != 0) {
      report(op.loc, fmt::format("a pipeline with lag {} needs at least {} stages, not {}", op.axis,
                                 op.axis + 2, op.ivalue));
    }
    if (op.kind == OpKind::Pipeline && pipelines_open_ > 0) {
      report(op.loc, "a pipeline inside another pipeline");
    }
    if (op.kind == OpKind::PipelineIndex && !in_pipeline_block_top(op)) {
      report(op.loc, "pipeline.index outside the top level of a pipeline's block");
    }
    if (pipelines_open_ > 0 && (op.kind == OpKind::AsyncCommit || op.kind == OpKind::AsyncWait)) {
      report(op.loc, fmt::format("{} inside a pipeline: the pipeline commits and waits for its "
                                 "copies itself",
                                 name));
    }
  }

  bool in_pipeline_block_top(const Op& op) const {
    if (pipeline_block_ == nullptr) return false;
    return std::any_of(pipeline_block_->ops.begin(), pipeline_block_->ops.end(),
                       [&](const Op& o) { return &o == &op; });
  }

  /// Operand count, operand visibility and types, block count and result of one op.
  void check_shape(const Op& op) {
    const std::string_view name = op_name(op.kind);
    if (stage_ == Stage::Lowered && op_info(op.kind).types == TypeRule::RegisterAccess) {
      report(op.loc, fmt::format("{}: the index of register array %{} is not a constant after "
                                 "unrolling (a loop that indexes a register array unrolls only "
                                 "when its bounds are constants and it runs at most {} trips)",
                                 name, op.args.empty() ? kNoValue : op.args[0], kMaxRegs));
    }
    check_lanes(op);
    const std::optional<std::vector<DType>> types = operand_types(op);
    if (op.args.size() != op_arity(op)) {
      report(op.loc,
             fmt::format("{} takes {} operands, got {}", name, op_arity(op), op.args.size()));
    } else if (types) {
      for (const std::string& p : op_type_problems(k_, op, *types)) report(op.loc, p);
    }
    if (op.blocks.size() != op_block_count(op.kind)) {
      report(op.loc, fmt::format("{} has {} blocks, expected {}", name, op.blocks.size(),
                                 op_block_count(op.kind)));
    }
    const ResultRule rule = op_result_rule(op.kind);
    if (op.result == kNoValue && rule == ResultRule::Required) {
      report(op.loc, fmt::format("{} defines no value", name));
    } else if (op.result != kNoValue && rule == ResultRule::Forbidden) {
      report(op.loc, fmt::format("{} cannot define a value", name));
    }
  }

  /// A vector access has 2, 4, 8 or 16 lanes of at most 16 bytes in all; other ops have 1.
  void check_lanes(const Op& op) {
    if (op.lanes == 1) return;
    const std::string_view name = op_name(op.kind);
    if (op.kind == OpKind::CopyAsync) return;  // its type rule checks its 4, 8 or 16 bytes
    if (!is_plain_access(op.kind)) {
      report(op.loc, fmt::format("{} cannot be a vector op (it has {} lanes)", name, op.lanes));
    } else if (op.lanes != 2 && op.lanes != 4 && op.lanes != 8 && op.lanes != 16) {
      report(op.loc,
             fmt::format("{}: {} lanes; a vector access has 2, 4, 8 or 16", name, op.lanes));
    } else if (op.lanes * dtype_size(op.type) > 16) {
      report(op.loc,
             fmt::format("{}: {}x{} is {} bytes, wider than the 16 a vector access allows", name,
                         dtype_name(op.type), op.lanes, op.lanes * dtype_size(op.type)));
    }
  }

  /// A vector value is read only by extract, of a lane it has.
  bool check_vector_use(const Op& op, ValueId id, const ValueInfo& v) {
    if (op.kind != OpKind::Extract) {
      if (v.lanes == 1) return true;
      report(op.loc,
             fmt::format("uses vector %{} ({}x{}) as a scalar (read its lanes with extract)", id,
                         dtype_name(v.type), v.lanes));
      return false;
    }
    if (v.lanes == 1) {
      report(op.loc, fmt::format("extract of %{}, which is not a vector", id));
      return false;
    }
    if (op.ivalue < 0 || op.ivalue >= v.lanes) {
      report(op.loc,
             fmt::format("extract of lane {} of %{}, which has {} lanes", op.ivalue, id, v.lanes));
      return false;
    }
    return true;
  }

  /// A constant index of a register array is one of its elements.
  void check_register_index(const Op& op, const ValueInfo& array) {
    if (op.args.size() < 2 || op.args[1] >= values_.size()) return;
    const std::optional<std::int64_t> index = values_[op.args[1]].known;
    if (index && (*index < 0 || *index >= array.elements)) {
      report(op.loc, fmt::format("{} at index {} of %{}, which has {} elements", op_name(op.kind),
                                 *index, op.args[0], array.elements));
    }
  }

  /// A column window (fragment_window) is an accumulator's frag.store's, of whole kWindowCols
  /// columns inside the fragment.
  void check_fragment_window(const Op& op) {
    if (op.ivalue == 0) return;
    const FragAccessOp access(op);
    const FragmentShape& f = values_[op.args[1]].fragment;
    const std::uint32_t first = access.window_first();
    const std::uint32_t cols = access.window_cols();
    if (op.kind == OpKind::FragLoad || f.role != FragmentRole::Acc) {
      report(op.loc, "a column window is an accumulator's frag.store's");
    } else if (!window_fits(first, cols, f.cols)) {
      report(op.loc, fmt::format("frag.store of columns {} … {} of a {}x{} fragment: a window is "
                                 "whole multiples of {} columns inside it",
                                 first, first + cols, f.rows, f.cols, kWindowCols));
    }
  }

  /// frag.mma d, a, b: an accumulator, an A and a B whose shapes make d's (M×K · K×N = M×N).
  void check_fragment_product(const Op& op) {
    const FragmentShape& d = values_[op.args[0]].fragment;
    const FragmentShape& a = values_[op.args[1]].fragment;
    const FragmentShape& b = values_[op.args[2]].fragment;
    if (d.role != FragmentRole::Acc || a.role != FragmentRole::A || b.role != FragmentRole::B) {
      report(op.loc, fmt::format("frag.mma takes an acc, an a and a b fragment, got {}, {} and {}",
                                 fragment_role_name(d.role), fragment_role_name(a.role),
                                 fragment_role_name(b.role)));
    } else if (a.rows != d.rows || b.cols != d.cols || a.cols != b.rows) {
      report(op.loc, fmt::format("frag.mma of a {}x{} by a {}x{} into a {}x{}: the shapes do not "
                                 "fit (M×K · K×N = M×N)",
                                 a.rows, a.cols, b.rows, b.cols, d.rows, d.cols));
    }
  }

  /// wg.mma, wg.wait: a simdgroup's 16×N part of the warpgroup's 64×N accumulator, N a multiple
  /// of 8 up to 256 (the widths of the Hopper instruction).
  void check_warpgroup_accumulator(const Op& op) {
    const FragmentShape& d = values_[op.args[0]].fragment;
    if (d.role != FragmentRole::Acc || d.rows != 16 || d.cols % 8 != 0 || d.cols > 256) {
      report(op.loc, fmt::format("{} takes a simdgroup's 16xN part of the warpgroup's "
                                 "accumulator (acc, N a multiple of 8 up to 256), got {} {}x{}",
                                 op_name(op.kind), fragment_role_name(d.role), d.rows, d.cols));
    }
    if (op.kind != OpKind::WgMma || op.shared >= 0) return;
    const FragmentShape& a = values_[op.args[1]].fragment;
    if (a.role != FragmentRole::A || a.rows != 16 || a.cols != op.ivalue) {
      report(op.loc, fmt::format("wg.mma's register form takes the simdgroup's 16xK A fragment "
                                 "(K = {}), got {} {}x{}",
                                 op.ivalue, fragment_role_name(a.role), a.rows, a.cols));
    }
  }

  /// frag.get/set/coord: a slot the fragment has in each lane.
  void check_fragment_slot(const Op& op) {
    const FragmentShape& f = values_[op.args[0]].fragment;
    if (op.ivalue < 0 || op.ivalue >= f.elements_per_lane()) {
      report(op.loc, fmt::format("{} of slot {} of %{}, whose lanes hold {} elements each",
                                 op_name(op.kind), op.ivalue, op.args[0], f.elements_per_lane()));
    }
  }

  /// frag.rowvalue f, v and frag.rowreduce v, f: accumulators, the row vector v M×8 of f's M.
  void check_fragment_rows(const Op& op) {
    const bool reduce = op.kind == OpKind::FragRowReduce;
    const FragmentShape& v = values_[op.args[reduce ? 0 : 1]].fragment;
    const FragmentShape& f = values_[op.args[reduce ? 1 : 0]].fragment;
    if (v.role != FragmentRole::Acc || f.role != FragmentRole::Acc) {
      report(op.loc, fmt::format("{} takes acc fragments, got {} and {}", op_name(op.kind),
                                 fragment_role_name(values_[op.args[0]].fragment.role),
                                 fragment_role_name(values_[op.args[1]].fragment.role)));
    } else if (v.cols != 8 || v.rows != f.rows) {
      report(op.loc, fmt::format("{} of a {}x{} accumulator with a {}x{} row vector: the row "
                                 "vector is {}x8",
                                 op_name(op.kind), f.rows, f.cols, v.rows, v.cols, f.rows));
    }
  }

  /// frag.convert a, f: an A and an accumulator of one shape.
  void check_fragment_conversion(const Op& op) {
    const FragmentShape& a = values_[op.args[0]].fragment;
    const FragmentShape& f = values_[op.args[1]].fragment;
    if (a.role != FragmentRole::A || f.role != FragmentRole::Acc) {
      report(op.loc, fmt::format("frag.convert writes an a fragment from an acc, got {} from {}",
                                 fragment_role_name(a.role), fragment_role_name(f.role)));
    } else if (a.rows != f.rows || a.cols != f.cols) {
      report(op.loc, fmt::format("frag.convert of a {}x{} accumulator into a {}x{} a: the shapes "
                                 "differ",
                                 f.rows, f.cols, a.rows, a.cols));
    }
  }

  /// The operands' types, or nullopt when one of them is not visible here (reported).
  std::optional<std::vector<DType>> operand_types(const Op& op) {
    std::vector<DType> types;
    bool known = true;
    for (std::size_t i = 0; i < op.args.size(); ++i) {
      const ValueId id = op.args[i];
      if (id >= values_.size()) {
        report(op.loc,
               fmt::format("uses %{}, but the kernel has only {} values", id, values_.size()));
        known = false;
        continue;
      }
      const ValueInfo& v = values_[id];
      if (!v.visible) {
        report(op.loc, v.defined ? fmt::format("uses %{} outside the block that defines it", id)
                                 : fmt::format("uses %{} before its definition", id));
        known = false;
        continue;
      }
      const Storage wanted = storage_operand(op, i);
      if (v.storage != wanted) {
        report(op.loc, storage_mismatch(op, id, v.storage, wanted));
        known = false;
      } else if (!check_vector_use(op, id, v)) {
        known = false;
      } else if (wanted == Storage::Regs) {
        check_register_index(op, v);
      }
      types.push_back(v.type);
    }
    if (!known) return std::nullopt;
    if (op.kind == OpKind::FragMma) check_fragment_product(op);
    if (op_info(op.kind).types == TypeRule::FragmentElement) check_fragment_slot(op);
    if (op.kind == OpKind::FragRowValue || op.kind == OpKind::FragRowReduce) {
      check_fragment_rows(op);
    }
    if (op.kind == OpKind::FragConvert) check_fragment_conversion(op);
    if (op.kind == OpKind::FragLoad || op.kind == OpKind::FragStore) check_fragment_window(op);
    if (op.kind == OpKind::WgMma || op.kind == OpKind::WgWait) check_warpgroup_accumulator(op);
    return types;
  }

  void define(const Op& op) {
    const ValueId id = op.result;
    if (id == kNoValue) return;
    if (id >= values_.size()) {
      report(op.loc,
             fmt::format("defines %{}, but the kernel has only {} values", id, values_.size()));
      return;
    }
    ValueInfo& v = values_[id];
    if (v.defined) {
      report(op.loc, fmt::format("defines %{}, which is already defined", id));
      return;
    }
    v = {true,        true,        storage_defined_by(op.kind), op.type, op.lanes, op.ivalue,
         op.fragment, std::nullopt};
    if (op.kind == OpKind::Const && is_integer(op.type)) v.known = op.ivalue;
    scopes_.back().push_back(id);
  }

  const Kernel& k_;
  Stage stage_;
  std::vector<ValueInfo> values_;
  std::vector<std::vector<ValueId>> scopes_;
  std::vector<std::string> problems_;
  int pipelines_open_ = 0;
  const Block* pipeline_block_ = nullptr;  ///< the pipeline block being checked, if any
};

}  // namespace

std::vector<std::string> verify(const Kernel& kernel, Stage stage) {
  return Verifier(kernel, stage).run();
}

void verify_or_throw(const Kernel& kernel) {
  const std::vector<std::string> problems = verify(kernel);
  if (problems.empty()) return;
  std::string text;
  for (const std::string& p : problems) text += (text.empty() ? "" : "\n") + p;
  throw IrError(text);
}

}  // namespace iron::ir
