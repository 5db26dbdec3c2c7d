/// lower_warpgroup_products: a wg.mma the target cannot run as one instruction becomes each
/// simdgroup's fragment loads and products (and the warpgroup's ordering ops go); on sm_90a a
/// product of 128-byte swizzled rows stays, and one of other rows is lowered beside it.
#include "iron/codegen/passes/lower_warpgroup_products.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "iron/core/error.hpp"
#include "pass_test_harness.hpp"

namespace iron::pass_test {
namespace {

using codegen::lower_warpgroup_products;
using codegen::MmaStrategy;
using codegen::TargetProfile;

// One warpgroup stores a tile into each of two swizzled allocations and multiplies them.
constexpr std::string_view kProduct = R"(kernel wg dtype=bf16 mode=tiled
  param in a: bf16
  param out out: f32
  shared ta: bf16[4096] swizzle 64
  shared tb: bf16[2048] swizzle 64
  rule exactly 128
  values 12
{
  %0 = const 0 : f32
  %1 = frag %0, acc, 16, 32 : f32
  %2 = const 0 : u32
  %3 = const 64 : u32
  %4 = builtin thread_id.x : u32
  %5 = load a[%4] : bf16
  shared.store @ta[%4], %5 : bf16
  shared.store @tb[%4], %5 : bf16
  fence.proxy.async
  barrier
  wg.mma %1, @ta[%2], %3, @tb[%2], %3, col, 32 : f32
  wg.commit
  wg.wait %1, 0
  %6 = frag.get %1, 0 : f32
  store out[%4], %6 : f32
}
)";

TEST(PassLowerWarpgroupProducts, FragmentProductsWhereTheTargetHasNoWgmma) {
  EXPECT_EQ(run_pass(lower_warpgroup_products, kProduct, TargetProfile::cuda(90)),
            canonical(R"(kernel wg dtype=bf16 mode=tiled
  param in a: bf16
  param out out: f32
  shared ta: bf16[4096] swizzle 64
  shared tb: bf16[2048] swizzle 64
  rule exactly 128
  values 39
{
  %0 = const 0 : f32
  %1 = frag %0, acc, 16, 32 : f32
  %2 = const 0 : u32
  %3 = const 64 : u32
  %4 = builtin thread_id.x : u32
  %5 = load a[%4] : bf16
  shared.store @ta[%4], %5 : bf16
  shared.store @tb[%4], %5 : bf16
  barrier
  %12 = builtin simdgroup : u32
  %13 = const 4 : u32
  %14 = rem %12, %13 : u32
  %15 = const 16 : u32
  %16 = mul %14, %15 : u32
  %17 = cast %3 : u32
  %18 = mul %16, %17 : u32
  %19 = cast %2 : u32
  %20 = add %19, %18 : u32
  %21 = const 0 : u32
  %22 = add %20, %21 : u32
  %23 = const 0 : u32
  %24 = cast %2 : u32
  %25 = add %24, %23 : u32
  %26 = const 0 : bf16
  %27 = frag %26, a, 16, 16 : bf16
  frag.load @ta[%22], %27, %3, row : bf16
  %28 = const 0 : bf16
  %29 = frag %28, b, 16, 32 : bf16
  frag.load @tb[%25], %29, %3, col : bf16
  frag.mma %1, %27, %29 : f32
  %30 = const 16 : u32
  %31 = add %20, %30 : u32
  %32 = const 16 : u32
  %33 = cast %2 : u32
  %34 = add %33, %32 : u32
  %35 = const 0 : bf16
  %36 = frag %35, a, 16, 16 : bf16
  frag.load @ta[%31], %36, %3, row : bf16
  %37 = const 0 : bf16
  %38 = frag %37, b, 16, 32 : bf16
  frag.load @tb[%34], %38, %3, col : bf16
  frag.mma %1, %36, %38 : f32
  %6 = frag.get %1, 0 : f32
  store out[%4], %6 : f32
}
)"));
}

TEST(PassLowerWarpgroupProducts, KeptOnHopperForSwizzledRows) {
  EXPECT_EQ(
      run_pass(lower_warpgroup_products, kProduct, TargetProfile::cuda(90, MmaStrategy::Wgmma)),
      canonical(kProduct));
}

// kProduct on 8-bit floats: 128-element (128-byte) swizzled rows, K = 64.
std::string eight_bit_product() {
  std::string text(kProduct);
  for (const auto& [from, to] :
       std::vector<std::pair<std::string, std::string>>{{"bf16", "f8e4m3"},
                                                        {"swizzle 64", "swizzle 128"},
                                                        {"%3 = const 64", "%3 = const 128"},
                                                        {"col, 32", "col, 64"}}) {
    for (std::size_t at = text.find(from); at != std::string::npos;
         at = text.find(from, at + to.size())) {
      text.replace(at, from.size(), to);
    }
  }
  return text;
}

TEST(PassLowerWarpgroupProducts, EightBitProductsStayOnHopper) {
  const std::string text = eight_bit_product();
  EXPECT_EQ(run_pass(lower_warpgroup_products, text, TargetProfile::cuda(90, MmaStrategy::Wgmma)),
            canonical(text));
}

TEST(PassLowerWarpgroupProducts, EightBitProductsElsewhereAreAnErrorNamingTheTarget) {
  const std::string text = eight_bit_product();
  try {
    run_pass(lower_warpgroup_products, text, TargetProfile::cuda(90, MmaStrategy::MmaSync));
    FAIL() << "an 8-bit product was lowered to fragments";
  } catch (const iron::Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("f8e4m3 operands multiply only as sm_90a's wgmma"), std::string::npos)
        << message;
    EXPECT_NE(message.find("sm_90"), std::string::npos) << message;
  }
}

TEST(PassLowerWarpgroupProducts, TheVerifierHoldsEightBitProductsToTheInstructionsShapes) {
  const auto problems_with = [](const std::string& from, const std::string& to) {
    std::string text = eight_bit_product();
    text.replace(text.find(from), from.size(), to);
    return problems_of(ir::parse_kernel(text));
  };
  EXPECT_NE(problems_with("col, 64", "col, 16").find("multiple of 32 from 32 to 128"),
            std::string::npos);
  EXPECT_NE(problems_with("col, 64", "col, 160").find("multiple of 32 from 32 to 128"),
            std::string::npos);
  EXPECT_NE(problems_with("col, 64", "row %2, 64").find("column-major ([n, k]) only"),
            std::string::npos);
}

TEST(PassLowerWarpgroupProducts, LoweredOnHopperWhenAnOperandIsNotInSwizzledRows) {
  std::string text(kProduct);
  text.replace(text.find("bf16[2048] swizzle 64"), 21, "bf16[2048]");
  const std::string lowered =
      run_pass(lower_warpgroup_products, text, TargetProfile::cuda(90, MmaStrategy::Wgmma));
  EXPECT_EQ(lowered.find("wg."), std::string::npos) << lowered;
  EXPECT_EQ(lowered.find("fence.proxy.async"), std::string::npos) << lowered;
  EXPECT_NE(lowered.find("frag.mma"), std::string::npos) << lowered;
}

TEST(PassLowerWarpgroupProducts, OrderingOpsStayWhileAProductRunsAsWgmma) {
  std::string text(kProduct);
  // A row-major B of rows 128 elements apart: not one swizzled row, so never an MN-major wgmma.
  const std::string second =
      "  %7 = const 128 : u32\n  wg.mma %1, @tb[%2], %3, @tb[%2], %7, row %2, 16 : f32\n";
  text.insert(text.find("  wg.commit"), second);
  const std::string lowered =
      run_pass(lower_warpgroup_products, text, TargetProfile::cuda(90, MmaStrategy::Wgmma));
  EXPECT_NE(lowered.find("wg.mma %1, @ta[%2], %3, @tb[%2], %3, col, 32"), std::string::npos)
      << lowered;
  EXPECT_EQ(lowered.find("row %2, 16"), std::string::npos)
      << "the row-major B product is lowered" << lowered;
  EXPECT_NE(lowered.find("wg.commit"), std::string::npos) << lowered;
  EXPECT_NE(lowered.find("wg.wait %1, 0"), std::string::npos) << lowered;
  EXPECT_NE(lowered.find("fence.proxy.async"), std::string::npos) << lowered;
}

// The register form: each simdgroup's A fragment times a row-major B in swizzled rows.
constexpr std::string_view kRegisterForm = R"(kernel wgr dtype=bf16 mode=tiled
  param in a: bf16
  param out out: f32
  shared tb: bf16[2048] swizzle 64
  rule exactly 128
  values 12
{
  %0 = const 0 : f32
  %1 = frag %0, acc, 16, 64 : f32
  %2 = const 0 : u32
  %3 = const 64 : u32
  %4 = builtin thread_id.x : u32
  %5 = load a[%4] : bf16
  shared.store @tb[%4], %5 : bf16
  %6 = const 0 : bf16
  %7 = frag %6, a, 16, 32 : bf16
  fence.proxy.async
  barrier
  wg.mma %1, %7, @tb[%2], %3, row %2, 32 : f32
  wg.commit
  wg.wait %1, 0
  %8 = frag.get %1, 0 : f32
  store out[%4], %8 : f32
}
)";

