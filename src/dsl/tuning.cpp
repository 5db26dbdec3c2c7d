/// Tuning spaces: their registry, the configuration in force while a kernel is traced or its
/// geometry planned, and the text form of a configuration.
#include "iron/dsl/tuning.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>

#include "iron/core/error.hpp"
#include "iron/dsl/kernel.hpp"
#include "iron/dsl/registration.hpp"
#include "iron/dsl/tracer.hpp"
#include "tuning_in_force.hpp"

namespace iron::dsl {
namespace {

std::vector<TuningInfo>& registry() {
  static std::vector<TuningInfo> spaces;
  return spaces;
}

/// The configurations in force on this thread, innermost last.
struct Active {
  std::string kernel;
  TuningConfig config;
  bool has_space = false;
};
thread_local std::vector<Active> active;

/// The configuration kernel `name` is traced or planned under: `config` completed with its
/// defaults; Error for a configuration it cannot take.
TuningConfig completed(std::string_view name, const TuningConfig& config) {
  if (const auto space = tuning_space(name)) return space->complete(name, config);
  if (!config.empty()) {
    throw Error(
        fmt::format("kernel {} declares no tuning knobs (IRON_TUNING), so it takes no "
                    "configuration, not '{}'",
                    name, format_config(config)));
  }
  return {};
}

}  // namespace

TuningSpace& TuningSpace::knob(std::string name, std::vector<std::uint32_t> values) {
  if (name.empty() || values.empty()) {
    throw Error(fmt::format("tuning knob '{}' needs a name and at least one value", name));
  }
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (std::find(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(i), values[i]) !=
        values.begin() + static_cast<std::ptrdiff_t>(i)) {
      throw Error(fmt::format("tuning knob '{}' lists {} twice", name, values[i]));
    }
  }
  for (const TuningKnob& k : knobs_) {
    if (k.name == name) throw Error(fmt::format("tuning knob '{}' is declared twice", name));
  }
  knobs_.push_back({std::move(name), std::move(values)});
  return *this;
}

TuningSpace& TuningSpace::prefer(TuningRule rule) {
  rule_ = rule;
  return *this;
}

TuningConfig TuningSpace::preferred(std::string_view kernel, DType dtype,
                                    const LaunchConstants& constants) const {
  if (rule_ == nullptr) return {};
  TuningConfig config = rule_(dtype, constants);
  complete(kernel, config);  // a rule's configuration is checked like a file's
  return config;
}

TuningConfig TuningSpace::defaults() const {
  TuningConfig config;
  for (const TuningKnob& k : knobs_) config[k.name] = k.values.front();
  return config;
}

std::vector<TuningConfig> TuningSpace::configs() const {
  std::vector<TuningConfig> all{TuningConfig{}};
  for (const TuningKnob& k : knobs_) {
    std::vector<TuningConfig> next;
    next.reserve(all.size() * k.values.size());
    for (const TuningConfig& c : all) {
      for (const std::uint32_t v : k.values) {
        TuningConfig with = c;
        with[k.name] = v;
        next.push_back(std::move(with));
      }
    }
    all = std::move(next);
  }
  return all;
}

TuningConfig TuningSpace::complete(std::string_view kernel, const TuningConfig& config) const {
  TuningConfig full = defaults();
  for (const auto& [name, value] : config) {
    const std::string_view wanted = name;
    const auto knob = std::find_if(knobs_.begin(), knobs_.end(),
                                   [wanted](const TuningKnob& k) { return k.name == wanted; });
    if (knob == knobs_.end()) {
      std::string names;
      for (const TuningKnob& k : knobs_) names += (names.empty() ? "" : ", ") + k.name;
      throw Error(
          fmt::format("kernel {} has no tuning knob '{}' (its knobs: {})", kernel, name, names));
    }
    if (std::find(knob->values.begin(), knob->values.end(), value) == knob->values.end()) {
      throw Error(fmt::format("kernel {}: knob '{}' takes {}, not {}", kernel, name,
                              fmt::join(knob->values, ", "), value));
    }
    full[name] = value;
  }
  return full;
}

const std::vector<TuningInfo>& registered_tuning_spaces() {
  check_registrations();
  return registry();
}

