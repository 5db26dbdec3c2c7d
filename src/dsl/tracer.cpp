/// The tracing state: recording ops into nested blocks, scope checks and final kernel checks.
#include "iron/dsl/tracer.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <utility>

#include "iron/core/builder.hpp"
#include "iron/core/op_views.hpp"

namespace iron::dsl::detail {
namespace {
thread_local Tracer* g_current = nullptr;
}  // namespace

ir::SourceLoc to_loc(const SourceLocation& where) {
  std::string file = where.file_name();
  // A path relative to a build directory inside the project (`../kernels/…`, as a compiler
  // cache may leave it) is relative to the project's root once the `../` goes.
  while (file.starts_with("../")) file.erase(0, 3);
  // Builds map the project root away; a path from elsewhere keeps only its last parts.
  if (!file.empty() && file.front() == '/') {
    for (const char* root : {"/kernels/", "/tests/", "/src/", "/examples/"}) {
      if (auto at = file.rfind(root); at != std::string::npos) {
        file = file.substr(at + 1);
        break;
      }
    }
  }
  // A header reached as `kernels/ops/../primitives/x.hpp` is `kernels/primitives/x.hpp`, whichever
  // kernel file's copy of an inline function the linker kept.
  return {std::filesystem::path(file).lexically_normal().generic_string(), where.line()};
}

Tracer::Tracer(std::string kernel_name, DType dtype, ir::SourceLoc where) : previous_(g_current) {
  kernel_.name = std::move(kernel_name);
  kernel_.dtype = dtype;
  kernel_.loc = where;
  loc_ = std::move(where);
  scopes_.push_back({&kernel_.body, next_scope_++});
  g_current = this;
}

Tracer::~Tracer() { g_current = previous_; }

Tracer& Tracer::current() {
  if (g_current == nullptr) {
    throw TraceError("a DSL operation was called outside a kernel trace");
  }
  return *g_current;
}

void Tracer::fail(const std::string& message) const {
  throw TraceError(fmt::format("kernel {}: {}: {}", kernel_.name, format_loc(loc_), message));
}

void Tracer::check_visible(ir::ValueId id) const {
  if (id == ir::kNoValue || id >= value_scope_.size()) {
    fail("use of a DSL value that was never assigned (a default-constructed Expr?)");
  }
  const std::uint32_t scope = value_scope_[id];
  const bool visible =
      std::any_of(scopes_.begin(), scopes_.end(), [&](const Scope& s) { return s.id == scope; });
  if (!visible) {
    fail(fmt::format(
        "value %{} is used outside the loop or branch that defined it; declare a Var<T> "
        "before the scope and assign it inside",
        id));
  }
}

ir::Op& Tracer::record(ir::OpKind kind, DType type, std::vector<ir::ValueId> args) {
  for (ir::ValueId a : args) check_visible(a);
  ir::Builder builder(kernel_, scopes_.back().block->ops);
  ir::Op& op = builder.at(loc_).make(kind, type, std::move(args));
  if (op.result != ir::kNoValue) {
    value_types_.push_back(op.type);
    value_scope_.push_back(scopes_.back().id);
  }
  closed_if_pending_ = false;
  return op;
}

void Tracer::open_block(std::size_t block_index) {
  ir::Op& owner = scopes_.back().block->ops.back();
  IRON_INTERNAL_ASSERT(block_index < owner.blocks.size(), "open_block: no such block");
  // The induction value of a For belongs to its body; a pipeline's blocks define their own.
  if (owner.kind == ir::OpKind::For) value_scope_.at(owner.result) = next_scope_;
  scopes_.push_back({&owner.blocks[block_index], next_scope_++});
  closed_if_pending_ = false;
}

void Tracer::close_block() {
  IRON_INTERNAL_ASSERT(scopes_.size() > 1, "close_block: no open scope");
  scopes_.pop_back();
  closed_if_pending_ = scopes_.back().block->ops.back().kind == ir::OpKind::If;
}

ir::Op* Tracer::if_awaiting_else() {
  if (!closed_if_pending_) return nullptr;
  ir::Op& op = scopes_.back().block->ops.back();
  return ir::IfOp(op).else_block().ops.empty() ? &op : nullptr;
}

int Tracer::add_param(std::string name, ir::ParamKind kind, DType dtype) {
  kernel_.params.push_back({std::move(name), kind, dtype});
  written_.push_back(false);
  return static_cast<int>(kernel_.params.size() - 1);
}

int Tracer::add_shared(DType dtype, std::uint32_t size, bool ring, std::uint32_t swizzle) {
  if (size == 0) fail("shared<T>(0): a threadgroup allocation needs at least one element");
  const auto index = kernel_.shared.size();
  kernel_.shared.push_back({fmt::format("shm{}", index), dtype, size, 0, ring, swizzle});
  return static_cast<int>(index);
}

int Tracer::add_overlay(DType dtype, std::uint32_t size, int base) {
  if (base < 0 || static_cast<std::size_t>(base) >= kernel_.shared.size()) {
    fail("overlay<U>(base, size): base is not a threadgroup allocation of this kernel");
  }
  if (kernel_.shared[base].overlays >= 0) {
    fail("overlay<U>(base, size): base is itself an overlay; overlay its own base instead");
  }
  const int index = add_shared(dtype, size);
  kernel_.shared[index].overlays = base;
  return index;
}

void Tracer::set_dispatch(ir::DispatchContract contract) {
  if (dispatch_declared_) fail("dispatch(...) is declared twice");
  if (mode_locked_ && contract.mode != kernel_.dispatch.mode) {
    fail("dispatch(...) must come before program_id(), whose meaning depends on the mode");
  }
  dispatch_declared_ = true;
  kernel_.dispatch = std::move(contract);
}

ir::DispatchMode Tracer::lock_mode() {
  mode_locked_ = true;
  return kernel_.dispatch.mode;
}

void Tracer::defer_error(const ir::SourceLoc& where, const std::string& message) {
  deferred_.push_back(fmt::format("kernel {}: {}: {}", kernel_.name, format_loc(where), message));
}

ir::Kernel Tracer::finish() {
  if (!deferred_.empty()) throw TraceError(deferred_.front());
  IRON_INTERNAL_ASSERT(scopes_.size() == 1, "trace finished with open scopes");
  bool any_output = false;
  for (std::size_t i = 0; i < kernel_.params.size(); ++i) {
    const ir::Param& p = kernel_.params[i];
    if (!ir::is_output(p.kind)) continue;
    any_output = true;
    if (!written_[i]) {
      throw TraceError(fmt::format("kernel {}: {}: output '{}' is never written", kernel_.name,
                                   format_loc(kernel_.loc), p.name));
    }
  }
  if (!any_output) {
    throw TraceError(
        fmt::format("kernel {}: {}: the kernel writes no output (mark one parameter "
                    "Out<T>)",
                    kernel_.name, format_loc(kernel_.loc)));
  }
  return std::move(kernel_);
}

}  // namespace iron::dsl::detail
