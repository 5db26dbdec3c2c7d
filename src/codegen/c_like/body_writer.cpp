/// The statement walker of the C-like emitters: scopes, control flow, unused values, locations.
#include "body_writer.hpp"

#include <fmt/format.h>

#include <set>
#include <tuple>
#include <utility>
#include <vector>

#include "context.hpp"
#include "expressions.hpp"
#include "iron/core/error.hpp"
#include "iron/core/op_views.hpp"

namespace iron::codegen::c_like {
namespace {

using ir::OpKind;

class BodyWriter {
 public:
  BodyWriter(const ir::Kernel& kernel, const Dialect& dialect, Needs& needs)
      : values_(kernel, dialect, needs), cx_{kernel, values_, dialect, needs} {}

  std::string write() {
    shared_declarations();
    for (const ir::Op& op : cx_.kernel.body.ops) statement(op);
    std::string text;
    for (const std::string& line : lines_) text += line + "\n";
    return text;
  }

 private:
  void shared_declarations() {
    const ir::Kernel& k = cx_.kernel;
    if (k.shared.empty()) return;
    IRON_INTERNAL_ASSERT(k.shared_bytes > 0,
                         "shared memory reached the emitter unplaced: run layout_shared_memory");
    std::set<int> vector_access;
    ir::walk(k.body, [&](const ir::Op& op) {
      if (op.shared >= 0 && op.lanes > 1) vector_access.insert(op.shared);
    });
    for (std::size_t i = 0; i < k.shared.size(); ++i) {
      for (const std::string& text :
           cx_.dialect.shared_declaration(k, i, vector_access.contains(static_cast<int>(i)))) {
        line(text, {});
      }
    }
    lines_.emplace_back();
    block_start_ = true;
  }

  void block(const ir::Block& b) {
    ++depth_;
    block_start_ = true;
    for (const ir::Op& op : b.ops) statement(op);
    --depth_;
  }

  void statement(const ir::Op& op) {
    IRON_INTERNAL_ASSERT(ir::op_class(op.kind) != ir::OpClass::Group,
                         "reduce.* reached the emitter: run lower_reductions first");
    const Values& v = values_;
    if (!v.emitted(op)) return;  // an unread value: only atomics have effects, and they are kept
    // The ops written as statements of their own; every other op is the expression of a value.
    using Writer = void (BodyWriter::*)(const ir::Op&);
    static constexpr std::pair<OpKind, Writer> kStatements[] = {
        {OpKind::Const, &BodyWriter::constant},
        {OpKind::VarDecl, &BodyWriter::variable},
        {OpKind::VarStore, &BodyWriter::assignment},
        {OpKind::Store, &BodyWriter::store},
        {OpKind::SharedStore, &BodyWriter::store},
        {OpKind::Barrier, &BodyWriter::barrier},
        {OpKind::BarrierAmong, &BodyWriter::barrier_among},
        {OpKind::BarrierSimdgroup, &BodyWriter::simdgroup_barrier},
        {OpKind::For, &BodyWriter::loop},
        {OpKind::If, &BodyWriter::branch},
        {OpKind::FragDecl, &BodyWriter::fragment},
        {OpKind::FragLoad, &BodyWriter::fragment_access},
        {OpKind::FragStore, &BodyWriter::fragment_access},
        {OpKind::FragMma, &BodyWriter::fragment_product},
        {OpKind::FragSet, &BodyWriter::fragment_element},
        {OpKind::FragRowReduce, &BodyWriter::fragment_transform},
        {OpKind::FragConvert, &BodyWriter::fragment_transform},
        {OpKind::CopyAsync, &BodyWriter::async_copy},
        {OpKind::AsyncCommit, &BodyWriter::async_group},
        {OpKind::AsyncWait, &BodyWriter::async_group},
        {OpKind::WgMma, &BodyWriter::warpgroup},
        {OpKind::WgCommit, &BodyWriter::warpgroup},
        {OpKind::WgWait, &BodyWriter::warpgroup},
        {OpKind::FenceProxyAsync, &BodyWriter::warpgroup},
        {OpKind::CopyTensor, &BodyWriter::tensor_copy},
        {OpKind::MbarInit, &BodyWriter::mbarrier},
        {OpKind::MbarExpect, &BodyWriter::mbarrier},
        {OpKind::MbarWait, &BodyWriter::mbarrier},
        {OpKind::MbarInval, &BodyWriter::mbarrier},
        {OpKind::MbarArrive, &BodyWriter::mbarrier},
        {OpKind::WgRegisters, &BodyWriter::warpgroup},
        {OpKind::WgTurn, &BodyWriter::warpgroup},
        {OpKind::Exit, &BodyWriter::exit},
    };
    for (const auto& [kind, writer] : kStatements) {
      if (kind == op.kind) return (this->*writer)(op);
    }
    const std::string expression = value_expression(op, cx_);
    if (op.result == ir::kNoValue || v.uses(op.result) == 0) return line(expression + ";", op.loc);
    line("const " + type_of(op) + " " + v.name(op.result) + " = " + expression + ";", op.loc);
  }

