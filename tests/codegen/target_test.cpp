/// Target profiles: what CUDA and Metal versions allow, and their names.
#include "iron/codegen/target.hpp"

#include <gtest/gtest.h>

namespace iron::passes1_test {
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
  EXPECT_EQ(sm90.max_shared_bytes, 48u * 1024);
  const TargetProfile sm80 = TargetProfile::cuda(80);
  EXPECT_EQ(sm80.name, "sm_80");
  EXPECT_TRUE(sm80.native_bf16_arithmetic);
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
  for (const char* name : {"sm_80", "sm_86", "sm_90", "metal3.0", "metal3.1", "metal3.2"}) {
    const auto t = TargetProfile::by_name(name);
    ASSERT_TRUE(t.has_value()) << name;
    EXPECT_EQ(t->name, name);
  }
  EXPECT_EQ(TargetProfile::by_name("sm_90")->cuda_sm, 90);
  EXPECT_EQ(TargetProfile::by_name("metal3.1")->metal_version, 31);
  for (const char* name :
       {"", "sm_", "sm_75", "sm_090", "sm_90a", "sm90", "metal", "metal2.4", "metal3.3", "cuda"}) {
    EXPECT_FALSE(TargetProfile::by_name(name).has_value()) << name;
  }
}

TEST(PassTargetProfile, DefaultsAreSm90AndMetal31) {
  const auto targets = TargetProfile::defaults();
  ASSERT_EQ(targets.size(), 2u);
  EXPECT_EQ(targets[0].name, "sm_90");
  EXPECT_EQ(targets[1].name, "metal3.1");
}

}  // namespace
}  // namespace iron::passes1_test
