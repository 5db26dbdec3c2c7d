/// Deterministic fuzzing for the unit tests: seeded mutations of real inputs, and a child process
/// under a memory limit that runs them, so a crash, a hang or a runaway allocation fails the test
/// with the mutation that caused it instead of taking the test binary down.
#pragma once

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <functional>
#include <new>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace iron::fuzz {

/// One mutated input and how it was made ("flip bit 3 of byte 120").
struct Mutant {
  std::string text;
  std::string what;
};

/// Seeded mutations of byte strings: bit flips, odd bytes, truncations, deleted, duplicated and
/// swapped lines, numbers replaced by huge or negative ones, one line or a few bytes repeated
/// thousands of times, a block-opening line or a bracket repeated up to 50,000 deep (nesting),
/// spliced-in pieces, and stacks of two or three of these. No mutation grows its input by more
/// than 1 MiB.
class Mutator {
 public:
  explicit Mutator(std::uint64_t seed) : rng_(seed) {}

  Mutant mutate(std::string_view input) {
    Mutant m{std::string(input), ""};
    const int layers = below(4) == 0 ? 2 + static_cast<int>(below(2)) : 1;
    for (int i = 0; i < layers; ++i) {
      m.what += (i == 0 ? "" : ", then ") + once(m.text);
    }
    return m;
  }

 private:
  std::uint64_t below(std::uint64_t n) { return n == 0 ? 0 : rng_() % n; }

  /// `times`, or fewer so that one repetition adds at most kMaxGrowth bytes: stacked mutations
  /// must not grow an input without bound.
  static std::size_t repeats(std::size_t times, std::size_t piece) {
    constexpr std::size_t kMaxGrowth = std::size_t{1} << 20;
    return std::max<std::size_t>(1, std::min(times, kMaxGrowth / std::max<std::size_t>(piece, 1)));
  }

  /// Byte offsets where each line starts, plus the end.
  static std::vector<std::size_t> line_starts(const std::string& s) {
    std::vector<std::size_t> starts = {0};
    for (std::size_t i = 0; i < s.size(); ++i) {
      if (s[i] == '\n') starts.push_back(i + 1);
    }
    if (starts.back() != s.size()) starts.push_back(s.size());
    return starts;
  }

  std::string once(std::string& s) {
    static constexpr std::array<char, 20> kOdd = {
        '{', '}', '%', '@', ':',  ',', '[',  ']',  '=', '-',
        '0', '9', '(', ')', '\'', ' ', '\n', '\0', '#', static_cast<char>(0xFF)};
    static constexpr std::array<std::string_view, 12> kNumbers = {"0",
                                                                  "1",
                                                                  "255",
                                                                  "65536",
                                                                  "4294967295",
                                                                  "4294967296",
                                                                  "2147483648",
                                                                  "-1",
                                                                  "-4294967296",
                                                                  "18446744073709551615",
                                                                  "18446744073709551616",
                                                                  "99999999999999999999999999999"};
    if (s.empty()) s = "\n";
    const std::size_t at = below(s.size());
    switch (below(11)) {
      case 0: {
        const int bit = static_cast<int>(below(8));
        s[at] = static_cast<char>(s[at] ^ (1 << bit));
        return fmt::format("flip bit {} of byte {}", bit, at);
      }
      case 1: {
        s[at] = kOdd[below(kOdd.size())];
        return fmt::format("set byte {} to 0x{:02x}", at, static_cast<unsigned char>(s[at]));
      }
      case 2:
        s.resize(at);
        return fmt::format("truncate to {} bytes", at);
      case 3:
      case 4:
      case 5: {
        const auto starts = line_starts(s);
        const std::size_t lines = starts.size() - 1;
        const std::size_t line = below(lines);
        const std::string text = s.substr(starts[line], starts[line + 1] - starts[line]);
        const int op = static_cast<int>(below(3));
        if (op == 0) {
          s.erase(starts[line], text.size());
          return fmt::format("delete line {}", line + 1);
        }
        if (op == 1) {
          s.insert(starts[below(lines + 1)], text);
          return fmt::format("copy line {} elsewhere", line + 1);
        }
        static constexpr std::array<std::size_t, 4> kRepeats = {2, 300, 3000, 20000};
        const std::size_t times = repeats(kRepeats[below(kRepeats.size())], text.size());
        std::string repeated;
        repeated.reserve(text.size() * times);
        for (std::size_t i = 0; i < times; ++i) repeated += text;
        s.insert(starts[line], repeated);
        return fmt::format("repeat line {} {} times", line + 1, times);
      }
      case 6: {
        const auto digit = [&](std::size_t i) { return s[i] >= '0' && s[i] <= '9'; };
        std::size_t begin = at;
        while (begin < s.size() && !digit(begin)) ++begin;
        if (begin == s.size()) return once(s);
        std::size_t end = begin;
        while (end < s.size() && digit(end)) ++end;
        const std::string_view number = kNumbers[below(kNumbers.size())];
        s.replace(begin, end - begin, number);
        return fmt::format("replace the number at byte {} with {}", begin, number);
      }
      case 7: {
        const std::size_t length = 1 + below(std::min<std::size_t>(8, s.size() - at));
        static constexpr std::array<std::size_t, 3> kRepeats = {100, 5000, 50000};
        const std::size_t times = repeats(kRepeats[below(kRepeats.size())], length);
        const std::string piece = s.substr(at, length);
        std::string repeated;
        repeated.reserve(piece.size() * times);
        for (std::size_t i = 0; i < times; ++i) repeated += piece;
        s.insert(at, repeated);
        return fmt::format("repeat the {} bytes at {} {} times", length, at, times);
      }
      case 8: {
        const std::size_t from = below(s.size());
        const std::size_t length = below(std::min<std::size_t>(64, s.size() - from) + 1);
        const std::string piece = s.substr(from, length);
        s.insert(at, piece);
        return fmt::format("copy {} bytes from {} to {}", length, from, at);
      }
      case 9: {
        // Deep nesting: a line that opens a block ("for … {", "if %c {") repeated, or an
        // opening bracket repeated where the input has no such line.
        const auto starts = line_starts(s);
        std::vector<std::size_t> openers;
        for (std::size_t i = 0; i + 1 < starts.size(); ++i) {
          const std::string_view line(s.data() + starts[i], starts[i + 1] - starts[i]);
          if (line.find('{') != std::string_view::npos &&
              line.find('}') == std::string_view::npos) {
            openers.push_back(i);
          }
        }
        static constexpr std::array<std::size_t, 3> kDepths = {300, 5000, 50000};
        const std::size_t depth = kDepths[below(kDepths.size())];
        if (openers.empty()) {
          const char bracket = "([{"[below(3)];
          s.insert(at, repeats(depth, 1), bracket);
          return fmt::format("insert {} '{}' at byte {}", repeats(depth, 1), bracket, at);
        }
        const std::size_t line = openers[below(openers.size())];
        const std::string text = s.substr(starts[line], starts[line + 1] - starts[line]);
        const std::size_t times = repeats(depth, text.size());
        std::string repeated;
        repeated.reserve(text.size() * times);
        for (std::size_t i = 0; i < times; ++i) repeated += text;
        s.insert(starts[line], repeated);
        return fmt::format("nest line {} {} deep", line + 1, times);
      }
      default: {
        const auto starts = line_starts(s);
        const std::size_t lines = starts.size() - 1;
        const std::size_t a = below(lines), b = below(lines);
        if (a == b) return once(s);
        const std::size_t lo = std::min(a, b), hi = std::max(a, b);
        const std::string first = s.substr(starts[lo], starts[lo + 1] - starts[lo]);
        const std::string second = s.substr(starts[hi], starts[hi + 1] - starts[hi]);
        s.replace(starts[hi], second.size(), first);
        s.replace(starts[lo], first.size(), second);
        return fmt::format("swap lines {} and {}", lo + 1, hi + 1);
      }
    }
  }

