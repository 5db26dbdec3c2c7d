/// Symbolic control flow. `for (auto i : range(a, b, step))` traces a loop; IRON_IF(c) { … }
/// IRON_ELSE { … } traces a branch. Leaving either early with `break`, `return` or an exception
/// is a trace error naming the line, never silently dropped code. Plain C++ `for` and `if` over
/// C++ values run at trace time (a C++ loop unrolls).
#pragma once

#include <exception>

#include "iron/core/source_location.hpp"
#include "iron/dsl/expr.hpp"

namespace iron::dsl {

namespace detail {

/// One symbolic scope opened now and closed by finish(); leaving it any other way is an error.
class ScopeGuard {
 public:
  ScopeGuard() = default;
  ScopeGuard(const ScopeGuard&) = delete;
  ScopeGuard& operator=(const ScopeGuard&) = delete;
  ~ScopeGuard();
  /// Opens block `index` of the op just recorded.
  void open(std::size_t index, const char* construct);
  /// The scope ended normally.
  void finish();
  bool is_open() const { return tracer_ != nullptr; }

 private:
  Tracer* tracer_ = nullptr;
  ir::SourceLoc opened_at_;
  std::size_t depth_ = 0;
  const char* construct_ = "";
  int exceptions_ = 0;
};

ir::ValueId record_for(ir::ValueId start, ir::ValueId end, ir::ValueId step, DType type,
                       bool rolled);
void record_if(ir::ValueId cond);

}  // namespace detail

/// The integer sequence start, start+step, … below end, traced as one symbolic loop.
template <IntegerElement I>
class Range {
 public:
  Range(Expr<I> start, Expr<I> end, Expr<I> step, SourceLocation where, bool rolled = false)
      : start_(start), end_(end), step_(step), where_(where), rolled_(rolled) {}

  class Iterator {
   public:
    explicit Iterator(Range* range) : range_(range) {}
    Expr<I> operator*() const { return range_->induction_; }
    Iterator& operator++() {
      range_->guard_.finish();
      range_->done_ = true;
      return *this;
    }
    bool operator!=(const Iterator&) const { return !range_->done_; }

   private:
    Range* range_;
  };

  Iterator begin() {
    detail::Tracer::current().at(where_);
    induction_ =
        Expr<I>::wrap(detail::record_for(start_.id(), end_.id(), step_.id(), dtype_of<I>, rolled_));
    guard_.open(0, "symbolic loop");
    return Iterator(this);
  }
  Iterator end() { return Iterator(this); }

 private:
  Expr<I> start_, end_, step_, induction_;
  SourceLocation where_;
  bool rolled_;
  detail::ScopeGuard guard_;
  bool done_ = false;
};

namespace detail {

/// The Range of range() and rolled_range(): its element type is the bounds' (u32 for literals).
template <class A, class B, class C>
auto make_range(const A& start, const B& end, const C& step, SourceLocation where, bool rolled) {
  using I =
      typename element_or<A, typename element_or<B, typename element_or<C, u32>::type>::type>::type;
  static_assert(IntegerElement<I>, "Iron: range() and rolled_range() need integer bounds");
  Tracer::current().at(where);
  return Range<I>(to_expr<I>(start), to_expr<I>(end), to_expr<I>(step), where, rolled);
}

}  // namespace detail

/// A symbolic loop from `start` to `end` (exclusive) by `step`, which must be positive.
template <class A, class B, class C = int>
auto range(const A& start, const B& end, const C& step = 1,
           SourceLocation where = SourceLocation::current()) {
  return detail::make_range(start, end, step, where, /*rolled=*/false);
}

/// range() kept rolled: neither Iron nor the target's compiler unrolls it (CUDA's
/// `#pragma unroll 1`). For a loop whose body is large and runs a few times a kernel, such as an
/// epilogue's, whose copies the target's compiler would spend time on and gain nothing from.
template <class A, class B, class C = int>
auto rolled_range(const A& start, const B& end, const C& step = 1,
                  SourceLocation where = SourceLocation::current()) {
  return detail::make_range(start, end, step, where, /*rolled=*/true);
}

namespace detail {

/// Drives IRON_IF / IRON_ELSE: the body runs once, inside the branch's block.
class BranchScope {
 public:
  /// The then-block of a new If on `cond`.
  BranchScope(const Expr<boolean>& cond, SourceLocation where);
  /// The else-block of the If just closed in this block.
  explicit BranchScope(SourceLocation where);
  bool pending() const { return !entered_; }
  void enter() { entered_ = true; }
  void done() { guard_.finish(); }

 private:
  ScopeGuard guard_;
  bool entered_ = false;
};

}  // namespace detail

}  // namespace iron::dsl

/// A symbolic branch: IRON_IF(cond) { … } — the body runs at trace time once, into the branch.
/// The trailing `if (…) {} else` makes a plain C++ `else` after the body a syntax error.
#define IRON_IF(cond)                                                                          \
  for (::iron::dsl::detail::BranchScope iron_branch_scope_{(cond),                             \
                                                           ::iron::SourceLocation::current()}; \
       iron_branch_scope_.pending(); iron_branch_scope_.done())                                \
    if (iron_branch_scope_.enter(); false) {                                                   \
    } else

/// The else-branch of the IRON_IF just before it.
#define IRON_ELSE                                                                              \
  for (::iron::dsl::detail::BranchScope iron_branch_scope_{::iron::SourceLocation::current()}; \
       iron_branch_scope_.pending(); iron_branch_scope_.done())                                \
    if (iron_branch_scope_.enter(); false) {                                                   \
    } else
