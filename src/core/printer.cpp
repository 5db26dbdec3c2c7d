/// Prints a kernel in the text form that parse_kernel reads back (docs/compiler.md).
#include "iron/core/printer.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <span>

#include "iron/core/error.hpp"
#include "iron/core/op_views.hpp"
#include "op_rules.hpp"

namespace iron::ir {
namespace {

constexpr std::string_view kAxisNames = "xyz";

/// Shortest decimal text that reads back as the same double; inf, -inf and nan by name.
std::string format_double(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  char buf[32];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  IRON_INTERNAL_ASSERT(ec == std::errc(), "to_chars failed on a double");
  return {buf, end};
}

std::string value(ValueId id) { return fmt::format("%{}", id); }

class Printer {
 public:
  Printer(const Kernel& k, const PrintOptions& options) : k_(k), options_(options) {}

  std::string run() {
    out_ = fmt::format("kernel {} dtype={} mode={}", k_.name, dtype_name(k_.dtype),
                       dispatch_mode_name(k_.dispatch.mode));
    end_line(k_.loc);
    for (const Param& p : k_.params) {
      out_ +=
          fmt::format("  param {} {}: {}\n", param_kind_name(p.kind), p.name, dtype_name(p.dtype));
    }
    for (const SharedAlloc& s : k_.shared) {
      out_ += fmt::format("  shared {}: {}[{}]{}", s.name, dtype_name(s.dtype), s.size,
                          s.ring ? " ring" : "");
      if (s.swizzle != 0) out_ += fmt::format(" swizzle {}", s.swizzle);
      if (s.overlays >= 0) out_ += fmt::format(" overlays {}", k_.shared[s.overlays].name);
      // Once laid out (shared_bytes set), every allocation shows its offset, even 0.
      if (s.offset != 0 || k_.shared_bytes != 0) out_ += fmt::format(" offset={}", s.offset);
      out_ += '\n';
    }
    if (k_.shared_bytes != 0) out_ += fmt::format("  shared_bytes {}\n", k_.shared_bytes);
    if (options_.locations && k_.dispatch.loc.known()) {
      out_ += "  dispatch";
      end_line(k_.dispatch.loc);
    }
    for (const SizeRule& r : k_.dispatch.group_size_rules) out_ += rule(r);
    if (k_.dispatch.occupancy != 0) out_ += fmt::format("  occupancy {}\n", k_.dispatch.occupancy);
    for (const GridRule& r : k_.dispatch.grid_rules) {
      out_ += fmt::format("  grid groups.{} {} {}", kAxisNames[r.axis % 3],
                          relation_name(r.relation), print_size_expr(r.bound));
      end_line(r.loc);
    }
    for (const TensorLayout& l : k_.dispatch.layouts) {
      out_ +=
          fmt::format("  layout {} {} {}", l.param, l.exact ? "==" : ">=", print_size_dims(l.dims));
      end_line(l.loc);
    }
    for (const TensorMap& m : k_.tensor_maps) {
      out_ += fmt::format("  tensor_map {} {} box {}, {} swizzle {}", param_name(m.param),
                          print_size_dims({m.base, m.height, m.width}), m.box_rows, m.box_cols,
                          m.swizzle);
      if (m.box_width != 0) {
        out_ += fmt::format(" image {} across {}", print_size_dims({m.images, m.image_width}),
                            m.box_width);
      }
      out_ += "\n";
    }
    for (const ConstexprRule& r : k_.dispatch.constexpr_rules) {
      out_ += fmt::format("  require {} multiple_of {}", r.constexpr_name, r.multiple);
      end_line(r.loc);
    }
    for (const ConstexprBound& b : k_.dispatch.constexpr_bounds) {
      out_ += fmt::format("  require {} {} {}", b.constexpr_name, relation_name(b.relation),
                          print_size_expr(b.bound));
      end_line(b.loc);
    }
    out_ += fmt::format("  values {}\n{{\n", k_.num_values);
    block(k_.body, 1);
    out_ += "}\n";
    return std::move(out_);
  }