std::optional<TuningSpace> tuning_space(std::string_view name) {
  const auto& all = registered_tuning_spaces();
  const auto at =
      std::lower_bound(all.begin(), all.end(), name,
                       [](const TuningInfo& t, std::string_view n) { return t.name < n; });
  if (at == all.end() || at->name != name) return std::nullopt;
  return at->space();
}

std::uint32_t tuned(std::string_view name) {
  if (active.empty()) {
    throw Error(
        fmt::format("tuned(\"{}\") is read outside the trace or the geometry of a kernel", name));
  }
  const Active& in_force = active.back();
  const auto found = in_force.config.find(name);
  if (found == in_force.config.end()) {
    throw Error(fmt::format("kernel {} reads tuning knob '{}', which {}", in_force.kernel, name,
                            in_force.has_space ? "its IRON_TUNING does not declare"
                                               : "it does not declare (it has no IRON_TUNING)"));
  }
  return found->second;
}

ir::Kernel kernel_ir_for(std::string_view name, DType dtype, const TuningConfig& config) {
  const KernelInfo* info = find_kernel(name);
  if (info == nullptr) throw Error(fmt::format("no kernel named '{}' (see `iron list`)", name));
  if (std::find(info->dtypes.begin(), info->dtypes.end(), dtype) == info->dtypes.end()) {
    throw Error(fmt::format("kernel {} has no {} form", name, dtype_name(dtype)));
  }
  const detail::TuningScope scope(name, completed(name, config));
  return info->trace(dtype);
}

std::optional<Geometry> geometry_for(std::string_view name, const GeometryQuery& query,
                                     const TuningConfig& config) {
  const GeometryInfo* info = find_geometry(name);
  if (info == nullptr) return std::nullopt;
  const detail::TuningScope scope(name, completed(name, config));
  try {
    return info->function(query);
  } catch (const Error& e) {
    throw Error(fmt::format("{} (geometry of {} at {})", e.what(), name, format_loc(info->loc)));
  }
}

std::string format_config(const TuningConfig& config) {
  std::string text;
  for (const auto& [name, value] : config) {
    text += fmt::format("{}{}={}", text.empty() ? "" : ",", name, value);
  }
  return text;
}

TuningConfig parse_config(std::string_view text) {
  TuningConfig config;
  if (text.empty()) return config;
  const auto malformed = [&] {
    return Error(fmt::format(
        "a tuning configuration is NAME=VALUE pairs separated by commas (values unsigned 32-bit "
        "numbers), not '{}'",
        text));
  };
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string_view item = text.substr(start, comma - start);
    const std::size_t eq = item.find('=');
    if (eq == 0 || eq == std::string_view::npos || eq + 1 == item.size()) throw malformed();
    std::uint32_t value = 0;
    const auto [end, ec] = std::from_chars(item.data() + eq + 1, item.data() + item.size(), value);
    if (ec != std::errc() || end != item.data() + item.size()) throw malformed();
    if (!config.emplace(std::string(item.substr(0, eq)), value).second) {
      throw Error(
          fmt::format("tuning configuration '{}' names '{}' twice", text, item.substr(0, eq)));
    }
    if (comma == text.size()) return config;
    start = comma + 1;
  }
}

namespace detail {

TuningScope::TuningScope(std::string_view kernel, const TuningConfig& config) {
  active.push_back({std::string(kernel), config, !config.empty()});
}

TuningScope::~TuningScope() { active.pop_back(); }

DefaultTuning::DefaultTuning(std::string_view kernel) {
  if (!active.empty() && active.back().kernel == kernel) return;
  const TuningConfig defaults = completed(kernel, {});
  active.push_back({std::string(kernel), defaults, !defaults.empty()});
  pushed_ = true;
}

DefaultTuning::~DefaultTuning() {
  if (pushed_) active.pop_back();
}

TuningRegistrar::TuningRegistrar(const char* name, TuningSpace (*space)(), SourceLocation where) {
  TuningInfo info{name, to_loc(where), space};
  register_once(registry(), std::move(info), "tuning space");
}

}  // namespace detail
}  // namespace iron::dsl
