/// Names of op kinds, builtins and contract terms (all driven by the lists in ir.hpp).
#include "iron/core/ir.hpp"

#include <algorithm>
#include <array>

namespace iron::ir {
namespace {

// Each table lists its entries in enum order.
constexpr std::array<std::string_view, 8> kBuiltinNames = {
    "thread_id", "group_id", "group_size", "grid_groups",
    "global_id", "lane",     "simdgroup",  "simdgroup_count"};
constexpr std::array<std::string_view, 4> kTargetFeatureNames = {
    "warpgroup_products", "paired_accumulator_columns", "tensor_maps", "large_shared_memory"};
constexpr std::array<std::string_view, 4> kParamKindNames = {"in", "out", "constexpr", "inout"};
constexpr std::array<std::string_view, 3> kDispatchModeNames = {"elementwise", "reduction",
                                                                "tiled"};
constexpr std::array<std::string_view, 5> kSizeRuleNames = {"multiple_of", "at_least", "at_most",
                                                            "exactly", "power_of_two"};
constexpr std::array<std::string_view, 3> kRelationNames = {"==", "<=", ">="};

template <class E, std::size_t N>
std::string_view name_of(const std::array<std::string_view, N>& names, E e) {
  return names.at(static_cast<std::size_t>(e));
}

template <class E, std::size_t N>
bool find_name(const std::array<std::string_view, N>& names, std::string_view name, E& out) {
  for (std::size_t i = 0; i < N; ++i) {
    if (names[i] == name) {
      out = static_cast<E>(i);
      return true;
    }
  }
  return false;
}

}  // namespace

std::string_view op_name(OpKind k) { return op_info(k).name; }

OpClass op_class(OpKind k) { return op_info(k).op_class; }

bool parse_op_name(std::string_view name, OpKind& out) {
  for (std::size_t i = 0; i < kOpTable.size(); ++i) {
    if (kOpTable[i].name == name) {
      out = static_cast<OpKind>(i);
      return true;
    }
  }
  return false;
}

std::string_view builtin_name(Builtin b) { return name_of(kBuiltinNames, b); }

bool parse_builtin_name(std::string_view name, Builtin& out) {
  return find_name(kBuiltinNames, name, out);
}

std::string_view target_feature_name(TargetFeature f) { return name_of(kTargetFeatureNames, f); }

bool parse_target_feature_name(std::string_view name, TargetFeature& out) {
  return find_name(kTargetFeatureNames, name, out);
}

std::string_view param_kind_name(ParamKind k) { return name_of(kParamKindNames, k); }

bool parse_param_kind_name(std::string_view name, ParamKind& out) {
  return find_name(kParamKindNames, name, out);
}

std::string_view dispatch_mode_name(DispatchMode m) { return name_of(kDispatchModeNames, m); }

bool parse_dispatch_mode_name(std::string_view name, DispatchMode& out) {
  return find_name(kDispatchModeNames, name, out);
}

std::string_view size_rule_name(SizeRule::Kind k) { return name_of(kSizeRuleNames, k); }

bool parse_size_rule_name(std::string_view name, SizeRule::Kind& out) {
  return find_name(kSizeRuleNames, name, out);
}

std::string_view relation_name(GridRule::Relation r) { return name_of(kRelationNames, r); }

bool parse_relation_name(std::string_view name, GridRule::Relation& out) {
  return find_name(kRelationNames, name, out);
}

std::int64_t DispatchContract::group_size_cap() const {
  std::int64_t cap = 1024;
  for (const SizeRule& r : group_size_rules) {
    const bool caps = r.kind == SizeRule::Kind::Exactly || r.kind == SizeRule::Kind::AtMost;
    if (caps && r.constexpr_name.empty() && r.value > 0) cap = std::min(cap, r.value);
  }
  return cap;
}

const TensorLayout* DispatchContract::layout_of(std::string_view param) const {
  for (const TensorLayout& l : layouts) {
    if (l.param == param) return &l;
  }
  return nullptr;
}

int Kernel::find_param(std::string_view param_name) const {
  for (std::size_t i = 0; i < params.size(); ++i) {
    if (params[i].name == param_name) return static_cast<int>(i);
  }
  return -1;
}

std::size_t count_ops(const Kernel& k) {
  std::size_t n = 0;
  walk(k.body, [&](const Op&) { ++n; });
  return n;
}

}  // namespace iron::ir