 private:
  static std::string rule(const SizeRule& r) {
    std::string line = fmt::format("  rule {}", size_rule_name(r.kind));
    if (r.kind == SizeRule::Kind::PowerOfTwo) return line + "\n";
    if (r.constexpr_name.empty()) return line + fmt::format(" {}\n", r.value);
    if (r.divisor == 1) return line + fmt::format(" {}\n", r.constexpr_name);
    return line + fmt::format(" {}/{}\n", r.constexpr_name, r.divisor);
  }

  void end_line(const SourceLoc& loc) {
    if (options_.locations && loc.known()) out_ += "  ; " + format_loc(loc);
    out_ += '\n';
  }

  void block(const Block& b, int depth) {
    for (const Op& op : b.ops) this->op(op, depth);
  }

  void op(const Op& op, int depth) {
    const std::string indent(2 * static_cast<std::size_t>(depth), ' ');
    out_ += indent;
    if (op.kind == OpKind::For) {
      IRON_INTERNAL_ASSERT(op.args.size() == 3 && op.blocks.size() == 1, "malformed for op");
      const ForOp loop(op);
      out_ += fmt::format("for {} = {} to {} step {}{} : {} {{", value(loop.induction()),
                          value(loop.start()), value(loop.end()), value(loop.step()),
                          op.ivalue == 1 ? " rolled" : "", dtype_name(op.type));
      end_line(op.loc);
      block(loop.body(), depth + 1);
      out_ += indent + "}\n";
      return;
    }
    if (op.kind == OpKind::Pipeline) {
      IRON_INTERNAL_ASSERT(op.args.size() == 3 && op.blocks.size() == 2, "malformed pipeline op");
      out_ += fmt::format(
          "pipeline {} to {} step {} stages {}{}{} : {} {{", value(op.args[0]), value(op.args[1]),
          value(op.args[2]), op.ivalue,
          op.axis == 0 ? std::string() : fmt::format(" lag {}", op.axis),
          op.consumers == 0 ? std::string() : fmt::format(" consumers {}", op.consumers),
          dtype_name(op.type));
      end_line(op.loc);
      block(op.blocks[0], depth + 1);
      out_ += indent + "} then {\n";
      block(op.blocks[1], depth + 1);
      out_ += indent + "}\n";
      return;
    }
    if (op.result != kNoValue) out_ += value(op.result) + " = ";
    if (op.kind == OpKind::If) {
      IRON_INTERNAL_ASSERT(op.args.size() == 1 && op.blocks.size() == 2, "malformed if op");
      const IfOp branch(op);
      out_ += fmt::format("if {} {{", value(branch.condition()));
      end_line(op.loc);
      block(branch.then_block(), depth + 1);
      if (!branch.else_block().ops.empty()) {
        out_ += indent + "} else {\n";
        block(branch.else_block(), depth + 1);
      }
      out_ += indent + "}\n";
      return;
    }
    out_ += op_name(op.kind);
    out_ += operands(op);
    if (op_has_type(op.kind)) out_ += " : " + type_text(op);
    end_line(op.loc);
  }

  /// `f16`, or `f16x8` for a vector access of 8 lanes.
  static std::string type_text(const Op& op) {
    std::string text(dtype_name(op.type));
    if (op.lanes != 1) text += fmt::format("x{}", op.lanes);
    return text;
  }

