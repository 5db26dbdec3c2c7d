/// Target profiles (what CUDA and Metal versions allow, and their names) and the target
/// registry: every entry complete, its profiles its own, its emitter the one compile_kernel uses.
#include "iron/codegen/target.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "iron/codegen/compile.hpp"
#include "iron/codegen/targets.hpp"
#include "iron/dsl/kernel.hpp"
#include "iron/runtime/backend.hpp"

namespace iron::target_test {
namespace {

using codegen::TargetKind;
using codegen::TargetProfile;

TEST(PassTargetProfile, CudaHasNativeHalfTypesFromSm80) {
  const TargetProfile sm90 = TargetProfile::cuda(90);
  EXPECT_EQ(sm90.kind, TargetKind::Cuda);
  EXPECT_EQ(sm90.name, "sm_90");
  EXPECT_EQ(sm90.cuda_sm, 90);
  EXPECT_EQ(sm90.metal_version, 0);
  EXPECT_TRUE(sm90.native_f16_arithmetic);
  EXPECT_TRUE(sm90.native_bf16_arithmetic);
  EXPECT_TRUE(sm90.has_bf16_type);
  EXPECT_EQ(sm90.max_vector_bytes, 16u);
  EXPECT_EQ(sm90.max_shared_bytes, 227u * 1024) << "what a block may opt in to";
  const TargetProfile sm80 = TargetProfile::cuda(80);
  EXPECT_EQ(sm80.name, "sm_80");
  EXPECT_TRUE(sm80.native_bf16_arithmetic);
  EXPECT_EQ(sm80.max_shared_bytes, 163u * 1024);
  EXPECT_EQ(TargetProfile::cuda(89).max_shared_bytes, 99u * 1024);
  const TargetProfile sm75 = TargetProfile::cuda(75);
  EXPECT_FALSE(sm75.native_f16_arithmetic);
  EXPECT_FALSE(sm75.native_bf16_arithmetic);
  EXPECT_FALSE(sm75.has_bf16_type);
}

TEST(PassTargetProfile, MetalHasBfloatFromVersion31) {
  const TargetProfile m30 = TargetProfile::metal(30);
  EXPECT_EQ(m30.kind, TargetKind::Msl);
  EXPECT_EQ(m30.name, "metal3.0");
  EXPECT_EQ(m30.metal_version, 30);
  EXPECT_EQ(m30.cuda_sm, 0);
  EXPECT_TRUE(m30.native_f16_arithmetic);
  EXPECT_FALSE(m30.native_bf16_arithmetic);
  EXPECT_FALSE(m30.has_bf16_type);
  EXPECT_EQ(m30.max_vector_bytes, 16u);
  EXPECT_EQ(m30.max_shared_bytes, 32u * 1024);
  for (const int version : {31, 32}) {
    const TargetProfile m = TargetProfile::metal(version);
    EXPECT_TRUE(m.native_bf16_arithmetic) << version;
    EXPECT_TRUE(m.has_bf16_type) << version;
  }
  EXPECT_EQ(TargetProfile::metal(32).name, "metal3.2");
}

TEST(PassTargetProfile, ByNameReadsWhatNameWrites) {
  for (const char* name :
       {"sm_80", "sm_86", "sm_90", "sm_90a", "metal3.0", "metal3.1", "metal3.2"}) {
    const auto t = TargetProfile::by_name(name);
    ASSERT_TRUE(t.has_value()) << name;
    EXPECT_EQ(t->name, name);
  }
  EXPECT_EQ(TargetProfile::by_name("sm_90")->cuda_sm, 90);
  EXPECT_EQ(TargetProfile::by_name("sm_90a")->mma, codegen::MmaStrategy::Wgmma);
  EXPECT_TRUE(TargetProfile::by_name("sm_90a")->arch_specific());
  EXPECT_FALSE(TargetProfile::by_name("sm_90")->arch_specific());
  EXPECT_EQ(TargetProfile::by_name("metal3.1")->metal_version, 31);
  for (const char* name : {"", "sm_", "sm_75", "sm_090", "sm_80a", "sm_90+mma=wgmma", "sm90",
                           "metal", "metal2.4", "metal3.3", "cuda"}) {
    EXPECT_FALSE(TargetProfile::by_name(name).has_value()) << name;
  }
}

TEST(PassTargetProfile, DefaultsAreSm90AndMetal31) {
  const auto targets = TargetProfile::defaults();
  ASSERT_EQ(targets.size(), 2u);
  EXPECT_EQ(targets[0].name, "sm_90");
  EXPECT_EQ(targets[1].name, "metal3.1");
}

TEST(TargetRegistry, ListsCudaAndMslInTargetKindOrder) {
  const auto& all = codegen::targets();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].name, "cuda");
  EXPECT_EQ(all[0].extension, ".cu");
  EXPECT_EQ(all[0].checker, "nvrtc");
  EXPECT_EQ(all[1].name, "msl");
  EXPECT_EQ(all[1].extension, ".metal");
  EXPECT_EQ(all[1].checker, "msl-shim");
  for (std::size_t i = 0; i < all.size(); ++i) {
    EXPECT_EQ(static_cast<std::size_t>(all[i].kind), i) << all[i].name;
  }
}

