/// Which specializations a launch can bind, and their values from its constexpr arguments.
#include "iron/core/specialization.hpp"

#include <fmt/format.h>

#include <unordered_map>

#include "iron/core/error.hpp"

namespace iron::ir {
namespace {

/// Every op of the kernel by the value it defines.
std::unordered_map<ValueId, const Op*> definitions(const Kernel& kernel) {
  std::unordered_map<ValueId, const Op*> defs;
  walk(kernel.body, [&](const Op& op) {
    if (op.result != kNoValue) defs[op.result] = &op;
  });
  return defs;
}

/// Whether `v` is computed from constants and constexpr parameters by exact pure ops; `known`
/// remembers the answers.
bool launch_constant(ValueId v, const std::unordered_map<ValueId, const Op*>& defs,
                     std::unordered_map<ValueId, bool>& known) {
  if (const auto it = known.find(v); it != known.end()) return it->second;
  const auto def = defs.find(v);
  bool constant = false;
  if (def != defs.end()) {
    const Op& op = *def->second;
    if (op.kind == OpKind::Const || op.kind == OpKind::ConstexprRef) {
      constant = true;
    } else if (is_evaluable(op.kind) && !op_info(op.kind).has(kApproximate)) {
      constant = true;
      for (const ValueId a : op.args) constant = constant && launch_constant(a, defs, known);
    }
  }
  known[v] = constant;
  return constant;
}

}  // namespace

LaunchConstants::LaunchConstants(const Kernel& kernel) : defs_(definitions(kernel)) {}

bool LaunchConstants::contains(ValueId v) const { return launch_constant(v, defs_, known_); }

std::vector<ValueId> bindable_specializations(const Kernel& kernel) {
  const std::unordered_map<ValueId, const Op*> defs = definitions(kernel);
  std::unordered_map<ValueId, bool> known;
  std::vector<ValueId> bindable;
  walk(kernel.body, [&](const Op& op) {
    if (op.kind != OpKind::Specialize || op.args.size() != 1 ||
        bindable.size() == kMaxSpecializations) {
      return;
    }
    if (launch_constant(op.args[0], defs, known)) bindable.push_back(op.result);
  });
  return bindable;
}

SpecializationPlan::SpecializationPlan(const Kernel& kernel) {
  const std::unordered_map<ValueId, const Op*> defs = definitions(kernel);
  std::unordered_map<ValueId, std::uint32_t> step_of;
  // Appends the steps that compute v (a launch constant) after those of its operands.
  const auto plan = [&](const auto& self, ValueId v) -> std::uint32_t {
    if (const auto it = step_of.find(v); it != step_of.end()) return it->second;
    const Op& op = *defs.at(v);
    Step step{op.kind, op.type, {}, {}, op.param};
    for (const ValueId a : op.args) step.args.push_back(self(self, a));
    if (op.kind == OpKind::Const) step.constant = constant_value(op.type, op.fvalue, op.ivalue);
    steps_.push_back(std::move(step));
    return step_of[v] = static_cast<std::uint32_t>(steps_.size() - 1);
  };
  for (const ValueId s : bindable_specializations(kernel)) {
    results_.push_back(plan(plan, defs.at(s)->args[0]));
  }
}

std::optional<std::vector<bool>> SpecializationPlan::values(
    std::span<const ScalarValue> params) const {
  std::vector<ScalarValue> at(steps_.size());
  std::vector<ScalarValue> operands;
  for (std::size_t i = 0; i < steps_.size(); ++i) {
    const Step& s = steps_[i];
    if (s.kind == OpKind::Const) {
      at[i] = s.constant;
      continue;
    }
    if (s.kind == OpKind::ConstexprRef) {
      // A launch that gives no value of the parameter's type binds nothing; the guard says why.
      if (s.param < 0 || static_cast<std::size_t>(s.param) >= params.size() ||
          params[static_cast<std::size_t>(s.param)].type != s.type) {
        return std::nullopt;
      }
      at[i] = params[static_cast<std::size_t>(s.param)];
      continue;
    }
    operands.clear();
    for (const std::uint32_t a : s.args) operands.push_back(at[a]);
    const Evaluation e = evaluate(s.kind, s.type, operands);
    if (e.outcome != Outcome::Defined) return std::nullopt;
    at[i] = e.value;
  }
  std::vector<bool> values;
  values.reserve(results_.size());
  for (const std::uint32_t r : results_) values.push_back(at[r].bits != 0);
  return values;
}

std::vector<bool> usual_specialization(const Kernel& kernel) {
  std::vector<bool> usual(bindable_specializations(kernel).size(), true);
  return usual;
}

std::vector<bool> specialization_for(const Kernel& kernel,
                                     const std::map<std::string, double, std::less<>>& constants) {
  std::vector<ScalarValue> params(kernel.params.size());
  for (std::size_t i = 0; i < kernel.params.size(); ++i) {
    const Param& p = kernel.params[i];
    if (p.kind != ParamKind::Constexpr) continue;
    const auto it = constants.find(p.name);
    if (it == constants.end()) {
      throw Error(fmt::format("{} needs constexpr '{}', which is not given", kernel.name, p.name));
    }
    params[i] = constant_value(p.dtype, it->second, static_cast<std::int64_t>(it->second));
  }
  return SpecializationPlan(kernel).values(params).value_or(std::vector<bool>{});
}

std::uint64_t specialization_bits(const std::vector<bool>& values) {
  std::uint64_t bits = 0;
  for (std::size_t i = 0; i < values.size() && i < 64; ++i) {
    if (values[i]) bits |= std::uint64_t{1} << i;
  }
  return bits;
}

}  // namespace iron::ir
