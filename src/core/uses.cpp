/// Definitions and users of every value of a kernel.
#include "iron/core/uses.hpp"

namespace iron::ir {

std::unordered_map<ValueId, const Op*> definitions(const Kernel& kernel) {
  std::unordered_map<ValueId, const Op*> defs;
  walk(kernel.body, [&](const Op& op) {
    if (op.result != kNoValue) defs[op.result] = &op;
  });
  return defs;
}

std::unordered_map<ValueId, std::vector<const Op*>> users(const Kernel& kernel) {
  std::unordered_map<ValueId, std::vector<const Op*>> uses;
  walk(kernel.body, [&](const Op& op) {
    for (ValueId a : op.args) uses[a].push_back(&op);
  });
  return uses;
}

}  // namespace iron::ir