  /// Everything between the op name and the type suffix: the operands, and what the op holds
  /// besides them (a literal, a parameter, a builtin, an access's target or a lane).
  std::string operands(const Op& op) const {
    switch (op_attributes(op.kind)) {
      case OpAttributes::None:
        return value_list(op.args);
      case OpAttributes::Literal:
        return " " + (is_float(op.type) ? format_double(op.fvalue) : std::to_string(op.ivalue));
      case OpAttributes::Constexpr:
        return " " + param_name(op.param);
      case OpAttributes::Builtin:
        return " " + builtin(op);
      case OpAttributes::Tensor:
        return " " + indexed(param_name(op.param), op);
      case OpAttributes::Shared:
        return " " + indexed(shared_name(op.shared), op);
      case OpAttributes::TensorOrShared:
        return " " + indexed(op.shared >= 0 ? shared_name(op.shared) : param_name(op.param), op);
      case OpAttributes::Lane:
      case OpAttributes::Count:
        return value_list(op.args) + fmt::format(", {}", op.ivalue);
      case OpAttributes::Fragment:
        return value_list(op.args) + fmt::format(", {}, {}, {}",
                                                 fragment_role_name(op.fragment.role),
                                                 op.fragment.rows, op.fragment.cols);
      case OpAttributes::AsyncCopy:
        IRON_INTERNAL_ASSERT(op.args.size() == 3, "copy.async without its three operands");
        return fmt::format(" {}[{}], {}[{}], {}", shared_name(op.shared), value(op.args[0]),
                           param_name(op.param), value(op.args[1]), value(op.args[2]));
      case OpAttributes::Pending:
      case OpAttributes::Threads:
        return fmt::format(" {}", op.ivalue);
      case OpAttributes::StageIndex:
        return op.axis == 1 ? " slot" : " step";
      case OpAttributes::Stages:
        IRON_INTERNAL_ERROR("a pipeline is written as a loop, not with operands");
      case OpAttributes::FragmentSlot:
        return value_list(op.args) + fmt::format(", {}", op.ivalue) +
               (op.kind == OpKind::FragCoord ? (op.axis == 1 ? ", col" : ", row") : "");
      case OpAttributes::Reduction:
        return value_list(op.args) +
               fmt::format(", {}", row_reduction_name(static_cast<RowReduction>(op.ivalue)));
      case OpAttributes::WarpgroupPending:
        return value_list(op.args) + fmt::format(", {}", op.ivalue);
      case OpAttributes::Feature:
        return fmt::format(" {}", target_feature_name(static_cast<TargetFeature>(op.ivalue)));
      case OpAttributes::RegisterBudget:
        return fmt::format(" {} {}", op.axis == 1 ? "inc" : "dec", op.ivalue);
      case OpAttributes::Turn:
        return fmt::format(" {} {}", turn_step_name(static_cast<TurnStep>(op.axis)), op.ivalue);
      case OpAttributes::TileBox: {
        const bool image = op.ivalue != 0;
        IRON_INTERNAL_ASSERT(op.args.size() == (image ? 10U : 6U),
                             "copy.tile without its six (an image's ten) operands");
        std::string text =
            fmt::format(" {}[{}], {}[{}], {}, {}, {}, {}, box {}, {}", shared_name(op.shared),
                        value(op.args[0]), param_name(op.param), value(op.args[1]),
                        value(op.args[2]), value(op.args[3]), value(op.args[4]), value(op.args[5]),
                        op.fragment.rows, op.fragment.cols);
        if (image) {
          text += fmt::format(", image {}, {}, {}, {}, across {}", value(op.args[6]),
                              value(op.args[7]), value(op.args[8]), value(op.args[9]), op.ivalue);
        }
        return text;
      }
      case OpAttributes::TensorBox: {
        const bool image = op.axis == 1;
        IRON_INTERNAL_ASSERT(op.args.size() == (image ? 6U : 4U),
                             "copy.tensor without its four (an image's six) operands");
        std::string text = fmt::format(
            " {}[{}], map {}, {}, {}, {}[{}]", shared_name(op.shared), value(op.args[0]), op.ivalue,
            value(op.args[1]), value(op.args[2]), shared_name(op.shared_b), value(op.args[3]));
        if (image) text += fmt::format(", image {}, {}", value(op.args[4]), value(op.args[5]));
        return text;
      }
      case OpAttributes::Barrier: {
        std::string text = fmt::format(" {}[{}]", shared_name(op.shared), value(op.args.at(0)));
        if (op.kind == OpKind::MbarWait) return text + ", " + value(op.args.at(1));
        if (op.kind == OpKind::MbarInval || op.kind == OpKind::MbarArrive) return text;
        return text + fmt::format(", {}", op.ivalue);
      }
      case OpAttributes::WarpgroupOperands: {
        IRON_INTERNAL_ASSERT(op.args.size() == op_arity(op), "wg.mma without its operands");
        // A row-major B's layout carries its panel stride: `row %p`.
        const bool panels = op.layout == MatrixLayout::RowMajor;
        const std::string layout =
            panels ? fmt::format("{} {}", matrix_layout_name(op.layout), value(op.args.back()))
                   : std::string(matrix_layout_name(op.layout));
        if (op.shared < 0) {
          return fmt::format(" {}, {}, {}[{}], {}, {}, {}", value(op.args[0]), value(op.args[1]),
                             shared_name(op.shared_b), value(op.args[2]), value(op.args[3]), layout,
                             op.ivalue);
        }
        return fmt::format(" {}, {}[{}], {}, {}[{}], {}, {}, {}", value(op.args[0]),
                           shared_name(op.shared), value(op.args[1]), value(op.args[2]),
                           shared_name(op.shared_b), value(op.args[3]), value(op.args[4]), layout,
                           op.ivalue);
      }
      case OpAttributes::FragmentMemory: {
        IRON_INTERNAL_ASSERT(op.args.size() == 3, "frag.load/store without its three operands");
        const std::string target = op.shared >= 0 ? shared_name(op.shared) : param_name(op.param);
        const FragAccessOp access(op);
        const std::string window =
            access.windowed()
                ? fmt::format(", cols {} {}", access.window_first(), access.window_cols())
                : "";
        return fmt::format(" {}[{}], {}, {}, {}{}", target, value(op.args[0]), value(op.args[1]),
                           value(op.args[2]), matrix_layout_name(op.layout), window);
      }
    }
    IRON_INTERNAL_ERROR("an op kind outside the op table");
  }

