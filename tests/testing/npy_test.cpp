// .npy reading and writing, and `iron run` on .npy files end to end.
#include "iron/testing/npy.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "iron/core/error.hpp"
#include "iron/testing/data.hpp"

namespace iron::npy_test {
namespace {

namespace fs = std::filesystem;

fs::path scratch(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("iron-npy-test-" + std::to_string(getpid()));
  fs::create_directories(dir);
  return dir / name;
}

TEST(Npy, RoundTripsEveryDtype) {
  for (const DType dt :
       {DType::F32, DType::F16, DType::I32, DType::U32, DType::U16, DType::U8, DType::I8}) {
    testing::NpyArray a{testing::pack({1, 2, 3, 4, 5, 6}, dt), {2, 3}};
    const auto path = scratch("a.npy").string();
    testing::write_npy(path, a);
    const auto b = testing::read_npy(path);
    EXPECT_EQ(b.tensor.dtype, dt);
    EXPECT_EQ(b.shape, a.shape);
    EXPECT_EQ(b.tensor.bytes, a.tensor.bytes);
  }
}

TEST(Npy, DataStartsOnA64ByteBoundary) {
  const auto path = scratch("aligned.npy").string();
  testing::write_npy(path, {testing::pack({1.0f}, DType::F32), {1}});
  EXPECT_EQ(fs::file_size(path) % 64, 4u);  // 64-byte header, then one f32
}

TEST(Npy, Bf16IsWrittenAsF32) {
  const auto path = scratch("bf16.npy").string();
  testing::write_npy(path, {testing::pack({1.5f, -2.0f}, DType::BF16), {2}});
  const auto b = testing::read_npy(path);
  EXPECT_EQ(b.tensor.dtype, DType::F32);
  EXPECT_EQ(testing::unpack(b.tensor), (std::vector<float>{1.5f, -2.0f}));
}

TEST(Npy, RejectsWhatItCannotRead) {
  const auto path = scratch("bad.npy").string();
  std::ofstream(path) << "not an array";
  EXPECT_THROW(testing::read_npy(path), Error);
  EXPECT_THROW(testing::read_npy(scratch("missing.npy").string()), Error);
  testing::write_npy(path, {testing::pack({1, 2, 3}, DType::F32), {3}});
  fs::resize_file(path, fs::file_size(path) - 2);
  try {
    testing::read_npy(path);
    FAIL() << "a truncated file was read";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("expected 12 bytes"), std::string::npos) << e.what();
  }
}

TEST(IronRun, SoftmaxOnNpyMatchesTheDefinition) {
  const std::vector<float> x = {1, 2, 3, 4, -1, 0, 1, 100};
  const auto in = scratch("x.npy").string();
  const auto out = scratch("y.npy").string();
  testing::write_npy(in, {testing::pack(x, DType::F32), {2, 4}});
  const std::string cmd = std::string(IRON_CLI) + " run iron_softmax --in inp=" + in +
                          " --out out=" + out + " --const n=4 --grid 2 --tpg 32 --backend sim";
  ASSERT_EQ(std::system((cmd + " > /dev/null").c_str()), 0) << cmd;
  const auto y = testing::read_npy(out);
  ASSERT_EQ(y.shape, (std::vector<std::uint64_t>{2, 4}));
  const auto got = testing::unpack(y.tensor);
  for (int r = 0; r < 2; ++r) {
    double peak = -INFINITY, total = 0;
    for (int j = 0; j < 4; ++j) peak = std::max(peak, double{x[r * 4 + j]});
    for (int j = 0; j < 4; ++j) total += std::exp(x[r * 4 + j] - peak);
    for (int j = 0; j < 4; ++j) {
      EXPECT_NEAR(got[r * 4 + j], std::exp(x[r * 4 + j] - peak) / total, 1e-6);
    }
  }
}

TEST(IronRun, RefusesAMismatchedDtypeAndTooFewThreads) {
  const auto in = scratch("u.npy").string();
  testing::write_npy(in, {testing::pack({1, 2}, DType::U32), {2}});
  const std::string base = std::string(IRON_CLI) +
                           " run iron_softmax --out out=" + scratch("o.npy").string() +
                           " --const n=2 --grid 1 ";
  EXPECT_NE(std::system((base + "--tpg 32 --in inp=" + in + " 2>/dev/null").c_str()), 0);
  testing::write_npy(in, {testing::pack({1, 2}, DType::F32), {2}});
  // A reduction kernel with 4 threads per group is refused by the dispatch guard.
  EXPECT_NE(std::system((base + "--tpg 4 --in inp=" + in + " 2>/dev/null").c_str()), 0);
}

}  // namespace
}  // namespace iron::npy_test
