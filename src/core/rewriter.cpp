/// The rewrite driver: one walk over the blocks, the pass's decision per op, and the renaming
/// of the values it replaced.
#include "iron/core/rewriter.hpp"

#include <unordered_map>
#include <utility>

#include "iron/core/op_views.hpp"

namespace iron::ir {

Rewrite Rewrite::replace_with_value(ValueId value) {
  Rewrite r(Kind::ReplaceWithValue);
  r.value_ = value;
  return r;
}

Rewrite Rewrite::replace_with_ops(std::vector<Op> ops) {
  Rewrite r(Kind::ReplaceWithOps);
  r.ops_ = std::move(ops);
  return r;
}

Rewrite Rewrite::expand(std::vector<Op> ops) {
  Rewrite r(Kind::Expand);
  r.ops_ = std::move(ops);
  return r;
}

Builder RewriteSite::before() const {
  Builder builder(kernel_, before_);
  builder.at(op_.loc);
  return builder;
}

namespace {

class Driver {
 public:
  Driver(Kernel& kernel, Order order, const RewriteFn& fn)
      : kernel_(kernel), order_(order), fn_(fn) {}

  /// Rebuilds `block`: each op is decided in its original place, then moved to the new list.
  void rewrite_block(Block& b) {
    std::vector<Op> pending = std::move(b.ops);
    b.ops.clear();
    b.ops.reserve(pending.size());
    for (Op& op : pending) visit(op, b.ops);
  }

 private:
  void visit(Op& op, std::vector<Op>& out) {
    for (ValueId& a : op.args) a = renamed(a);
    if (order_ == Order::InnerFirst) {
      for (Block& nested : op.blocks) rewrite_block(nested);
    }
    RewriteSite site(kernel_, out, op);
    Rewrite r = fn_(op, site);
    switch (r.kind()) {
      case Rewrite::Kind::Keep:
        out.push_back(std::move(op));
        if (order_ == Order::OuterFirst) {
          for (Block& nested : out.back().blocks) rewrite_block(nested);
        }
        return;
      case Rewrite::Kind::Erase:
        return;
      case Rewrite::Kind::ReplaceWithValue:
        replaced_[op.result] = r.value();
        return;
      case Rewrite::Kind::ReplaceWithOps:
        for (Op& o : r.ops()) out.push_back(std::move(o));
        return;
      case Rewrite::Kind::Expand:
        for (Op& o : r.ops()) visit(o, out);
        return;
    }
  }

  /// `v` after every replacement made so far (which may chain: a -> b -> c).
  ValueId renamed(ValueId v) const {
    for (auto it = replaced_.find(v); it != replaced_.end(); it = replaced_.find(v)) v = it->second;
    return v;
  }

  Kernel& kernel_;
  Order order_;
  const RewriteFn& fn_;
  std::unordered_map<ValueId, ValueId> replaced_;
};

}  // namespace

void rewrite(Kernel& kernel, Order order, const RewriteFn& fn) {
  Driver(kernel, order, fn).rewrite_block(kernel.body);
}

void remove_empty_control_flow(Kernel& kernel) {
  rewrite(kernel, Order::InnerFirst, [](Op& op, RewriteSite&) {
    const bool empty_loop = op.kind == OpKind::For && ForOp(op).body().ops.empty();
    const bool empty_branch = op.kind == OpKind::If && IfOp(op).then_block().ops.empty() &&
                              IfOp(op).else_block().ops.empty();
    return empty_loop || empty_branch ? Rewrite::erase() : Rewrite::keep();
  });
}

}  // namespace iron::ir