TEST(TargetRegistry, EveryEntryIsCompleteAndNamedOnce) {
  std::set<std::string_view> names;
  std::set<std::string_view> extensions;
  for (const codegen::Target& t : codegen::targets()) {
    EXPECT_TRUE(names.insert(t.name).second) << t.name;
    EXPECT_TRUE(extensions.insert(t.extension).second) << t.extension;
    EXPECT_TRUE(t.extension.starts_with(".")) << t.name;
    EXPECT_FALSE(t.language.empty()) << t.name;
    EXPECT_FALSE(t.checker.empty()) << t.name;
    EXPECT_NE(t.profile, nullptr) << t.name;
    EXPECT_NE(t.emit, nullptr) << t.name;
    EXPECT_EQ(codegen::find_target(t.name), &t);
  }
  EXPECT_EQ(codegen::find_target("ir"), nullptr);
  EXPECT_EQ(codegen::find_target("sm_90"), nullptr);
}

TEST(TargetRegistry, ListedProfilesAreTheTargetsOwnAndIncludeTheDefault) {
  for (const codegen::Target& t : codegen::targets()) {
    bool default_listed = false;
    for (const std::string_view name : t.listed_profiles) {
      const auto profile = t.profile(name);
      ASSERT_TRUE(profile.has_value()) << t.name << " " << name;
      EXPECT_EQ(profile->name, name);
      EXPECT_EQ(&codegen::target_of(*profile), &t) << name;
      EXPECT_EQ(TargetProfile::by_name(name)->name, name);
      default_listed = default_listed || name == t.default_profile;
      for (const codegen::Target& other : codegen::targets()) {
        if (&other == &t) continue;
        EXPECT_FALSE(other.profile(name).has_value()) << other.name << " " << name;
      }
    }
    EXPECT_TRUE(default_listed) << t.name << " does not list its default " << t.default_profile;
  }
  EXPECT_EQ(codegen::targets()[0].profile("sm_86")->cuda_sm, 86);  // any sm_N, N >= 80
}

TEST(TargetRegistry, FirstBf16ProfileIsTheOldestListedOneWithBfloat) {
  for (const codegen::Target& t : codegen::targets()) {
    std::string_view first;
    for (const std::string_view name : t.listed_profiles) {
      if (first.empty() && t.profile(name)->has_bf16_type) first = name;
    }
    const bool all_have_it = first == t.listed_profiles.front();
    EXPECT_EQ(t.first_bf16_profile, all_have_it ? std::string_view() : first) << t.name;
  }
  EXPECT_EQ(codegen::find_target("msl")->first_bf16_profile, "metal3.1");
}

TEST(TargetRegistry, CompileKernelUsesTheEmitterOfTheProfilesTarget) {
  const ir::Kernel traced = dsl::kernel_ir_for("iron_scale", DType::F32);
  for (const TargetProfile& profile : TargetProfile::defaults()) {
    const codegen::Target& target = codegen::target_of(profile);
    const auto compiled = codegen::compile_kernel(traced, profile);
    EXPECT_EQ(compiled.source, target.emit(compiled.lowered, profile)) << target.name;
    EXPECT_NE(compiled.source.find("for " + profile.name + " ("), std::string::npos) << target.name;
  }
}

TEST(TargetRegistry, EveryBackendRunsARegisteredTargetOrTheIr) {
  std::set<std::string_view> names;
  for (const runtime::BackendEntry& b : runtime::backends()) {
    EXPECT_TRUE(names.insert(b.name).second) << b.name;
    EXPECT_EQ(runtime::find_backend(b.name), &b);
    if (b.target.empty()) {
      EXPECT_FALSE(b.device) << b.name << " runs the IR, so it runs on the host";
    } else {
      EXPECT_NE(codegen::find_target(b.target), nullptr) << b.name << " runs " << b.target;
    }
    EXPECT_TRUE(!b.binary || !b.target.empty()) << b.name << " compiles a binary of no source";
  }
  EXPECT_EQ(runtime::backends().front().name, "sim");
  EXPECT_TRUE(runtime::backends().front().sanitizer);
  EXPECT_EQ(runtime::find_backend("auto"), nullptr);
}

}  // namespace
}  // namespace iron::target_test
