/// Fuzzing the .npy reader: thousands of seeded mutations of real .npy files (every dtype,
/// scalars, 1-D to 4-D, format 1.0 and 2.0) must each read, or fail with an iron::Error naming
/// the file; never crash, throw anything else or allocate more than the file holds (the child
/// runs under a memory limit far below what a lying header could ask for). A file that reads
/// must write back and read again to the same data. Also tests the fuzzing harness itself.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "../fuzz/fuzz.hpp"
#include "iron/core/error.hpp"
#include "iron/testing/data.hpp"
#include "iron/testing/npy.hpp"

namespace iron::npy_fuzz_test {
namespace {

namespace fs = std::filesystem;

constexpr int kCases = 3000;
constexpr std::uint64_t kMemoryLimit = std::uint64_t{64} << 20;  // beyond the start
constexpr int kCpuSeconds = 60;

fs::path scratch_dir() {
  const fs::path dir = fs::temp_directory_path() / ("iron-npy-fuzz-" + std::to_string(getpid()));
  fs::create_directories(dir);
  return dir;
}

std::string file_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void put_file(const fs::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

/// A format 2.0 file (4-byte header length) with NumPy's spacing, written by hand.
std::string version2_file() {
  std::string header = "{'descr': '<i4', 'fortran_order': False, 'shape': (2, 1), }";
  while ((12 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string bytes = std::string("\x93NUMPY\x02\x00", 8);
  for (int i = 0; i < 4; ++i) bytes += static_cast<char>((header.size() >> (8 * i)) & 0xFF);
  bytes += header;
  bytes += std::string("\x07\x00\x00\x00\xf9\xff\xff\xff", 8);
  return bytes;
}

struct Input {
  std::string name;
  std::string bytes;
};

std::vector<Input> real_inputs(const fs::path& dir) {
  const std::vector<std::pair<testing::NpyArray, std::string>> arrays = {
      {{testing::pack({1, -2, 3.5f, 4, 5, 6}, DType::F32), {2, 3}}, "f32 [2, 3]"},
      {{testing::pack({0.5f, 1, 2}, DType::F16), {3}}, "f16 [3]"},
      {{testing::pack({7}, DType::I32), {}}, "i32 scalar"},
      {{testing::pack({1, 2, 3, 4}, DType::U8), {1, 2, 1, 2}}, "u8 [1, 2, 1, 2]"},
      {{testing::pack({1, 0, 1}, DType::Bool), {3, 1}}, "bool [3, 1]"},
      {{testing::pack({}, DType::U32), {0, 2}}, "u32 [0, 2] (empty)"},
  };
  std::vector<Input> inputs;
  for (const auto& [array, name] : arrays) {
    const fs::path path = dir / "input.npy";
    testing::write_npy(path.string(), array);
    inputs.push_back({name, file_bytes(path)});
  }
  inputs.push_back({"i32 [2, 1], format 2.0", version2_file()});
  return inputs;
}

TEST(NpyFuzz, TheRealInputsRead) {
  const fs::path dir = scratch_dir();
  for (const Input& in : real_inputs(dir)) {
    put_file(dir / "real.npy", in.bytes);
    EXPECT_NO_THROW(testing::read_npy((dir / "real.npy").string())) << in.name;
  }
}

TEST(NpyFuzz, MutantsReadOrFailCleanlyWithinTheMemoryLimit) {
  const fs::path dir = scratch_dir();
  const std::vector<Input> inputs = real_inputs(dir);
  const std::string mutant = (dir / "mutant.npy").string();
  const std::string copy = (dir / "copy.npy").string();
  const std::string problem =
      fuzz::run_limited(kMemoryLimit, kCpuSeconds, [&](fuzz::Progress& progress) {
        fuzz::Mutator mutator(0x6e7079);
        int accepted = 0, rejected = 0;
        for (int i = 0; i < kCases; ++i) {
          const Input& in = inputs[static_cast<std::size_t>(i) % inputs.size()];
          progress.at(fmt::format("making mutation {} of {}", i, in.name));
          const fuzz::Mutant m = mutator.mutate(in.bytes);
          const std::string what = fmt::format("mutation {} of {}: {}", i, in.name, m.what);
          progress.at(what);
          put_file(mutant, m.text);
          try {
            const testing::NpyArray a = testing::read_npy(mutant);
            const auto count = testing::element_count(a.shape);
            if (!count || *count * dtype_size(a.tensor.dtype) != a.tensor.bytes.size()) {
              return fmt::format("{}: read, but the data does not fill the shape", what);
            }
            testing::write_npy(copy, a);
            const testing::NpyArray b = testing::read_npy(copy);
            // bf16 (|V2) is written as f32, exactly.
            const std::vector<std::byte> want =
                a.tensor.dtype == DType::BF16
                    ? testing::pack(testing::unpack(a.tensor), DType::F32).bytes
                    : a.tensor.bytes;
            if (b.shape != a.shape || b.tensor.bytes != want) {
              return fmt::format("{}: read, but does not write back the same", what);
            }
            ++accepted;
          } catch (const Error& e) {
            if (std::string(e.what()).find(mutant) == std::string::npos) {
              return fmt::format("{}: the error '{}' does not name the file", what, e.what());
            }
            ++rejected;
          } catch (const std::exception& e) {
            return fmt::format("{}: threw '{}', not an iron::Error", what, e.what());
          }
        }
        if (accepted == 0 || rejected == 0) {
          return fmt::format("{} mutants read and {} were rejected: the mutator is broken",
                             accepted, rejected);
        }
        return std::string();
      });
  EXPECT_EQ(problem, "");
  fs::remove_all(dir);
}

TEST(FuzzHarness, AnAllocationPastTheLimitFailsTheRun) {
  const std::string problem = fuzz::run_limited(kMemoryLimit, kCpuSeconds, [](fuzz::Progress& p) {
    p.at("allocating 1 GiB");
    std::vector<char> big(std::size_t{1} << 30, 'x');
    const volatile char last = big.back();
    return std::string(last == 'x' ? "allocated past the limit" : "");
  });
  EXPECT_NE(problem.find("allocating 1 GiB: threw"), std::string::npos) << problem;
}

TEST(FuzzHarness, ACrashNamesTheCaseItWasRunning) {
  const std::string problem = fuzz::run_limited(kMemoryLimit, kCpuSeconds, [](fuzz::Progress& p) {
    p.at("case 17");
    std::raise(SIGSEGV);
    return std::string();
  });
  EXPECT_NE(problem.find("killed by signal"), std::string::npos) << problem;
  EXPECT_NE(problem.find("case 17"), std::string::npos) << problem;
}

TEST(FuzzHarness, MutationsAreDeterministic) {
  fuzz::Mutator a(42), b(42);
  for (int i = 0; i < 100; ++i) {
    const fuzz::Mutant x = a.mutate("kernel k\n  values 12\n{\n}\n");
    const fuzz::Mutant y = b.mutate("kernel k\n  values 12\n{\n}\n");
    EXPECT_EQ(x.text, y.text);
    EXPECT_EQ(x.what, y.what);
  }
}

}  // namespace
}  // namespace iron::npy_fuzz_test