  static std::string builtin(const Op& op) {
    std::string text(builtin_name(op.builtin));
    if (!builtin_has_axis(op.builtin)) return text;
    if (op.axis < kAxisNames.size()) return text + '.' + kAxisNames[op.axis];
    return fmt::format("{}.{}", text, op.axis);
  }

  /// `target[%index], %rest...`: a param by name, a shared allocation as `@name`.
  static std::string indexed(const std::string& target, const Op& op) {
    IRON_INTERNAL_ASSERT(!op.args.empty(), "indexed op without an index");
    const AccessOp access(op);
    std::string text = fmt::format("{}[{}]", target, value(access.index()));
    if (!access.values().empty()) text += "," + value_list(access.values());
    return text;
  }

  /// ` %a, %b, ...`.
  static std::string value_list(std::span<const ValueId> ids) {
    std::string text;
    for (const ValueId id : ids) text += (text.empty() ? " " : ", ") + value(id);
    return text;
  }

  std::string param_name(int index) const {
    IRON_INTERNAL_ASSERT(index >= 0 && static_cast<std::size_t>(index) < k_.params.size(),
                         fmt::format("op refers to parameter #{}, which does not exist", index));
    return k_.params[index].name;
  }

  std::string shared_name(int index) const {
    IRON_INTERNAL_ASSERT(
        index >= 0 && static_cast<std::size_t>(index) < k_.shared.size(),
        fmt::format("op refers to shared allocation #{}, which does not exist", index));
    return "@" + k_.shared[index].name;
  }

  const Kernel& k_;
  const PrintOptions& options_;
  std::string out_;
};

}  // namespace

std::string print_kernel(const Kernel& kernel, const PrintOptions& options) {
  return Printer(kernel, options).run();
}

}  // namespace iron::ir
