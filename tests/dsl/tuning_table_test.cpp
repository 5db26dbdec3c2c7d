/// Tuning files: shape buckets, the text written and read back, malformed lines named by
/// file and line, lookup by the whole key, and an entry replaced rather than repeated.
#include "iron/dsl/tuning_table.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <string>

#include "iron/core/error.hpp"
#include "iron/dsl/kernel.hpp"

namespace {
using namespace iron::dsl;
using iron::DType;

std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const iron::Error& e) {
    return e.what();
  }
  return "";
}

TuningEntry entry(std::uint64_t m, std::uint32_t bn) {
  TuningEntry e;
  e.kernel = "iron_gemm_warpgroup_nk";
  e.dtype = DType::BF16;
  e.bucket = {{"k", 4096}, {"m", m}, {"n", 4096}};
  e.device = "NVIDIA H200";
  e.driver = "13.0";
  e.config = {{"bn", bn}};
  e.measured = "184.2 us, defaults 186.0 us at m=4096,n=4096,k=4096,alpha=1";
  return e;
}

TEST(TuningTable, BucketsRoundIntegerConstexprsUpToPowersOfTwo) {
  const iron::ir::Kernel k = kernel_ir_for("iron_gemm_warpgroup_nk", DType::BF16);
  const ShapeBucket b = shape_bucket(k, {{"m", 3000}, {"n", 4096}, {"k", 1}, {"alpha", 0.5}});
  EXPECT_EQ(b, (ShapeBucket{{"k", 1}, {"m", 4096}, {"n", 4096}}));  // alpha (a float) is left out
  EXPECT_EQ(format_bucket(b), "k=1..1,m=2049..4096,n=2049..4096");
  EXPECT_EQ(shape_bucket(k, {{"m", 4097}, {"n", 2}, {"k", 3}}),
            (ShapeBucket{{"k", 4}, {"m", 8192}, {"n", 2}}));
  EXPECT_EQ(error_of([&] {
              shape_bucket(k, {{"m", 1}, {"n", 1}});
            }),
            "the shape bucket of iron_gemm_warpgroup_nk needs constexpr 'k', which is not given");
}

TEST(TuningTable, TextRoundTripsSortedWithOneEntryAKey) {
  TuningTable t;
  t.put(entry(8192, 256));
  t.put(entry(128, 128));
  t.put(entry(8192, 128));  // replaces the first
  ASSERT_EQ(t.entries().size(), 2u);
  EXPECT_EQ(t.entries().front().bucket.at("m"), 128u);
  const std::string text = t.text();
  EXPECT_NE(text.find("iron_gemm_warpgroup_nk | bf16 | k=2049..4096,m=65..128,n=2049..4096 | "
                      "NVIDIA H200 | 13.0 | bn=128 | 184.2 us"),
            std::string::npos)
      << text;
  const TuningTable back = TuningTable::parse(text, "t.txt");
  ASSERT_EQ(back.entries().size(), 2u);
  EXPECT_EQ(back.text(), text);
  const auto* found = back.find("iron_gemm_warpgroup_nk", DType::BF16, entry(8192, 0).bucket,
                                "NVIDIA H200", "13.0");
  ASSERT_NE(found, nullptr);
  EXPECT_EQ(found->config, (TuningConfig{{"bn", 128}}));
  EXPECT_EQ(back.find("iron_gemm_warpgroup_nk", DType::BF16, entry(8192, 0).bucket, "NVIDIA H200",
                      "12.8"),
            nullptr);  // another driver
  EXPECT_EQ(
      back.find("iron_gemm_warpgroup_nk", DType::F16, entry(8192, 0).bucket, "NVIDIA H200", "13.0"),
      nullptr);
}

TEST(TuningTable, ConfigForALaunchIsItsBucketsEntryOrTheKernelsRule) {
  TuningTable t;
  t.put(entry(128, 64));
  const iron::ir::Kernel gemm = kernel_ir_for("iron_gemm_warpgroup_nk", DType::BF16);
  const std::map<std::string, double, std::less<>> shape{
      {"m", 100}, {"n", 4000}, {"k", 4096}, {"alpha", 1}};
  EXPECT_EQ(t.config_for(gemm, shape, "NVIDIA H200", "13.0"), (TuningConfig{{"bn", 64}}));
  // No entry for the H100: the kernel's rule (16 tiles of 128×256: narrower ones, 126 of 64×64).
  EXPECT_EQ(t.config_for(gemm, shape, "NVIDIA H100", "13.0"),
            (TuningConfig{{"bm", 64}, {"bn", 64}, {"stages", 16}}));
  EXPECT_EQ(t.config_for(kernel_ir_for("iron_softmax", DType::BF16), {}, "NVIDIA H200", "13.0"),
            TuningConfig{});  // no knobs: no lookup
}

TEST(TuningTable, ConfigForLeavesOutTheKnobsAtTheirDefaults) {
  const iron::ir::Kernel gemm = kernel_ir_for("iron_gemm_warpgroup_nk", DType::BF16);
  const TuningConfig defaults = tuning_space("iron_gemm_warpgroup_nk")->defaults();
  const std::map<std::string, double, std::less<>> shape{
      {"m", 100}, {"n", 4000}, {"k", 4096}, {"alpha", 1}};
  TuningTable t;
  TuningEntry all_defaults = entry(128, defaults.at("bn"));
  t.put(all_defaults);
  EXPECT_EQ(t.config_for(gemm, shape, "NVIDIA H200", "13.0"), TuningConfig{});
  TuningEntry mixed = all_defaults;
  mixed.config["stages"] = 3;
  t.put(mixed);
  EXPECT_EQ(t.config_for(gemm, shape, "NVIDIA H200", "13.0"), (TuningConfig{{"stages", 3}}));
}

