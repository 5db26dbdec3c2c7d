/// The registration problems recorded by static registrars, raised by every registry read.
#include "iron/dsl/registration.hpp"

#include <fmt/format.h>

#include "iron/core/error.hpp"

namespace iron::dsl {
namespace {

std::vector<std::string>& problems() {
  static std::vector<std::string> recorded;
  return recorded;
}

}  // namespace

void check_registrations() {
  if (problems().empty()) return;
  std::string all = problems().front();
  for (std::size_t i = 1; i < problems().size(); ++i) all += "\n" + problems()[i];
  throw Error(all);
}

namespace detail {

void record_registration_problem(std::string message) { problems().push_back(std::move(message)); }

std::string registered_twice(std::string_view what, std::string_view name, const ir::SourceLoc& a,
                             const ir::SourceLoc& b) {
  const bool in_order = a.file != b.file ? a.file < b.file : a.line <= b.line;
  const ir::SourceLoc& first = in_order ? a : b;
  const ir::SourceLoc& second = in_order ? b : a;
  return fmt::format("{} '{}' is registered twice: {} and {}", what, name, format_loc(first),
                     format_loc(second));
}

}  // namespace detail
}  // namespace iron::dsl
