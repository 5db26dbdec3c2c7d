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

/// A format 1.0 file with `header` as its dict and `data` after it.
std::string npy_with_header(std::string header, const std::string& data = "") {
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string bytes("\x93NUMPY\x01\x00", 8);
  bytes += static_cast<char>(header.size() & 0xFF);
  bytes += static_cast<char>(header.size() >> 8);
  return bytes + header + data;
}

/// The message read_npy throws for a file holding `bytes` ("" when it reads).
std::string read_error(const std::string& bytes) {
  const auto path = scratch("hostile.npy").string();
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
  try {
    testing::read_npy(path);
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(path), std::string::npos) << "the error names no file: " << what;
    return what.substr(what.find(path) + path.size());
  }
  return "";
}

TEST(Npy, RefusesNegativeAndOverWideDimensions) {
  EXPECT_EQ(read_error(npy_with_header(
                "{'descr': '<f4', 'fortran_order': False, 'shape': (-1, 4), }", "0123")),
            ": bad .npy header: negative dimension -1 in the shape");
  EXPECT_EQ(read_error(npy_with_header(
                "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }")),
            ": bad .npy header: dimension 99999999999999999999 does not fit in 64 bits");
}

TEST(Npy, RefusesAShapeWhoseSizeOverflows) {
  // 2^32 * 2^32 elements wraps to 0 in 64 bits, which an empty data part would match.
  EXPECT_EQ(read_error(npy_with_header("{'descr': '<f4', 'fortran_order': False, "
                                       "'shape': (4294967296, 4294967296), }")),
            ": shape (4294967296, 4294967296) has more bytes than fit in 64 bits");
  EXPECT_EQ(read_error(npy_with_header("{'descr': '<f4', 'fortran_order': False, "
                                       "'shape': (4611686018427387904,), }")),
            ": shape (4611686018427387904) has more bytes than fit in 64 bits");
}

TEST(Npy, RefusesMalformedHeaders) {
  EXPECT_EQ(read_error(npy_with_header("{'descr': '<f4', 'shape': (1,), }", "0123")),
            ": bad .npy header: no 'fortran_order'");
  EXPECT_EQ(read_error(npy_with_header(
                "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'x': 1}", "0123")),
            ": bad .npy header: unknown key 'x' (a .npy header has descr, fortran_order, shape)");
  EXPECT_EQ(read_error(npy_with_header(
                "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (1,)}", "0123")),
            ": bad .npy header: 'descr' given twice");
  EXPECT_EQ(read_error(npy_with_header(
                "{'descr': '<f4', 'fortran_order': False, 'shape': ((1,),), }", "0123")),
            ": bad .npy header: expected a dimension (a non-negative integer) in the shape");
  EXPECT_EQ(read_error(
                npy_with_header("{'descr': '>f4', 'fortran_order': False, 'shape': (1,)}", "0123")),
            ": unsupported element type '>f4' (supported: <f4 <f2 <i4 <u4 <u2 |u1 |i1 |b1, and "
            "|V2 as bf16)");
  std::string dims(65 * 3, ' ');
  for (std::size_t i = 0; i < 65; ++i) dims.replace(i * 3, 3, "1, ");
  EXPECT_EQ(read_error(npy_with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (" +
                                       dims + "), }")),
            ": bad .npy header: more than 64 dimensions in the shape");
}

TEST(Npy, RefusesLyingLengthsAndVersions) {
  std::string bytes = npy_with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (1,)}");
  bytes[8] = '\xff';
  bytes[9] = '\xff';  // a header of 65535 bytes in a file of 64
  EXPECT_EQ(read_error(bytes), ": truncated .npy header (65535 bytes claimed, the file has 118)");
  std::string v2 = std::string("\x93NUMPY\x02\x00\xff\xff\xff\x7f", 12) + "{}";
  EXPECT_EQ(read_error(v2),
            ": the .npy header claims 2147483647 bytes; a header has at most 65536");
  EXPECT_EQ(read_error(std::string("\x93NUMPY\x01\x00\x01", 9)),
            " is not a .npy file (no \\x93NUMPY magic)");
  EXPECT_EQ(read_error(std::string("\x93NUMPY\x02\x00\x01\x00", 10)), ": truncated .npy header");
  EXPECT_EQ(read_error(std::string("\x93NUMPY\x04\x00\x01\x00", 10)),
            ": .npy format version 4.0 is not supported (1.0, 2.0, 3.0 are)");
}

TEST(Npy, RefusesADirectory) {
  const auto dir = scratch("a-directory.npy");
  fs::create_directories(dir);
  try {
    testing::read_npy(dir.string());
    FAIL() << "a directory was read";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), dir.string() + ": not a regular file (a directory)");
  }
}

TEST(Npy, WriteRefusesAShapeThatIsNotTheData) {
  const auto path = scratch("w.npy").string();
  const auto error = [&](std::vector<std::uint64_t> shape) {
    try {
      testing::write_npy(path, {testing::pack({1, 2, 3, 4}, DType::F32), std::move(shape)});
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_EQ(error({2, 2}), "");
  EXPECT_EQ(
      error({4294967296, 4294967296, 4}),
      "cannot write " + path +
          ": shape (4294967296, 4294967296, 4) has more than 2^64 elements, the data holds 4");
  EXPECT_EQ(error({3}), "cannot write " + path + ": shape (3) has 3 elements, the data holds 4");
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