TEST(TuningTable, MalformedLinesAreNamed) {
  const std::string head = "# comment\n\n";
  const std::string good =
      "iron_gemm_warpgroup_nk | bf16 | m=2049..4096 | NVIDIA H200 | 13.0 | bn=128 | note\n";
  EXPECT_EQ(error_of([&] { TuningTable::parse(head + "a | b\n", "f.txt"); }),
            "f.txt:3: 2 fields where an entry has 7 (kernel | dtype | shape bucket | device | "
            "driver | configuration | measured)");
  EXPECT_EQ(error_of([&] {
              TuningTable::parse(head + "k | f64 | m=1..1 | d | 13.0 | bn=1 | x\n", "f.txt");
            }),
            "f.txt:3: 'f64' is not a dtype");
  EXPECT_NE(error_of([&] {
              TuningTable::parse("k | f32 | m=2000..4096 | d | 13.0 | bn=1 | x\n", "f.txt");
            }).find("f.txt:1: shape bucket item 'm=2000..4096'"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              TuningTable::parse("k | f32 | m=1..1 | d | 13.0 | bn | x\n", "f.txt");
            }).find("f.txt:1: a tuning configuration is NAME=VALUE"),
            std::string::npos);
  EXPECT_EQ(error_of([&] { TuningTable::parse(good + good, "f.txt"); }),
            "f.txt:2: a second entry for the same kernel, dtype, bucket, device and driver");
}

TEST(TuningTable, WriteThenReadAFile) {
  const auto path =
      std::filesystem::temp_directory_path() /
      ("iron_tuning_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + ".txt");
  TuningTable t;
  t.put(entry(4096, 256));
  t.write(path.string());
  EXPECT_EQ(TuningTable::read(path.string()).text(), t.text());
  EXPECT_FALSE(std::filesystem::exists(path.string() + ".tmp"));
  std::filesystem::remove(path);
  EXPECT_EQ(error_of([&] { TuningTable::read(path.string()); }),
            "cannot read tuning file " + path.string());
}

TEST(TuningTable, EntriesKeepTheirFieldsApart) {
  TuningEntry e = entry(4096, 256);
  e.measured = "a | b";
  TuningTable t;
  EXPECT_NE(error_of([&] { t.put(e); }).find("neither \" | \" nor a line break"),
            std::string::npos);
}

TEST(TuningTable, TheLibraryCarriesTheCommittedFiles) {
  // Every entry of tuning/*.txt, and nothing else, is in the built-in table.
  TuningTable committed;
  for (const auto& f : std::filesystem::directory_iterator(IRON_SOURCE_DIR "/tuning")) {
    if (f.path().extension() != ".txt") continue;
    const TuningTable file = TuningTable::read(f.path().string());
    for (const TuningEntry& e : file.entries()) committed.put(e);
  }
  ASSERT_FALSE(committed.entries().empty());
  EXPECT_EQ(builtin_tuning_table().text(), committed.text());
}

TEST(TuningTable, AFileNamedByTheEnvironmentWinsOverTheBuiltInEntries) {
  const iron::ir::Kernel gemm = kernel_ir_for("iron_gemm_warpgroup_nk", DType::BF16);
  const std::map<std::string, double, std::less<>> m128{
      {"m", 128}, {"n", 4096}, {"k", 4096}, {"alpha", 1}};
  const TuningConfig builtin = builtin_tuning_table().config_for(gemm, m128, "NVIDIA H200", "13.0");
  ASSERT_FALSE(builtin.empty()) << "tuning/nvidia-h200.txt tunes m = 128, n = k = 4096";
  EXPECT_EQ(merged_tuning_table(nullptr, nullptr).config_for(gemm, m128, "NVIDIA H200", "13.0"),
            builtin);
  EXPECT_EQ(
      merged_tuning_table("", "0").config_for(gemm, m128, "NVIDIA H200", "13.0"),
      (TuningConfig{{"bm", 64}, {"bn", 64}, {"stages", 16}}));  // IRON_TUNING_BUILTIN=0: the rule

  const auto path = std::filesystem::temp_directory_path() /
                    ("iron_tuning_env_" +
                     std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + ".txt");
  TuningTable mine;
  TuningEntry e = entry(128, 128);
  e.bucket = {{"k", 4096}, {"m", 128}, {"n", 4096}};
  mine.put(e);
  mine.write(path.string());
  EXPECT_EQ(merged_tuning_table(path.string().c_str(), nullptr)
                .config_for(gemm, m128, "NVIDIA H200", "13.0"),
            (TuningConfig{{"bn", 128}}));
  const std::map<std::string, double, std::less<>> m4096{
      {"m", 4096}, {"n", 4096}, {"k", 4096}, {"alpha", 1}};
  EXPECT_EQ(merged_tuning_table(path.string().c_str(), nullptr)
                .config_for(gemm, m4096, "NVIDIA H200", "13.0"),
            builtin_tuning_table().config_for(gemm, m4096, "NVIDIA H200", "13.0"));
  std::filesystem::remove(path);
  EXPECT_EQ(error_of([&] { merged_tuning_table(path.string().c_str(), nullptr); }),
            "IRON_TUNING_FILE: cannot read tuning file " + path.string());
}

}  // namespace