  /// A constant is inlined at every use, unless it must be bound to a local.
  void constant(const ir::Op& op) {
    if (const auto literal = values_.bound_literal(op.result)) {
      line(type_of(op) + " " + values_.name(op.result) + " = " + *literal + ";", op.loc);
    }
  }

  void variable(const ir::Op& op) {
    const std::string init = values_.name(ir::VarOp(op).init());
    line(type_of(op) + " " + values_.name(op.result) + " = " + init + ";", op.loc);
  }

  void assignment(const ir::Op& op) {
    const ir::VarOp store(op);
    line(values_.name(store.variable()) + " = " + values_.name(store.value()) + ";", op.loc);
  }

  void barrier(const ir::Op& op) { line(cx_.dialect.barrier(), op.loc); }
  void barrier_among(const ir::Op& op) {
    const std::string text = cx_.dialect.barrier_among(static_cast<std::uint32_t>(op.ivalue));
    if (text.empty()) {
      throw Error(fmt::format(
          "kernel {}: the barrier among the first {} threads at {}:{} has no form on this target "
          "(Metal has no barrier of part of a threadgroup): keep it on a path the target does "
          "not take (target_has)",
          cx_.kernel.name, op.ivalue, op.loc.file, op.loc.line));
    }
    line(text, op.loc);
  }
  void simdgroup_barrier(const ir::Op& op) { line(cx_.dialect.simdgroup_barrier(), op.loc); }
  void exit(const ir::Op& op) { line("return;", op.loc); }

  void fragment(const ir::Op& op) {
    const std::string init = values_.name(op.args[0]);
    for (const std::string& s : cx_.dialect.fragment_declaration(
             values_.name(op.result), op.fragment, op.type, init, cx_.needs)) {
      line(s, op.loc);
    }
  }

  const ir::FragmentShape& shape_of(ir::ValueId fragment) const {
    return values_.fragment(fragment);
  }

  void async_copy(const ir::Op& op) {
    const ir::CopyAsyncOp copy(op);
    Access dst = target_of(-1, op.shared, cx_);
    Access src = target_of(op.param, -1, cx_);
    dst.index = placed_index(cx_.kernel.shared.at(static_cast<std::size_t>(op.shared)),
                             values_.name(copy.destination()));
    src.index = values_.name(copy.source());
    for (Access* a : {&dst, &src}) {
      a->type = op.type;
      a->lanes = op.lanes;
    }
    for (const std::string& s :
         cx_.dialect.async_copy(dst, src, values_.name(copy.valid()), cx_.needs)) {
      line(s, op.loc);
    }
  }

