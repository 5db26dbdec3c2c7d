/// Tuning knobs: a space's configurations and defaults, a configuration completed or refused,
/// the knob in force while a kernel is traced and its geometry planned, and the text form.
#include "iron/dsl/tuning.hpp"

#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "iron/core/error.hpp"
#include "iron/core/printer.hpp"
#include "iron/iron.hpp"

namespace {
using namespace iron::dsl;
using iron::DType;

// out[i] = inp[i] · scale for i < n, `scale` a knob; groups of `tpg` threads, another knob.
IRON_KERNEL(tuned_scale, (Tensor<f32> inp, Out<f32> out, Constexpr<u32> n)) {
  dispatch(elementwise);
  layout(inp, "[n]");
  layout(out, "[n]");
  auto i = global_id<0>();
  IRON_IF(i < n) { store(out[i], load(inp[i]) * static_cast<float>(tuned("scale"))); }
}
IRON_GEOMETRY(tuned_scale) { return Geometry::elementwise(q.constant("n"), tuned("tpg")); }
IRON_TUNING(tuned_scale) { return TuningSpace{}.knob("scale", {1, 2, 3}).knob("tpg", {128, 64}); }

// A kernel that reads a knob it does not declare.
IRON_KERNEL(tuned_undeclared, (Tensor<f32> inp, Out<f32> out)) {
  dispatch(elementwise);
  store(out[global_id<0>()], load(inp[global_id<0>()]) * static_cast<float>(tuned("tile")));
}

std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const iron::Error& e) {
    return e.what();
  }
  return "";
}

TEST(Tuning, SpaceListsEveryConfigurationDefaultsFirst) {
  const TuningSpace space = TuningSpace{}.knob("a", {1, 2}).knob("b", {7, 8, 9});
  EXPECT_EQ(space.defaults(), (TuningConfig{{"a", 1}, {"b", 7}}));
  const auto all = space.configs();
  ASSERT_EQ(all.size(), 6u);
  EXPECT_EQ(all.front(), space.defaults());
  EXPECT_EQ(all.back(), (TuningConfig{{"a", 2}, {"b", 9}}));
}

TEST(Tuning, SpaceRefusesEmptyAndRepeatedKnobs) {
  EXPECT_NE(error_of([] { TuningSpace{}.knob("a", {}); }).find("at least one value"),
            std::string::npos);
  EXPECT_EQ(error_of([] { TuningSpace{}.knob("a", {1, 2, 1}); }), "tuning knob 'a' lists 1 twice");
  EXPECT_EQ(error_of([] { TuningSpace{}.knob("a", {1}).knob("a", {2}); }),
            "tuning knob 'a' is declared twice");
}

TEST(Tuning, CompleteFillsDefaultsAndRefusesWhatTheSpaceLacks) {
  const TuningSpace space = *tuning_space("tuned_scale");
  EXPECT_EQ(space.complete("tuned_scale", {{"tpg", 64}}),
            (TuningConfig{{"scale", 1}, {"tpg", 64}}));
  EXPECT_EQ(error_of([&] {
              space.complete("tuned_scale", {{"tile", 64}});
            }),
            "kernel tuned_scale has no tuning knob 'tile' (its knobs: scale, tpg)");
  EXPECT_EQ(error_of([&] {
              space.complete("tuned_scale", {{"scale", 5}});
            }),
            "kernel tuned_scale: knob 'scale' takes 1, 2, 3, not 5");
}

TEST(Tuning, TheKnobInForceShapesTheTrace) {
  const std::string defaults = iron::ir::print_kernel(kernel_ir_for("tuned_scale", DType::F32));
  const std::string same =
      iron::ir::print_kernel(kernel_ir_for("tuned_scale", DType::F32, {{"scale", 1}}));
  const std::string tripled =
      iron::ir::print_kernel(kernel_ir_for("tuned_scale", DType::F32, {{"scale", 3}}));
  EXPECT_EQ(defaults, same);
  EXPECT_NE(defaults, tripled);
  EXPECT_NE(tripled.find("const 3 : f32"), std::string::npos) << tripled;
}

TEST(Tuning, TheKnobInForceShapesTheGeometry) {
  GeometryQuery q;
  q.constants["n"] = 1000;
  EXPECT_EQ(geometry_for("tuned_scale", q)->threads.x, 128u);
  const auto narrow = geometry_for("tuned_scale", q, {{"tpg", 64}});
  EXPECT_EQ(narrow->threads.x, 64u);
  EXPECT_EQ(narrow->groups.x, 16u);
}

TEST(Tuning, KnobsAreReadOnlyWhereTheyAreDeclared) {
  EXPECT_EQ(error_of([] { tuned("scale"); }),
            "tuned(\"scale\") is read outside the trace or the geometry of a kernel");
  EXPECT_NE(error_of([] {
              kernel_ir_for("tuned_undeclared", DType::F32);
            }).find("reads tuning knob 'tile', which it does not declare (it has no IRON_TUNING)"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              kernel_ir_for("tuned_undeclared", DType::F32, {{"tile", 1}});
            }).find("declares no tuning knobs (IRON_TUNING), so it takes no configuration"),
            std::string::npos);
}

TEST(Tuning, TheLibraryGemmTakesItsKnobs) {
  // 128-column tiles: twice the groups along n, and another kernel.
  GeometryQuery q;
  q.dtype = DType::BF16;
  q.constants = {{"m", 256}, {"n", 512}, {"k", 64}};
  EXPECT_EQ(geometry_for("iron_gemm_warpgroup_nk", q)->groups.x, 2u);
  EXPECT_EQ(geometry_for("iron_gemm_warpgroup_nk", q, {{"bn", 128}})->groups.x, 4u);
  EXPECT_NE(
      iron::ir::print_kernel(kernel_ir_for("iron_gemm_warpgroup_nk", DType::BF16)),
      iron::ir::print_kernel(kernel_ir_for("iron_gemm_warpgroup_nk", DType::BF16, {{"bn", 128}})));
}

TEST(Tuning, ConfigurationTextRoundTrips) {
  const TuningConfig c{{"stages", 3}, {"bn", 128}};
  EXPECT_EQ(format_config(c), "bn=128,stages=3");
  EXPECT_EQ(parse_config("bn=128,stages=3"), c);
  EXPECT_EQ(parse_config(""), TuningConfig{});
  for (const char* bad : {"bn", "bn=", "=3", "bn=x", "bn=-1", "bn=1,", "bn=4294967296"}) {
    EXPECT_NE(error_of([&] { parse_config(bad); }).find("NAME=VALUE"), std::string::npos) << bad;
  }
  EXPECT_EQ(error_of([] { parse_config("bn=1,bn=2"); }),
            "tuning configuration 'bn=1,bn=2' names 'bn' twice");
}

}  // namespace
