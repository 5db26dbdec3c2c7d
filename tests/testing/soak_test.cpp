/// Tests of the seed soak: every case under every seed, failures kept with the seed that
/// reproduces them, the report; and `iron test`'s fixed default seed and --seeds through the CLI.
#include "iron/testing/soak.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <memory>
#include <regex>
#include <set>
#include <string>

namespace iron::testing {
namespace {

const TestCase& registered(const std::string& name) {
  for (const auto& t : registered_tests()) {
    if (t.name == name) return t;
  }
  throw std::logic_error("no registered test " + name);
}

std::vector<std::unique_ptr<runtime::Backend>> sims(std::size_t count) {
  std::vector<std::unique_ptr<runtime::Backend>> backends;
  for (std::size_t i = 0; i < count; ++i) backends.push_back(runtime::make_backend("sim"));
  return backends;
}

TEST(Soak, SeedsCountUpFromTheFirst) {
  EXPECT_EQ(soak_seeds(7, 3), (std::vector<std::uint64_t>{7, 8, 9}));
  EXPECT_EQ(soak_seeds(~std::uint64_t{0}, 2), (std::vector<std::uint64_t>{~std::uint64_t{0}, 0}));
}

TEST(Soak, FindsEverySeedThatFailsAndEachFailsAgainAlone) {
  const std::vector<CaseRef> cases = {
      {&registered("testing_scale.doubles"), DType::F32},
      {&registered("testing_scale.wrong_when_first_input_above_2"), DType::F32}};
  const auto seeds = soak_seeds(100, 40);
  auto backends = sims(2);
  std::size_t progress_calls = 0;
  std::size_t failures_seen = 0;
  const SoakReport report =
      soak(cases, seeds, backends, [&](std::size_t done, std::size_t total, const SoakFailure* f) {
        EXPECT_EQ(done, ++progress_calls);
        EXPECT_EQ(total, 80u);
        failures_seen += f != nullptr;
      });
  EXPECT_EQ(report.runs, 80u);
  EXPECT_EQ(failures_seen, report.failures.size());
  // About one seed in four fails (x[0] uniform in [-4, 4] above 2); 40 seeds find some.
  ASSERT_GE(report.failures.size(), 2u);
  ASSERT_LT(report.failures.size(), 40u);
  auto backend = runtime::make_backend("sim");
  std::set<std::uint64_t> failing;
  std::uint64_t previous = 0;
  for (const SoakFailure& f : report.failures) {
    EXPECT_EQ(f.result.name, "testing_scale.wrong_when_first_input_above_2");
    EXPECT_NE(f.result.message.find("output 'out': 1 of 8 values mismatch"), std::string::npos)
        << f.result.message;
    EXPECT_GT(f.base_seed, previous) << "failures are listed in seed order";
    previous = f.base_seed;
    failing.insert(f.base_seed);
    EXPECT_FALSE(run_test(*cases[1].test, DType::F32, *backend, f.base_seed).passed)
        << "seed " << f.base_seed << " does not reproduce its failure";
  }
  for (const std::uint64_t seed : seeds) {
    if (failing.count(seed) == 0) {
      EXPECT_TRUE(run_test(*cases[1].test, DType::F32, *backend, seed).passed) << seed;
    }
  }
}

TEST(Soak, ReportGroupsFailuresByCaseWithTheCommandThatReproduces) {
  const std::vector<CaseRef> cases = {
      {&registered("testing_scale.wrong_when_first_input_above_2"), DType::F32}};
  auto backends = sims(1);
  SoakReport report = soak(cases, soak_seeds(100, 40), backends);
  ASSERT_GE(report.failures.size(), 2u);
  const std::uint64_t first = report.failures.front().base_seed;
  const std::size_t failed = report.failures.size();
  const std::string text = soak_report_text({{"sim", std::move(report)}}, 1, 40, "sim sanitizer");
  EXPECT_NE(text.find(fmt::format(
                "FAIL testing_scale.wrong_when_first_input_above_2 [f32] on sim: {} of 40 seeds "
                "failed: {}, ",
                failed, first)),
            std::string::npos)
      << text;
  EXPECT_NE(text.find(fmt::format("iron test --backend sim --filter "
                                  "'testing_scale.wrong_when_first_input_above_2' --dtype f32 "
                                  "--seed {} reproduces it:\n  output 'out': 1 of 8",
                                  first)),
            std::string::npos)
      << text;
  EXPECT_NE(text.find(fmt::format("40 runs (1 cases x 40 seeds): {} passed, {} failed (sim "
                                  "sanitizer)\n",
                                  40 - failed, failed)),
            std::string::npos)
      << text;
}

/// Runs the iron CLI with `args`; returns its exit status and puts its output in `out`.
int run_cli(const std::string& args, std::string& out) {
  const std::string cmd = std::string(IRON_CLI) + " " + args + " 2>&1";
  FILE* pipe = popen(cmd.c_str(), "r");
  if (pipe == nullptr) return -1;
  std::array<char, 4096> buffer{};
  out.clear();
  while (std::fgets(buffer.data(), buffer.size(), pipe) != nullptr) out += buffer.data();
  const int status = pclose(pipe);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/// The output with every time and progress counter blanked ("[ 3/27]" follows the order in which
/// cases finish, which threads decide), so two runs can be compared.
std::string without_times(const std::string& out) {
  const std::string untimed =
      std::regex_replace(out, std::regex(R"( *[0-9]+\.[0-9]+( ms)?)"), " T");
  return std::regex_replace(untimed, std::regex(R"(\[ *[0-9]+/[0-9]+\] )"), "");
}

TEST(IronTestCommand, DefaultSeedIsFixedSoEveryRunIsTheSame) {
  std::string first;
  std::string second;
  const std::string args = "test --backend sim --filter 'iron_(softmax|prefix_sum)' -j 2";
  ASSERT_EQ(run_cli(args, first), 0) << first;
  ASSERT_EQ(run_cli(args, second), 0) << second;
  EXPECT_NE(first.find("base seed 1 (the default)"), std::string::npos) << first;
  EXPECT_NE(first.find(" passed, 0 failed (sim sanitizer)\n"), std::string::npos) << first;
  // The same seeds, the same cases, the same statuses: only the times differ.
  std::string a = without_times(first);
  std::string b = without_times(second);
  const auto sorted_lines = [](const std::string& text) {
    std::multiset<std::string> lines;
    std::size_t start = 0;
    for (std::size_t end; (end = text.find('\n', start)) != std::string::npos; start = end + 1) {
      lines.insert(text.substr(start, end - start));
    }
    return lines;
  };
  EXPECT_EQ(sorted_lines(a), sorted_lines(b));
}

TEST(IronTestCommand, TheCtestEntryRunsUnderAFixedSeed) {
  std::ifstream in(std::string(IRON_SOURCE_DIR) + "/tests/CMakeLists.txt");
  std::string line;
  std::string entry;
  while (std::getline(in, line)) {
    if (line.find("NAME iron_test_sim ") != std::string::npos) entry = line;
  }
  ASSERT_FALSE(entry.empty()) << "tests/CMakeLists.txt has no iron_test_sim entry";
  EXPECT_NE(entry.find("--seed 1"), std::string::npos) << entry;
  EXPECT_EQ(entry.find("--seeds"), std::string::npos) << entry;
}

TEST(IronTestCommand, SeedsRunsASoakAndRepeatsFromTheFirstSeed) {
  std::string out;
  ASSERT_EQ(
      run_cli("test --backend sim --filter 'iron_scale\\.' --dtype f32 --seed 5 --seeds 3", out), 0)
      << out;
  EXPECT_NE(out.find("soak of 2 cases x 3 seeds on backend sim"), std::string::npos) << out;
  EXPECT_NE(out.find("--seed 5 --seeds 3 reproduces this soak"), std::string::npos) << out;
  EXPECT_NE(out.find("soak: 6/6 runs (100%), 0 failed"), std::string::npos) << out;
  EXPECT_NE(out.find("6 runs (2 cases x 3 seeds): 6 passed, 0 failed (sim sanitizer)"),
            std::string::npos)
      << out;
}

TEST(IronTestCommand, SeedsMustBeAPositiveCount) {
  std::string out;
  EXPECT_EQ(run_cli("test --backend sim --seeds 0", out), 2) << out;
  EXPECT_NE(out.find("--seeds"), std::string::npos) << out;
  EXPECT_EQ(run_cli("test --backend sim --seeds many", out), 2) << out;
}

}  // namespace
}  // namespace iron::testing
