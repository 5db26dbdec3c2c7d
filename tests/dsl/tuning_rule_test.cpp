/// A kernel's tuning rule (TuningSpace::prefer): the configuration a launch takes where no tuning
/// file has an entry, checked like a file's, overridden by an entry; the library's pointwise
/// convolutions, whose rule puts a plain 16-bit 1×1 on the warpgroup product and whose contract
/// under that knob refuses every other shape; the warpgroup products' rule, which makes a launch
/// of many tiles persistent and narrows the tiles of a launch of few, and the persistent form's
/// contract (k, and for b [k, n] n, whole 16-byte pieces); the depthwise convolutions' rows and
/// groups by dtype, stride and dilation.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <string>

#include "guard_refusal.hpp"
#include "iron/core/error.hpp"
#include "iron/dsl/tuning.hpp"
#include "iron/dsl/tuning_table.hpp"
#include "iron/iron.hpp"

namespace {
using namespace iron::dsl;
using iron::DType;

const TuningConfig kPointwise{{"pointwise", 1}};

/// ResNet's 1×1 expansion (56² × 256 → 1024), with `changed` values over it.
LaunchConstants conv2d_1x1(const LaunchConstants& changed = {}) {
  LaunchConstants c{{"batch", 2}, {"h", 56},    {"w", 56},       {"c_in", 256},     {"c_out", 1024},
                    {"kh", 1},    {"kw", 1},    {"stride_h", 1}, {"stride_w", 1},   {"pad_h", 0},
                    {"pad_w", 0}, {"dil_h", 1}, {"dil_w", 1},    {"group_count", 1}};
  for (const auto& [name, value] : changed) c[name] = value;
  return c;
}

TuningConfig chosen(const std::string& kernel, DType dtype, const LaunchConstants& c,
                    const TuningTable& table = {}) {
  return table.config_for(kernel_ir_for(kernel, dtype), c, "NVIDIA H200", "13.0");
}

TEST(TuningRule, APlain16BitPointwiseConvolutionTakesTheWarpgroupProduct) {
  for (const char* kernel : {"iron_conv2d", "iron_conv2d_fused_bias", "iron_conv2d_fused_bias_relu",
                             "iron_conv2d_fused_bias_silu"}) {
    EXPECT_EQ(chosen(kernel, DType::BF16, conv2d_1x1()), kPointwise) << kernel;
    EXPECT_EQ(chosen(kernel, DType::F16, conv2d_1x1()), kPointwise) << kernel;
  }
  const LaunchConstants conv1d{{"batch", 2},   {"length", 75},     {"c_in", 64},
                               {"c_out", 24},  {"kernel_size", 1}, {"stride", 1},
                               {"padding", 0}, {"dilation", 1},    {"group_count", 1}};
  EXPECT_EQ(chosen("iron_conv1d", DType::BF16, conv1d), kPointwise);
}

// A 16-bit launch of stride 1, one group and c_in a multiple of 64 that is not a plain 1×1: the
// image path, its box 16 × 8 pixels (8 × 16 for rows of at most 8; a sequence's one row), its tile
// as narrow as holds c_out and fills the device (96 tiles), on the deepest ring where narrowed;
// at 64 columns with tiles for two groups a multiprocessor (264), two resident groups.
TEST(TuningRule, AStrideOneConvolutionOfWholeStepsTakesTheImagePath) {
  const std::map<std::string, LaunchConstants> wide{
      {"3x3", {{"kh", 3}, {"kw", 3}, {"pad_h", 1}, {"pad_w", 1}}},
      {"1x3", {{"kw", 3}}},
      {"padded 1x1", {{"pad_w", 1}}}};
  for (const auto& [what, changed] : wide) {
    EXPECT_EQ(chosen("iron_conv2d", DType::BF16, conv2d_1x1(changed)),
              (TuningConfig{{"image", 16}}))
        << what << ": rows of 54 to 58 pixels, 56 tiles of 16 x 8 pixels by 4 of 256 channels";
  }
  const auto resnet = [](double size, double channels) {
    return conv2d_1x1({{"batch", 32},
                       {"h", size},
                       {"w", size},
                       {"c_in", channels},
                       {"c_out", channels},
                       {"kh", 3},
                       {"kw", 3},
                       {"pad_h", 1},
                       {"pad_w", 1}});
  };
  for (DType dt : {DType::BF16, DType::F16}) {
    EXPECT_EQ(chosen("iron_conv2d", dt, resnet(56, 64)),
              (TuningConfig{{"image", 16}, {"bn", 64}, {"stages", 16}, {"resident", 2}}))
        << "896 tiles of 64 channels: two groups a multiprocessor";
    EXPECT_EQ(chosen("iron_conv2d_fused_bias_relu", dt, resnet(28, 128)),
              (TuningConfig{{"image", 16}, {"bn", 128}, {"stages", 16}}));
    EXPECT_EQ(chosen("iron_conv2d", dt, resnet(7, 64)),
              (TuningConfig{{"image", 8}, {"bn", 64}, {"stages", 16}}))
        << "rows of 7 pixels: boxes of 8 x 16";
    EXPECT_EQ(chosen("iron_conv2d", dt, resnet(14, 256)),
              (TuningConfig{{"image", 16}, {"bn", 128}, {"stages", 16}}))
        << "64 tiles of 256 channels, 128 of 128";
  }
  EXPECT_EQ(chosen("iron_conv2d", DType::F32, resnet(28, 128)), TuningConfig{});
  const LaunchConstants conv1d{{"batch", 8},   {"length", 4096},   {"c_in", 512},
                               {"c_out", 512}, {"kernel_size", 3}, {"stride", 1},
                               {"padding", 1}, {"dilation", 1},    {"group_count", 1}};
  EXPECT_EQ(chosen("iron_conv1d", DType::BF16, conv1d), (TuningConfig{{"image", 128}}));
}

TEST(TuningRule, TheImageContractRefusesStridesGroupsAndPartialSteps) {
  std::map<std::string, std::int64_t> plain;
  // One tile: 2 rows of 56 pixels (a box 64 wide), 64 channels.
  const LaunchConstants one_tile = conv2d_1x1(
      {{"batch", 1}, {"h", 2}, {"c_out", 64}, {"kh", 3}, {"kw", 3}, {"pad_h", 1}, {"pad_w", 1}});
  for (const auto& [name, value] : one_tile) {
    plain[name] = static_cast<std::int64_t>(value);
  }
  const auto refusal = [&](const std::map<std::string, std::int64_t>& changed) {
    auto values = plain;
    for (const auto& [name, value] : changed) values[name] = value;
    return iron::test_support::guard_refusal("iron_conv2d", {values, {}, 384, {{"image", 64}}});
  };
  EXPECT_NE(refusal({}).find("x holds 0 elements"), std::string::npos) << refusal({});
  EXPECT_NE(refusal({{"stride_h", 2}}).find("constexpr stride_h (2) must be at most 1"),
            std::string::npos);
  EXPECT_NE(refusal({{"group_count", 2}}).find("constexpr group_count (2) must be at most 1"),
            std::string::npos);
  EXPECT_NE(refusal({{"c_in", 96}}).find("constexpr c_in (96) must be a multiple of 64"),
            std::string::npos)
      << refusal({{"c_in", 96}});
}

TEST(TuningRule, EveryOtherShapeKeepsTheTiles) {
  const std::map<std::string, LaunchConstants> others{
      {"stride 2", {{"stride_h", 2}, {"stride_w", 2}}},
      {"3x3 stride 2", {{"kh", 3}, {"kw", 3}, {"stride_h", 2}, {"stride_w", 2}}},
      {"grouped", {{"group_count", 2}}},
      {"grouped 3x3", {{"kh", 3}, {"kw", 3}, {"group_count", 2}}},
      {"3x3, c_in 96 (not whole 64-channel steps)", {{"kh", 3}, {"kw", 3}, {"c_in", 96}}},
      {"c_in 12 (rows not whole 16-byte pieces)", {{"c_in", 12}}},
      {"c_in 16 (narrower than any measured)", {{"c_in", 16}}},
      {"c_in 76 (rows not whole 16-byte pieces)", {{"c_in", 76}}}};
  for (const auto& [what, changed] : others) {
    EXPECT_EQ(chosen("iron_conv2d", DType::BF16, conv2d_1x1(changed)), TuningConfig{}) << what;
  }
  EXPECT_EQ(chosen("iron_conv2d", DType::F32, conv2d_1x1()), TuningConfig{});  // no wgmma in f32
}

TEST(TuningRule, AShallowPointwiseConvolutionTakesNarrowTiles) {
  // EfficientNet's 24 → 144: less than one 64-column step of k, tiles of 64 columns; persistent
  // once the pixels make enough tiles.
  const LaunchConstants shallow = conv2d_1x1({{"c_in", 24}, {"c_out", 144}});
  EXPECT_EQ(chosen("iron_conv2d_fused_bias_silu", DType::BF16, shallow),
            (TuningConfig{{"bn", 64}, {"pointwise", 1}}));
  EXPECT_EQ(chosen("iron_conv2d_fused_bias_silu", DType::BF16,
                   conv2d_1x1({{"batch", 32}, {"c_in", 24}, {"c_out", 144}})),
            (TuningConfig{{"bn", 64}, {"persistent", 1}, {"pointwise", 1}}));
  EXPECT_EQ(chosen("iron_conv2d", DType::F16, conv2d_1x1({{"c_in", 40}})),
            (TuningConfig{{"bn", 64}, {"pointwise", 1}}));
}

TEST(TuningRule, ATuningFileEntryWinsOverTheRule) {
  const iron::ir::Kernel conv = kernel_ir_for("iron_conv2d", DType::BF16);
  TuningTable table;
  TuningEntry tiles{"iron_conv2d", DType::BF16, shape_bucket(conv, conv2d_1x1()),
                    "NVIDIA H200", "13.0",      {{"pointwise", 0}},
                    "timed"};
  table.put(tiles);
  EXPECT_EQ(chosen("iron_conv2d", DType::BF16, conv2d_1x1(), table), TuningConfig{});
  // Another device's entry leaves the rule in force.
  EXPECT_EQ(table.config_for(conv, conv2d_1x1(), "NVIDIA H100", "13.0"), kPointwise);
}

// A rule's configuration is checked against the space like a file's.
TuningConfig bad_rule(DType, const LaunchConstants&) { return {{"tile", 3}}; }

TEST(TuningRule, ARuleNamingAKnobTheSpaceLacksIsAnError) {
  const TuningSpace space = TuningSpace{}.knob("bn", {256, 128}).prefer(&bad_rule);
  try {
    space.preferred("some_kernel", DType::BF16, {});
    FAIL() << "no error";
  } catch (const iron::Error& e) {
    EXPECT_NE(std::string(e.what()).find("kernel some_kernel has no tuning knob 'tile'"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(TuningSpace{}.knob("bn", {256}).preferred("k", DType::BF16, {}), TuningConfig{});
}

// Under the knob the group is three warpgroups and every launch must be a plain 1×1 (one tile
// of 64 pixels and 256 channels: the guard's launch is one group).
TEST(TuningRule, ThePointwiseContractRefusesEveryOtherShape) {
  std::map<std::string, std::int64_t> plain;
  const LaunchConstants one_tile = conv2d_1x1({{"batch", 1}, {"h", 8}, {"w", 8}, {"c_out", 256}});
  for (const auto& [name, value] : one_tile) plain[name] = static_cast<std::int64_t>(value);
  const auto refusal = [&](const std::map<std::string, std::int64_t>& changed,
                           std::uint32_t threads = 384) {
    auto values = plain;
    for (const auto& [name, value] : changed) values[name] = value;
    return iron::test_support::guard_refusal("iron_conv2d", {values, {}, threads, kPointwise});
  };
  // The plain 1×1 passes every rule on constexprs and threads; the empty tensors come next.
  EXPECT_NE(refusal({}).find("x holds 0 elements"), std::string::npos) << refusal({});
  EXPECT_NE(refusal({}, 128).find("384"), std::string::npos) << refusal({}, 128);
  EXPECT_NE(refusal({{"kh", 3}}).find("constexpr kh (3) must be at most 1"), std::string::npos)
      << refusal({{"kh", 3}});
  EXPECT_NE(refusal({{"stride_w", 2}}).find("constexpr stride_w (2) must be at most 1"),
            std::string::npos);
  EXPECT_NE(refusal({{"pad_h", 1}}).find("constexpr pad_h (1) must be at most 0"),
            std::string::npos);
  EXPECT_NE(refusal({{"group_count", 4}}).find("constexpr group_count (4) must be at most 1"),
            std::string::npos);
}

// Persistent groups where each takes several tiles (at least 264 of 128×256) and k is whole
// 16-byte pieces; narrower tiles on the deepest ring where 128×256 ones are too few to fill the
// device (under 96); the defaults elsewhere.
TEST(TuningRule, AProductOfManyTilesTakesThePersistentFormAndOneOfFewNarrowerTiles) {
  const TuningConfig persistent{{"persistent", 1}};
  const auto gemm = [](double m, double n, double k) {
    return LaunchConstants{{"m", m}, {"n", n}, {"k", k}, {"alpha", 1.0}};
  };
  for (DType dt : {DType::BF16, DType::F16}) {
    EXPECT_EQ(chosen("iron_gemm_warpgroup_nk", dt, gemm(4096, 4096, 4096)), persistent);
    EXPECT_EQ(chosen("iron_gemm_warpgroup_nk", dt, gemm(128, 14336, 4096)),
              (TuningConfig{{"bn", 128}, {"stages", 16}}))
        << "56 tiles of 128x256, 112 of 128x128, a ring as deep as fits";
    EXPECT_EQ(chosen("iron_gemm_warpgroup_nk", dt, gemm(128, 4096, 14336)),
              (TuningConfig{{"bm", 64}, {"bn", 64}, {"stages", 16}}))
        << "16 tiles of 128x256, 128 of 64x64";
    EXPECT_EQ(chosen("iron_gemm_warpgroup_nk", dt, gemm(1024, 4096, 4096)), TuningConfig{})
        << "128 tiles: the defaults";
    EXPECT_EQ(chosen("iron_gemm_warpgroup_nk", dt, gemm(4096, 4096, 4100)), TuningConfig{})
        << "rows of k not whole 16-byte pieces";
  }
  EXPECT_EQ(chosen("iron_gemm_warpgroup_nk", DType::F32, gemm(4096, 4096, 4096)), TuningConfig{});
  // b [k, n]: the persistent form's copies of its rows are TMA's too, so n is whole pieces.
  EXPECT_EQ(chosen("iron_gemm_warpgroup_kn", DType::BF16, gemm(4096, 4096, 4096)), persistent);
  EXPECT_EQ(chosen("iron_gemm_warpgroup_kn", DType::BF16, gemm(4096, 4100, 4096)), TuningConfig{})
      << "rows of b not whole 16-byte pieces";
  // 8-bit operands: k a multiple of 16, whatever the output's type.
  EXPECT_EQ(chosen("iron_gemm_fp8_e4m3_nk", DType::BF16, gemm(4096, 4096, 4096)), persistent);
  EXPECT_EQ(chosen("iron_gemm_fp8_e4m3_nk", DType::F32, gemm(4096, 4096, 4096)), persistent);
  EXPECT_EQ(chosen("iron_gemm_fp8_e4m3_nk", DType::BF16, gemm(4096, 4096, 4104)), TuningConfig{});
  // ResNet's 1×1 expansion at batch 32: 784 × 4 tiles.
  EXPECT_EQ(chosen("iron_conv2d", DType::BF16, conv2d_1x1({{"batch", 32}})),
            (TuningConfig{{"pointwise", 1}, {"persistent", 1}}));
}

TEST(TuningRule, ThePersistentContractRefusesRaggedKAndMoreGroupsThanTiles) {
  const auto refusal = [](std::int64_t k, std::uint32_t groups) {
    return iron::test_support::guard_refusal(
        "iron_gemm_warpgroup_nk",
        {{{"m", 128}, {"n", 512}, {"k", k}}, {}, 384, {{"persistent", 1}}, groups});
  };
  EXPECT_NE(refusal(100, 1).find("constexpr k (100) must be a multiple of 8"), std::string::npos)
      << refusal(100, 1);
  EXPECT_NE(refusal(64, 2).find("a holds 0 elements"), std::string::npos) << refusal(64, 2);
  EXPECT_NE(refusal(64, 3).find("groups.x (3) must be at most ceil_div(n, 256) * ceil_div(m, 128)"),
            std::string::npos)
      << refusal(64, 3);
}

TEST(TuningRule, ThePersistentContractOfBRowsRefusesRaggedN) {
  const std::string refusal = iron::test_support::guard_refusal(
      "iron_gemm_warpgroup_kn",
      {{{"m", 128}, {"n", 260}, {"k", 64}}, {}, 384, {{"persistent", 1}}, 1});
  EXPECT_NE(refusal.find("constexpr n (260) must be a multiple of 8"), std::string::npos)
      << refusal;
}

TEST(TuningRule, A16BitDepthwiseConvolutionTakesItsMeasuredRowsAndGroups) {
  const auto depthwise = [](double stride, double dilation) {
    return LaunchConstants{{"batch", 32},
                           {"h", 112},
                           {"w", 112},
                           {"c", 96},
                           {"stride", stride},
                           {"padding", 1},
                           {"dilation", dilation}};
  };
  for (const DType dtype : {DType::BF16, DType::F16}) {
    EXPECT_EQ(chosen("iron_conv2d_depthwise_k3", dtype, depthwise(1, 1)),
              (TuningConfig{{"groups", 4}, {"interior", 1}}));
    EXPECT_EQ(chosen("iron_conv2d_depthwise_k3", dtype, depthwise(2, 1)),
              (TuningConfig{{"vector", 2}}));
    EXPECT_EQ(chosen("iron_conv2d_depthwise_k5", dtype, depthwise(1, 1)),
              (TuningConfig{{"order", 1}, {"rows", 2}}));
    EXPECT_EQ(chosen("iron_conv2d_depthwise_k7", dtype, depthwise(1, 1)),
              (TuningConfig{{"groups", 2}, {"order", 1}, {"rows", 4}, {"vector", 2}}));
  }
  // Unmeasured strides and dilations, and f32, keep the defaults (one row, no bound).
  const TuningConfig defaults;  // the rule names nothing: the defaults
  EXPECT_EQ(chosen("iron_conv2d_depthwise_k3", DType::BF16, depthwise(1, 2)), defaults);
  EXPECT_EQ(chosen("iron_conv2d_depthwise_k3", DType::BF16, depthwise(3, 1)), defaults);
  EXPECT_EQ(chosen("iron_conv2d_depthwise_k5", DType::BF16, depthwise(2, 1)), defaults);
  EXPECT_EQ(chosen("iron_conv2d_depthwise_k3", DType::F32, depthwise(1, 1)), defaults);
}

}  // namespace
