/// `iron run` and `iron list` on bad or missing input, through the CLI as a user runs them: every
/// mistake exits with status 2 and a message naming the option or file and what is wrong.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "iron/testing/data.hpp"
#include "iron/testing/npy.hpp"

namespace iron::run_inputs_test {
namespace {

namespace fs = std::filesystem;

fs::path scratch(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("iron-run-test-" + std::to_string(getpid()));
  fs::create_directories(dir);
  return dir / name;
}

struct Outcome {
  int status = -1;
  std::string output;  ///< stdout and stderr together
};

/// Runs `iron ARGS` and returns its exit status and output.
Outcome iron(const std::string& args) {
  const std::string cmd = std::string(IRON_CLI) + " " + args + " 2>&1";
  Outcome out;
  FILE* pipe = popen(cmd.c_str(), "r");
  if (pipe == nullptr) return out;
  std::array<char, 4096> buffer{};
  while (std::fgets(buffer.data(), buffer.size(), pipe) != nullptr) out.output += buffer.data();
  const int status = pclose(pipe);
  out.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

/// `iron run iron_softmax` with a good 2 x 4 f32 input, n = 4, and `extra` appended.
std::string softmax_args(const std::string& extra) {
  const auto in = scratch("x.npy").string();
  testing::write_npy(in, {testing::pack({1, 2, 3, 4, 5, 6, 7, 8}, DType::F32), {2, 4}});
  return fmt::format("run iron_softmax --backend sim --in inp={} --out out={} --const n=4 {}", in,
                     scratch("y.npy").string(), extra);
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(IronRunInputs, GridAndTpgThatDoNotFitU32AreRefused) {
  Outcome o = iron(softmax_args("--grid 4294967298 --tpg 32"));
  EXPECT_EQ(o.status, 2) << o.output;
  EXPECT_TRUE(contains(o.output,
                       "--grid 4294967298: 4294967298 does not fit in 32 bits (at "
                       "most 4294967295)"))
      << o.output;
  o = iron(softmax_args("--grid 2 --tpg 1,4294967328"));
  EXPECT_EQ(o.status, 2) << o.output;
  EXPECT_TRUE(contains(o.output, "--tpg 1,4294967328: 4294967328 does not fit in 32 bits"))
      << o.output;
}

TEST(IronRunInputs, MalformedNumbersNameTheOption) {
  Outcome o = iron(softmax_args("--grid 2 --tpg 99999999999999999999999"));
  EXPECT_EQ(o.status, 2) << o.output;
  EXPECT_TRUE(contains(o.output,
                       "--tpg 99999999999999999999999: 99999999999999999999999 is too "
                       "large"))
      << o.output;
  EXPECT_FALSE(contains(o.output, "stoull")) << o.output;
  o = iron(softmax_args("--grid 2,,1 --tpg 32"));
  EXPECT_EQ(o.status, 2) << o.output;
  EXPECT_TRUE(contains(o.output, "--grid 2,,1 takes numbers separated by commas, not '2,,1'"))
      << o.output;
  o = iron(softmax_args("--grid 1,1,1,1 --tpg 32"));
  EXPECT_EQ(o.status, 2) << o.output;
  EXPECT_TRUE(contains(o.output, "--grid 1,1,1,1: takes 1 to 3 numbers")) << o.output;
}

TEST(IronRunInputs, AConstantBeyondItsTypeNamesTheOption) {
  const auto in = scratch("x.npy").string();
  testing::write_npy(in, {testing::pack({1, 2}, DType::F32), {2}});
  const Outcome o = iron(fmt::format(
      "run iron_softmax --in inp={} --out out={} --const n=99999999999999999999 --grid 1 --tpg 32",
      in, scratch("y.npy").string()));
  EXPECT_EQ(o.status, 2) << o.output;
  EXPECT_TRUE(contains(o.output, "--const n=99999999999999999999: out of range for u32"))
      << o.output;
}

TEST(IronRunInputs, AnOutputShapeWhoseSizeOverflowsIsRefused) {
  const Outcome o = iron(softmax_args("--grid 2 --tpg 32 --out-shape out=4294967296,4294967296"));
  EXPECT_EQ(o.status, 2) << o.output;
  EXPECT_TRUE(contains(o.output,
                       "output 'out': shape (4294967296, 4294967296) has more bytes "
                       "than fit in 64 bits"))
      << o.output;
}

TEST(IronRunInputs, AnOutputTooLargeToAllocateIsRefusedByName) {
  // 2^61 f32 elements: the byte count fits in 64 bits, the memory does not exist.
  const Outcome o = iron(softmax_args("--grid 2 --tpg 32 --out-shape out=2305843009213693951"));
  EXPECT_EQ(o.status, 2) << o.output;
  EXPECT_TRUE(contains(o.output,
                       "output 'out': shape (2305843009213693951) needs "
                       "9223372036854775804 bytes, which cannot be allocated"))
      << o.output;
  EXPECT_FALSE(contains(o.output, "bad_alloc")) << o.output;
}

TEST(IronRunInputs, EveryUnusableInputFileExitsWithTwo) {
  const auto in = scratch("bad.npy").string();
  const std::string rest = fmt::format("--out out={} --const n=2 --grid 1 --tpg 32 --backend sim",
                                       scratch("o.npy").string());
  // A dtype Iron reads but the parameter does not take.
  testing::write_npy(in, {testing::pack({1, 2}, DType::U32), {2}});
  Outcome o = iron(fmt::format("run iron_softmax --in inp={} {}", in, rest));
  EXPECT_EQ(o.status, 2) << o.output;
  EXPECT_TRUE(contains(o.output, "--in inp=" + in + ": the file holds u32 but 'inp' is f32"))
      << o.output;
  // A dtype Iron does not read at all (<f8).
  std::string header = "{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }";
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  std::ofstream(in, std::ios::binary | std::ios::trunc)
      << std::string("\x93NUMPY\x01\x00", 8) << static_cast<char>(header.size() + 1) << '\0'
      << header << '\n'
      << std::string(16, '\0');
  o = iron(fmt::format("run iron_softmax --in inp={} {}", in, rest));
  EXPECT_EQ(o.status, 2) << o.output;
  EXPECT_TRUE(contains(o.output, "--in inp: " + in + ": unsupported element type '<f8'"))
      << o.output;
  // Not a file, and a file that does not exist.
  o = iron(fmt::format("run iron_softmax --in inp={} {}", scratch("").string(), rest));
  EXPECT_EQ(o.status, 2) << o.output;
  EXPECT_TRUE(contains(o.output, "not a regular file (a directory)")) << o.output;
  o = iron(fmt::format("run iron_softmax --in inp={} {}", scratch("none.npy").string(), rest));
  EXPECT_EQ(o.status, 2) << o.output;
  EXPECT_TRUE(contains(o.output, "--in inp: " + scratch("none.npy").string() + ": no such file"))
      << o.output;
}

TEST(IronRunInputs, WithoutItsArgumentsAKernelListsItsParameters) {
  const Outcome o = iron("run iron_scale --dtype f16");
  EXPECT_EQ(o.status, 2) << o.output;
  EXPECT_TRUE(contains(o.output,
                       "missing --in inp=FILE.npy --out out=FILE.npy --const alpha=VALUE "
                       "--const n=VALUE; kernel iron_scale [f16] takes:\n"
                       "  in         inp    f16   --in inp=FILE.npy\n"
                       "  out        out    f16   --out out=FILE.npy\n"
                       "  constexpr  alpha  f32   --const alpha=VALUE\n"
                       "  constexpr  n      u32   --const n=VALUE\n"))
      << o.output;
}

TEST(IronRunInputs, AnUnknownNameListsTheParameters) {
  const Outcome o = iron(softmax_args("--grid 2 --tpg 32 --const rows=2"));
  EXPECT_EQ(o.status, 2) << o.output;
  EXPECT_TRUE(contains(o.output,
                       "iron_softmax has no parameter 'rows' of that kind; kernel "
                       "iron_softmax [f32] takes:\n"))
      << o.output;
  EXPECT_TRUE(contains(o.output, "--const n=VALUE")) << o.output;
}

TEST(IronList, ParamsShowEachKernelsParametersWithT) {
  const Outcome o = iron("list kernels --params");
  EXPECT_EQ(o.status, 0) << o.output;
  EXPECT_TRUE(contains(o.output,
                       "      in inp: T, out out: T, constexpr alpha: f32, constexpr "
                       "n: u32\n"))
      << o.output;
  EXPECT_FALSE(contains(iron("list kernels").output, "constexpr alpha")) << o.output;
}

}  // namespace
}  // namespace iron::run_inputs_test