  void warpgroup(const ir::Op& op) {
    Needs& needs = cx_.needs;
    if (op.kind == OpKind::WgMma) {
      const ir::WgMmaOp mma(op);
      const auto operand = [&](int alloc, ir::ValueId offset) {
        return cx_.kernel.shared.at(static_cast<std::size_t>(alloc)).name + " + " +
               values_.name(offset);
      };
      const bool registers = mma.a_in_registers();
      const c_like::WarpgroupProduct p{
          .d = values_.name(mma.d()),
          .a = registers ? values_.name(mma.a()) : operand(op.shared, mma.a_offset()),
          .b = operand(op.shared_b, mma.b_offset()),
          .n = shape_of(mma.d()).cols,
          .k = mma.k(),
          .input = cx_.kernel.shared.at(op.shared_b).dtype,
          .a_in_registers = registers,
          .b_rows = mma.b_in_panels(),
          .b_panel = mma.b_in_panels() ? values_.name(mma.b_panel()) : std::string()};
      return line(cx_.dialect.warpgroup_product(p, needs), op.loc);
    }
    if (op.kind == OpKind::WgCommit) return line(cx_.dialect.warpgroup_commit(needs), op.loc);
    if (op.kind == OpKind::WgWait) {
      return line(cx_.dialect.warpgroup_wait(values_.name(op.args[0]), shape_of(op.args[0]).cols,
                                             static_cast<int>(op.ivalue), needs),
                  op.loc);
    }
    if (op.kind == OpKind::WgRegisters) {
      return line(cx_.dialect.register_budget(op.ivalue, op.axis == 1, needs), op.loc);
    }
    if (op.kind == OpKind::WgTurn) {
      return line(cx_.dialect.turn(static_cast<ir::TurnStep>(op.axis),
                                   static_cast<std::uint32_t>(op.ivalue), needs),
                  op.loc);
    }
    line(cx_.dialect.proxy_fence(needs), op.loc);
  }

  /// Mbarrier `index` of allocation `alloc`: its first word (each takes two).
  std::string barrier_address(int alloc, ir::ValueId index) const {
    return cx_.kernel.shared.at(static_cast<std::size_t>(alloc)).name + " + 2u * " +
           values_.name(index);
  }

  void tensor_copy(const ir::Op& op) {
    const ir::SharedAlloc& dst = cx_.kernel.shared.at(static_cast<std::size_t>(op.shared));
    const std::string to = dst.name + " + " + placed_index(dst, values_.name(op.args[0]));
    std::vector<std::string> coordinates = {values_.name(op.args[1]), values_.name(op.args[2])};
    for (std::size_t i = 4; i < op.args.size(); ++i)
      coordinates.push_back(values_.name(op.args[i]));
    line(cx_.dialect.tensor_copy(to, static_cast<std::size_t>(op.ivalue), coordinates,
                                 barrier_address(op.shared_b, op.args[3]), cx_.needs),
         op.loc);
  }

  void mbarrier(const ir::Op& op) {
    const std::string parity = op.kind == OpKind::MbarWait ? values_.name(op.args[1]) : "";
    line(cx_.dialect.mbarrier(op.kind, barrier_address(op.shared, op.args[0]), op.ivalue, parity,
                              cx_.needs),
         op.loc);
  }

  void async_group(const ir::Op& op) {
    line(op.kind == OpKind::AsyncCommit
             ? cx_.dialect.async_commit(cx_.needs)
             : cx_.dialect.async_wait(static_cast<int>(op.ivalue), cx_.needs),
         op.loc);
  }

  void fragment_element(const ir::Op& op) {
    const ir::FragSlotOp set(op);
    const std::string element = cx_.dialect.fragment_element(
        values_.name(set.fragment()), shape_of(set.fragment()), op.type, set.slot());
    line(element + " = " + values_.name(set.value()) + ";", op.loc);
  }

  void fragment_transform(const ir::Op& op) {
    const ir::FragTransformOp transform(op);
    const std::string destination = values_.name(transform.destination());
    const std::string source = values_.name(transform.source());
    line(
        op.kind == OpKind::FragRowReduce
            ? cx_.dialect.fragment_row_reduce(destination, source, transform.reduction(), cx_.needs)
            : cx_.dialect.fragment_convert(destination, source, cx_.needs),
        op.loc);
  }

  void fragment_access(const ir::Op& op) {
    const ir::FragAccessOp access(op);
    const Access memory = target_of(op.param, op.shared, cx_);
    c_like::FragmentAccess f{.fragment = values_.name(access.fragment()),
                             .shape = shape_of(access.fragment()),
                             .type = op.type,
                             .space = memory.space,
                             .base = memory.base,
                             .offset = values_.name(access.offset()),
                             .stride = values_.name(access.stride()),
                             .layout = access.layout(),
                             .store = access.is_store(),
                             .window_first = access.window_first(),
                             .window_cols = access.window_cols()};
    if (op.shared >= 0) {
      std::tie(f.swizzle_row_shift, f.swizzle_chunk_shift) =
          swizzle_shifts(cx_.kernel.shared.at(static_cast<std::size_t>(op.shared)));
    }
    line(cx_.dialect.fragment_access(f, cx_.needs), op.loc);
  }