TEST(PassLowerWarpgroupProducts, TheRegisterFormStaysOnHopperForARowMajorBOfOneSwizzledRow) {
  EXPECT_EQ(run_pass(lower_warpgroup_products, kRegisterForm,
                     TargetProfile::cuda(90, MmaStrategy::Wgmma)),
            canonical(kRegisterForm));
}

TEST(PassLowerWarpgroupProducts, TheRegisterFormBecomesFragmentProductsOfItsColumns) {
  EXPECT_EQ(run_pass(lower_warpgroup_products, kRegisterForm, TargetProfile::cuda(90)),
            canonical(R"(kernel wgr dtype=bf16 mode=tiled
  param in a: bf16
  param out out: f32
  shared tb: bf16[2048] swizzle 64
  rule exactly 128
  values 46
{
  %0 = const 0 : f32
  %1 = frag %0, acc, 16, 64 : f32
  %2 = const 0 : u32
  %3 = const 64 : u32
  %4 = builtin thread_id.x : u32
  %5 = load a[%4] : bf16
  shared.store @tb[%4], %5 : bf16
  %6 = const 0 : bf16
  %7 = frag %6, a, 16, 32 : bf16
  barrier
  %12 = const 0 : u32
  %13 = cast %3 : u32
  %14 = mul %12, %13 : u32
  %15 = cast %2 : u32
  %16 = add %15, %14 : u32
  %17 = const 0 : bf16
  %18 = frag %17, a, 16, 16 : bf16
  %19 = frag.get %7, 0 : bf16
  frag.set %18, %19, 0 : bf16
  %20 = frag.get %7, 1 : bf16
  frag.set %18, %20, 1 : bf16
  %21 = frag.get %7, 2 : bf16
  frag.set %18, %21, 2 : bf16
  %22 = frag.get %7, 3 : bf16
  frag.set %18, %22, 3 : bf16
  %23 = frag.get %7, 4 : bf16
  frag.set %18, %23, 4 : bf16
  %24 = frag.get %7, 5 : bf16
  frag.set %18, %24, 5 : bf16
  %25 = frag.get %7, 6 : bf16
  frag.set %18, %25, 6 : bf16
  %26 = frag.get %7, 7 : bf16
  frag.set %18, %26, 7 : bf16
  %27 = const 0 : bf16
  %28 = frag %27, b, 16, 64 : bf16
  frag.load @tb[%16], %28, %3, row : bf16
  frag.mma %1, %18, %28 : f32
  %29 = const 16 : u32
  %30 = cast %3 : u32
  %31 = mul %29, %30 : u32
  %32 = cast %2 : u32
  %33 = add %32, %31 : u32
  %34 = const 0 : bf16
  %35 = frag %34, a, 16, 16 : bf16
  %36 = frag.get %7, 8 : bf16
  frag.set %35, %36, 0 : bf16
  %37 = frag.get %7, 9 : bf16
  frag.set %35, %37, 1 : bf16
  %38 = frag.get %7, 10 : bf16
  frag.set %35, %38, 2 : bf16
  %39 = frag.get %7, 11 : bf16
  frag.set %35, %39, 3 : bf16
  %40 = frag.get %7, 12 : bf16
  frag.set %35, %40, 4 : bf16
  %41 = frag.get %7, 13 : bf16
  frag.set %35, %41, 5 : bf16
  %42 = frag.get %7, 14 : bf16
  frag.set %35, %42, 6 : bf16
  %43 = frag.get %7, 15 : bf16
  frag.set %35, %43, 7 : bf16
  %44 = const 0 : bf16
  %45 = frag %44, b, 16, 64 : bf16
  frag.load @tb[%33], %45, %3, row : bf16
  frag.mma %1, %35, %45 : f32
  %8 = frag.get %1, 0 : f32
  store out[%4], %8 : f32
}
)"));
}

TEST(PassLowerWarpgroupProducts, TheRegisterFormMovesSlotsUnderMetalsLaneMap) {
  // 8×8 tiles in row order, two slots a lane each: columns 0 … 15 of the 16×32 A are its tiles
  // 0, 1, 4 and 5, columns 16 … 31 its tiles 2, 3, 6 and 7.
  const std::string lowered =
      run_pass(lower_warpgroup_products, kRegisterForm, TargetProfile::metal(31));
  std::vector<int> slots;
  for (std::size_t at = lowered.find("frag.get %7, "); at != std::string::npos;
       at = lowered.find("frag.get %7, ", at + 1)) {
    slots.push_back(std::stoi(lowered.substr(at + 13)));
  }
  EXPECT_EQ(slots, (std::vector<int>{0, 1, 2, 3, 8, 9, 10, 11, 4, 5, 6, 7, 12, 13, 14, 15}))
      << lowered;
}

/// kRegisterForm with a row-major B of 128 columns: two panels of one swizzled row, `panel`
/// elements apart.
std::string two_panels(const std::string& panel) {
  std::string text(kRegisterForm);
  text.replace(text.find("acc, 16, 64"), 11, "acc, 16, 128");
  text.replace(text.find("bf16[2048]"), 10, "bf16[8192]");
  text.replace(text.find("  wg.mma"), 0, "  %9 = const " + panel + " : u32\n");
  text.replace(text.find("row %2"), 6, "row %9");
  return text;
}

TEST(PassLowerWarpgroupProducts, ARowMajorBWiderThanASwizzledRowWithoutPanelsIsLoweredOnHopper) {
  std::string text(kRegisterForm);
  text.replace(text.find("acc, 16, 64"), 11, "acc, 16, 128");
  const std::string lowered =
      run_pass(lower_warpgroup_products, text, TargetProfile::cuda(90, MmaStrategy::Wgmma));
  EXPECT_EQ(lowered.find("wg.mma"), std::string::npos) << lowered;
  EXPECT_NE(lowered.find("frag.mma"), std::string::npos) << lowered;
}

TEST(PassLowerWarpgroupProducts, ARowMajorBInPanelsOnSwizzleAtomsStaysOnHopper) {
  const std::string text = two_panels("2048");  // 4096 bytes: four 1024-byte atoms
  EXPECT_EQ(run_pass(lower_warpgroup_products, text, TargetProfile::cuda(90, MmaStrategy::Wgmma)),
            canonical(text));
}

TEST(PassLowerWarpgroupProducts, PanelsOffTheSwizzleAtomsAreLoweredOnHopper) {
  const std::string lowered = run_pass(lower_warpgroup_products, two_panels("2056"),
                                       TargetProfile::cuda(90, MmaStrategy::Wgmma));
  EXPECT_EQ(lowered.find("wg.mma"), std::string::npos) << lowered;
  EXPECT_NE(lowered.find("frag.mma"), std::string::npos) << lowered;
}

TEST(PassLowerWarpgroupProducts, PanelsBecomeOneLoadEachPlacedIntoTheBFragment) {
  const std::string lowered =
      run_pass(lower_warpgroup_products, two_panels("2048"), TargetProfile::cuda(90));
  const auto count = [&](const std::string& what) {
    int n = 0;
    for (std::size_t at = lowered.find(what); at != std::string::npos;
         at = lowered.find(what, at + 1)) {
      ++n;
    }
    return n;
  };
  // K = 32: two steps of 16, each a 16×128 B fragment filled from two 16×64 panel loads (32
  // slots a lane each) beside the 16×16 A fragment's 8 slots, then one product.
  EXPECT_EQ(count(", b, 16, 128 : bf16"), 2) << lowered;
  EXPECT_EQ(count(", b, 16, 64 : bf16"), 4) << lowered;
  EXPECT_EQ(count("frag.load @tb["), 4) << lowered;
  EXPECT_EQ(count("frag.set "), 2 * (2 * 32 + 8)) << lowered;
  EXPECT_EQ(count("frag.mma "), 2) << lowered;
  EXPECT_NE(lowered.find("%9"), std::string::npos) << "the second panel's offset" << lowered;
}

TEST(PassLowerWarpgroupProducts, OnePanelOfAStrideThePassCannotKnowIsOneLoad) {
  std::string text(kRegisterForm);  // its panel stride is %2, the constant 0
  text.replace(text.find("  %3 = const 64 : u32"), 21, "  %3 = builtin thread_id.y : u32");
  const std::string lowered = run_pass(lower_warpgroup_products, text, TargetProfile::cuda(90));
  EXPECT_NE(lowered.find(", b, 16, 64 : bf16"), std::string::npos) << lowered;
  EXPECT_NE(lowered.find("frag.mma "), std::string::npos) << lowered;
}

TEST(PassLowerWarpgroupProducts, PanelsOfAStrideThePassCannotKnowAreAnError) {
  std::string text = two_panels("2048");
  text.replace(text.find("  %3 = const 64 : u32"), 21, "  %3 = builtin thread_id.y : u32");
  EXPECT_THROW(run_pass(lower_warpgroup_products, text, TargetProfile::cuda(90)), Error);
}

}  // namespace
}  // namespace iron::pass_test
