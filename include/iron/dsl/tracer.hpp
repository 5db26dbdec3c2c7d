/// The tracing state behind the DSL: the kernel being built, the stack of open blocks (scopes),
/// which scope defined each value, and the source location of the latest DSL call. Every DSL
/// operation records ops in the innermost open block through the current Tracer.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "iron/core/error.hpp"
#include "iron/core/ir.hpp"
#include "iron/core/source_location.hpp"

namespace iron::dsl::detail {

ir::SourceLoc to_loc(const SourceLocation& where);

class Tracer {
 public:
  Tracer(std::string kernel_name, DType dtype, ir::SourceLoc where);
  ~Tracer();
  Tracer(const Tracer&) = delete;
  Tracer& operator=(const Tracer&) = delete;

  /// The tracer of the kernel being traced on this thread; a TraceError outside any trace.
  static Tracer& current();

  ir::Kernel& kernel() { return kernel_; }
  const std::string& name() const { return kernel_.name; }

  /// Remembers where the user's latest DSL call is, for ops and errors that follow.
  void at(const SourceLocation& where) {
    if (where.file_name() != loc_file_) {
      loc_.file = to_loc(where).file;
      loc_file_ = where.file_name();
    }
    loc_.line = where.line();
  }
  const ir::SourceLoc& loc() const { return loc_; }

  /// Records an op of `kind` at the end of the innermost block, at the current location, made
  /// by the IR builder (so with a fresh result where the op defines one); checks that every
  /// operand is visible here. The reference, for the op's attributes, is valid until the next
  /// op is recorded.
  ir::Op& record(ir::OpKind kind, DType type, std::vector<ir::ValueId> args);
  /// Throws unless value `id` was defined in this scope or one that encloses it.
  void check_visible(ir::ValueId id) const;
  DType type_of(ir::ValueId id) const { return value_types_.at(id); }

  /// Opens block `block_index` of the last op of the innermost block (a For or If) as a scope.
  void open_block(std::size_t block_index);
  /// Closes the innermost scope.
  void close_block();
  std::size_t depth() const { return scopes_.size(); }
  /// The If op that was closed just now in the innermost block, or nullptr.
  ir::Op* if_awaiting_else();

  int add_param(std::string name, ir::ParamKind kind, DType dtype);
  int add_shared(DType dtype, std::uint32_t size, bool ring = false, std::uint32_t swizzle = 0);
  /// An allocation placed over the bytes of allocation `base` (dsl::overlay).
  int add_overlay(DType dtype, std::uint32_t size, int base);
  void mark_written(int param) { written_.at(static_cast<std::size_t>(param)) = true; }
  void set_dispatch(ir::DispatchContract contract);
  /// Fixes the dispatch mode once program_id() has been lowered against it.
  ir::DispatchMode lock_mode();

  /// Records a misuse found where throwing is not allowed (a destructor); thrown by finish().
  void defer_error(const ir::SourceLoc& where, const std::string& message);
  [[noreturn]] void fail(const std::string& message) const;
  /// Final checks after the body returned; returns the finished kernel.
  ir::Kernel finish();

 private:
  struct Scope {
    ir::Block* block;
    std::uint32_t id;
  };
  ir::Kernel kernel_;
  ir::SourceLoc loc_;
  const char* loc_file_ = nullptr;  ///< the file name loc_.file was made from, or nullptr
  std::vector<Scope> scopes_;
  std::vector<DType> value_types_;
  std::vector<std::uint32_t> value_scope_;
  std::vector<bool> written_;
  std::uint32_t next_scope_ = 0;
  bool closed_if_pending_ = false;
  bool dispatch_declared_ = false;
  bool mode_locked_ = false;
  std::vector<std::string> deferred_;
  Tracer* previous_;
};

}  // namespace iron::dsl::detail
