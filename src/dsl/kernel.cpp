/// The kernel registry, parameter-name extraction, dispatch declarations and kernel tracing.
#include "iron/dsl/kernel.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "iron/core/verifier.hpp"

namespace iron::dsl {
namespace {

std::vector<KernelInfo>& registry() {
  static std::vector<KernelInfo> kernels;
  return kernels;
}

ir::SizeRule rule(ir::SizeRule::Kind kind, std::int64_t n) { return {kind, n, {}, 1}; }

}  // namespace

ir::SizeRule multiple_of(std::int64_t n) { return rule(ir::SizeRule::Kind::MultipleOf, n); }
ir::SizeRule at_least(std::int64_t n) { return rule(ir::SizeRule::Kind::AtLeast, n); }
ir::SizeRule at_most(std::int64_t n) { return rule(ir::SizeRule::Kind::AtMost, n); }
ir::SizeRule exactly(std::int64_t n) { return rule(ir::SizeRule::Kind::Exactly, n); }
ir::SizeRule power_of_two() { return rule(ir::SizeRule::Kind::PowerOfTwo, 0); }

void dispatch(ir::DispatchMode mode, std::initializer_list<ir::SizeRule> rules,
              SourceLocation where) {
  auto& t = detail::Tracer::current();
  t.at(where);
  t.set_dispatch({mode, rules});
}

const std::vector<KernelInfo>& registered_kernels() { return registry(); }

const KernelInfo* find_kernel(std::string_view name) {
  for (const KernelInfo& k : registry()) {
    if (k.name == name) return &k;
  }
  return nullptr;
}

ir::Kernel kernel_ir_for(std::string_view name, DType dtype) {
  const KernelInfo* info = find_kernel(name);
  if (info == nullptr) throw Error(fmt::format("no kernel named '{}' (see `iron list`)", name));
  if (std::find(info->dtypes.begin(), info->dtypes.end(), dtype) == info->dtypes.end()) {
    throw Error(fmt::format("kernel {} has no {} form", name, dtype_name(dtype)));
  }
  return info->trace(dtype);
}

namespace detail {

void register_kernel(KernelInfo info) {
  if (find_kernel(info.name) != nullptr) {
    throw Error(fmt::format("{}: kernel {} is registered twice", format_loc(info.loc), info.name));
  }
  auto& kernels = registry();
  const auto at =
      std::lower_bound(kernels.begin(), kernels.end(), info.name,
                       [](const KernelInfo& k, const std::string& name) { return k.name < name; });
  kernels.insert(at, std::move(info));
}

std::vector<std::string> parameter_names(std::string_view stringized) {
  std::string_view s = stringized;
  if (!s.empty() && s.front() == '(') s.remove_prefix(1);
  if (!s.empty() && s.back() == ')') s.remove_suffix(1);
  std::vector<std::string> names;
  int depth = 0;
  std::size_t start = 0;
  auto take = [&](std::size_t end) {
    std::string_view decl = s.substr(start, end - start);
    while (!decl.empty() && std::isspace(static_cast<unsigned char>(decl.back()))) {
      decl.remove_suffix(1);
    }
    std::size_t begin = decl.size();
    while (begin > 0 &&
           (std::isalnum(static_cast<unsigned char>(decl[begin - 1])) || decl[begin - 1] == '_')) {
      --begin;
    }
    if (begin < decl.size()) names.emplace_back(decl.substr(begin));
  };
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '<' || c == '(') ++depth;
    if (c == '>' || c == ')') --depth;
    if (c == ',' && depth == 0) {
      take(i);
      start = i + 1;
    }
  }
  take(s.size());
  return names;
}

ir::Kernel trace_kernel(const std::string& name, DType dtype, const ir::SourceLoc& loc,
                        const std::function<void()>& body) {
  Tracer tracer(name, dtype, loc);
  try {
    body();
  } catch (const TraceError&) {
    throw;
  } catch (const std::exception& e) {
    throw TraceError(fmt::format("kernel {}: {}: an exception left the traced body: {}", name,
                                 format_loc(tracer.loc()), e.what()));
  }
  ir::Kernel kernel = tracer.finish();
  const auto problems = ir::verify(kernel);
  if (!problems.empty()) {
    std::string all;
    for (const auto& p : problems) all += "\n  " + p;
    throw TraceError(fmt::format("kernel {} traced into invalid IR:{}", name, all));
  }
  return kernel;
}

}  // namespace detail
}  // namespace iron::dsl
