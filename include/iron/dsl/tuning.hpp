/// Tuning knobs (docs/tuning.md): a kernel declares the values it accepts for each of its
/// knobs (tile width, stages, launch order, …) with IRON_TUNING next to it, and reads the value
/// in force with tuned("name") in its body and in its geometry function. A configuration names
/// a value for some knobs; the others take their first value, the kernel's default. `iron tune`
/// times the configurations on the device and a tuning file (iron/dsl/tuning_table.hpp) keeps
/// the fastest per shape, which benches and the host entry points trace the kernel under.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "iron/core/dtype.hpp"
#include "iron/core/ir.hpp"
#include "iron/core/source_location.hpp"
#include "iron/dsl/geometry.hpp"

namespace iron::dsl {

/// A value for some of a kernel's knobs, by knob name.
using TuningConfig = std::map<std::string, std::uint32_t, std::less<>>;

/// The integer and float constexprs of a launch, by name.
using LaunchConstants = std::map<std::string, double, std::less<>>;

/// A kernel's own choice of configuration for a launch that no tuning file has an entry for,
/// from the dtype and the constexprs: the path the shape calls for (a pointwise convolution on
/// a plain GEMM's tiles), where one default does not serve every shape.
using TuningRule = TuningConfig (*)(DType dtype, const LaunchConstants& constants);

/// One knob and the values the kernel accepts for it; the first is its default.
struct TuningKnob {
  std::string name;
  std::vector<std::uint32_t> values;
};

/// The knobs of one kernel.
class TuningSpace {
 public:
  /// Adds knob `name` with `values` (non-empty, no value twice; the first is the default).
  TuningSpace& knob(std::string name, std::vector<std::uint32_t> values);
  /// Sets the kernel's rule for launches the tuning file has no entry for (TuningRule).
  TuningSpace& prefer(TuningRule rule);

  const std::vector<TuningKnob>& knobs() const { return knobs_; }
  /// Every knob at its default.
  TuningConfig defaults() const;
  /// Every configuration of the space (each knob's values in turn, the defaults first).
  std::vector<TuningConfig> configs() const;
  /// `config` with every knob it leaves out at its default; Error naming `kernel` for a knob the
  /// space lacks or a value the knob does not accept.
  TuningConfig complete(std::string_view kernel, const TuningConfig& config) const;
  /// The rule's configuration for a launch (checked like a tuning file's, Error naming `kernel`
  /// when the rule names a knob or value the space lacks); the empty one without a rule.
  TuningConfig preferred(std::string_view kernel, DType dtype,
                         const LaunchConstants& constants) const;

 private:
  std::vector<TuningKnob> knobs_;
  TuningRule rule_ = nullptr;
};

/// A registered space: the kernel it belongs to, where it is declared, the function giving it.
struct TuningInfo {
  std::string name;
  ir::SourceLoc loc;
  TuningSpace (*space)() = nullptr;
};

/// Every tuning space linked into the program, sorted by kernel name.
const std::vector<TuningInfo>& registered_tuning_spaces();
/// The knobs of kernel `name`, or nullopt when it declares none.
std::optional<TuningSpace> tuning_space(std::string_view name);

/// The value of knob `name` in the configuration in force: the one kernel_ir_for or
/// geometry_for was given (completed with defaults). Error when called outside them, or for a
/// knob the kernel does not declare.
std::uint32_t tuned(std::string_view name);

/// Traces kernel `name` with T = dtype under `config` (completed with the kernel's defaults).
/// A kernel without knobs accepts only the empty configuration.
ir::Kernel kernel_ir_for(std::string_view name, DType dtype, const TuningConfig& config);
/// The geometry kernel `name` wants for `query` under `config`, as geometry_for.
std::optional<Geometry> geometry_for(std::string_view name, const GeometryQuery& query,
                                     const TuningConfig& config);

/// "bn=128,stages=3" (knobs in name order; "" for the empty configuration).
std::string format_config(const TuningConfig& config);
/// The configuration "NAME=VALUE,…" writes (format_config's text); Error saying what is wrong.
TuningConfig parse_config(std::string_view text);

namespace detail {

/// Makes `config` (completed for kernel `kernel`) the configuration in force on this thread
/// until destroyed; scopes nest.
class TuningScope {
 public:
  TuningScope(std::string_view kernel, const TuningConfig& config);
  ~TuningScope();
  TuningScope(const TuningScope&) = delete;
  TuningScope& operator=(const TuningScope&) = delete;
};

/// Registers the tuning space of kernel `name`. As with geometries, the same definition
/// arriving twice (the kernel file is in both libraries) counts once.
struct TuningRegistrar {
  TuningRegistrar(const char* name, TuningSpace (*space)(),
                  SourceLocation where = SourceLocation::current());
};

}  // namespace detail
}  // namespace iron::dsl

/// Declares the knobs of kernel NAME (an IRON_KERNEL or one IRON_KERNEL_VARIANT by its full
/// name); the body returns a TuningSpace:
///   IRON_TUNING(iron_gemm_warpgroup_nk) { return TuningSpace{}.knob("bn", {256, 128}); }
#define IRON_TUNING(NAME)                                                                     \
  static ::iron::dsl::TuningSpace NAME##_tuning();                                            \
  [[maybe_unused]] static const ::iron::dsl::detail::TuningRegistrar NAME##_tuning_registrar{ \
      #NAME, &NAME##_tuning};                                                                 \
  static ::iron::dsl::TuningSpace NAME##_tuning()