  void fragment_product(const ir::Op& op) {
    const ir::FragMmaOp mma(op);
    const ir::FragmentShape& a = shape_of(mma.a());
    const ir::FragmentShape& b = shape_of(mma.b());
    const c_like::FragmentProduct p{.d = values_.name(mma.d()),
                                    .a = values_.name(mma.a()),
                                    .b = values_.name(mma.b()),
                                    .m = a.rows,
                                    .n = b.cols,
                                    .k = a.cols,
                                    .input = values_.type(mma.a())};
    line(cx_.dialect.fragment_product(p, cx_.needs), op.loc);
  }

  void store(const ir::Op& op) {
    const Access a = access_of(op, cx_);
    const ir::AccessOp access(op);
    if (op.lanes == 1) {
      return line(a.base + "[" + a.index + "] = " + values_.name(access.value()) + ";", op.loc);
    }
    std::vector<std::string> lanes;
    for (const ir::ValueId lane : access.values()) lanes.push_back(values_.name(lane));
    IRON_INTERNAL_ASSERT(lanes.size() == op.lanes, "vector store without one value per lane");
    for (const std::string& s : cx_.dialect.vector_store(a, lanes, cx_.needs)) line(s, op.loc);
  }

  void loop(const ir::Op& op) {
    if (!block_start_) lines_.emplace_back();
    const Values& v = values_;
    const ir::ForOp loop(op);
    const std::string i = v.name(loop.induction());
    if (op.ivalue == 1 && !cx_.dialect.rolled_loop().empty()) line(cx_.dialect.rolled_loop(), {});
    line("for (" + cx_.dialect.type(op.type) + " " + i + " = " + v.name(loop.start()) + "; " + i +
             " < " + v.operand(loop.end()) + "; " + i + " += " + v.name(loop.step()) + ") {",
         op.loc);
    block(loop.body());
    close("}");
  }

  void branch(const ir::Op& op) {
    const ir::IfOp branch(op);
    line("if (" + values_.name(branch.condition()) + ") {", op.loc);
    block(branch.then_block());
    if (!branch.else_block().ops.empty()) {
      close("} else {");
      block(branch.else_block());
    }
    close("}");
  }

  std::string type_of(const ir::Op& op) {
    const bool vector = (op.kind == OpKind::Load || op.kind == OpKind::SharedLoad) && op.lanes > 1;
    return vector ? cx_.dialect.vector_type(op.type, op.lanes, cx_.needs)
                  : cx_.dialect.type(op.type);
  }

  /// Two spaces per level of nesting. Parentheses, not braces: braces would list characters.
  // NOLINTNEXTLINE(modernize-return-braced-init-list)
  std::string indent() const { return std::string(2 * static_cast<std::size_t>(depth_), ' '); }

  /// A statement at the current depth, with its location when that changed.
  void line(const std::string& text, const ir::SourceLoc& loc) {
    std::string out = indent() + text;
    if (loc.known() && (loc.line != last_loc_.line || loc.file != last_loc_.file)) {
      out += "  // " + loc.file + ":" + std::to_string(loc.line);
      last_loc_ = loc;
    }
    lines_.push_back(std::move(out));
    block_start_ = false;
  }

  /// A closing line (`}` or `} else {`), without a location.
  void close(const std::string& text) {
    lines_.push_back(indent() + text);
    block_start_ = false;
  }

  Values values_;
  Context cx_;
  std::vector<std::string> lines_;
  int depth_ = 1;            ///< statements of the function body are indented once
  bool block_start_ = true;  ///< nothing written yet in the innermost block
  ir::SourceLoc last_loc_;
};

}  // namespace

std::string write_body(const ir::Kernel& kernel, const Dialect& dialect, Needs& needs) {
  return BodyWriter(kernel, dialect, needs).write();
}

}  // namespace iron::codegen::c_like