  std::mt19937_64 rng_;
};

/// Where a fuzzing child records the case it is running, in memory the parent can read after
/// the child died.
class Progress {
 public:
  void at(std::string_view what) {
    const std::size_t n = std::min(what.size(), text_.size() - 1);
    std::memcpy(text_.data(), what.data(), n);
    text_[n] = '\0';
  }
  std::string last() const { return text_.data(); }

 private:
  std::array<char, 4096> text_{};
};

/// The process's current address-space size, from /proc/self/statm.
inline std::uint64_t address_space_bytes() {
  std::ifstream statm("/proc/self/statm");
  std::uint64_t pages = 0;
  statm >> pages;
  return pages * static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE));
}

/// Runs `body` in a child process allowed `limit_bytes` of address space beyond what it starts
/// with, and at most `seconds` of CPU time. `body` returns "" when every case behaved, else a
/// description of the first that did not; it calls progress.at() before each case. Returns ""
/// or what went wrong: the body's description, or the signal that killed the child (a crash,
/// the CPU limit) with the case it was running.
inline std::string run_limited(std::uint64_t limit_bytes, int seconds,
                               const std::function<std::string(Progress&)>& body) {
  void* shared = mmap(nullptr, sizeof(Progress) + 4096, PROT_READ | PROT_WRITE,
                      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (shared == MAP_FAILED) return "mmap failed";
  auto* progress = new (shared) Progress();
  char* message = static_cast<char*>(shared) + sizeof(Progress);
  std::fflush(nullptr);
  const pid_t child = fork();
  if (child < 0) return "fork failed";
  if (child == 0) {
    // One reading for both bounds: a second one can be larger, and a soft limit above the hard
    // one makes setrlimit fail, leaving the child unlimited.
    const std::uint64_t allowed = address_space_bytes() + limit_bytes;
    const rlimit memory{allowed, allowed};
    const rlimit cpu{static_cast<rlim_t>(seconds), static_cast<rlim_t>(seconds)};
    const rlimit no_core{0, 0};
    setrlimit(RLIMIT_AS, &memory);
    setrlimit(RLIMIT_CPU, &cpu);
    setrlimit(RLIMIT_CORE, &no_core);
    std::string result;
    try {
      result = body(*progress);
    } catch (const std::exception& e) {
      result = fmt::format("{}: threw {}", progress->last(), e.what());
    }
    const std::size_t n = std::min<std::size_t>(result.size(), 4095);
    std::memcpy(message, result.data(), n);
    message[n] = '\0';
    _exit(result.empty() ? 0 : 1);
  }
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  std::string out;
  if (WIFSIGNALED(status)) {
    out = fmt::format("killed by signal {} ({}) while running: {}", WTERMSIG(status),
                      strsignal(WTERMSIG(status)), progress->last());
  } else if (WEXITSTATUS(status) != 0) {
    out = message;
  }
  munmap(shared, sizeof(Progress) + 4096);
  return out;
}

}  // namespace iron::fuzz
