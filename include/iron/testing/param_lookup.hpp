/// Finding a kernel parameter by name and kind for the test and bench builders, with an error
/// that lists the signature; converting a constexpr value to its parameter's dtype.
#pragma once

#include <string>
#include <string_view>
#include <utility>

#include "iron/core/error.hpp"
#include "iron/core/ir.hpp"
#include "iron/runtime/launch.hpp"

namespace iron::testing {

/// The parameter `name` of `kernel` if it has that kind (Output also finds an InOut tensor);
/// Error listing the signature otherwise.
const ir::Param& find_param(const ir::Kernel& kernel, const std::string& name, ir::ParamKind kind);

/// `value` as the constexpr parameter's dtype (floats rounded; integers must fit exactly).
runtime::Scalar constexpr_value(const ir::Kernel& kernel, const ir::Param& param, double value);

/// `map[name] = value`, refusing a second value for the same name.
template <class Map, class V>
void set_once(Map& map, const std::string& kernel, const std::string& name, V&& value,
              std::string_view what) {
  if (!map.emplace(name, std::forward<V>(value)).second) {
    throw Error(std::string("kernel ") + kernel + ": " + std::string(what) + " '" + name +
                "' is given twice");
  }
}

}  // namespace iron::testing
