// Philox 4×32-10 (kernels/primitives/philox.hpp) against the known answers published with the
// Random123 library of Salmon et al. (its kat_vectors file: philox4x32, 10 rounds, counter and
// key → four words): the host twin, and the DSL primitive traced into a kernel and run on the
// simulator.
#include "../../kernels/primitives/philox.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <vector>

#include "../sim/sim_helpers.hpp"
#include "iron/iron.hpp"

namespace {
using namespace iron::dsl;
using iron::DType;

struct KnownAnswer {
  std::array<std::uint32_t, 4> counter;
  std::array<std::uint32_t, 2> key;
  std::array<std::uint32_t, 4> words;
};

const std::vector<KnownAnswer>& known_answers() {
  static const std::vector<KnownAnswer> answers = {
      {{0, 0, 0, 0}, {0, 0}, {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
      {{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
       {0xffffffff, 0xffffffff},
       {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
      {{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
       {0xa4093822, 0x299f31d0},
       {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
  };
  return answers;
}

// One thread per counter: words[4i .. 4i + 4) = Philox(counters[4i ..], keys[2i ..]).
IRON_KERNEL(philox_words, (Tensor<u32> counters, Tensor<u32> keys, Out<u32> words)) {
  auto i = thread_id<0>();
  const auto out =
      iron::kernels::philox4x32_10({load(counters[4u * i]), load(counters[4u * i + 1u]),
                                    load(counters[4u * i + 2u]), load(counters[4u * i + 3u])},
                                   {load(keys[2u * i]), load(keys[2u * i + 1u])});
  for (std::uint32_t e = 0; e < 4; ++e) store(words[4u * i + e], out[e]);
}

TEST(Philox, HostTwinGivesTheKnownAnswers) {
  for (const KnownAnswer& a : known_answers()) {
    EXPECT_EQ(iron::kernels::philox4x32_10_host(a.counter, a.key), a.words);
  }
}

TEST(Philox, DslPrimitiveGivesTheKnownAnswersOnTheSimulator) {
  std::vector<double> counters, keys;
  for (const KnownAnswer& a : known_answers()) {
    counters.insert(counters.end(), a.counter.begin(), a.counter.end());
    keys.insert(keys.end(), a.key.begin(), a.key.end());
  }
  const auto threads = static_cast<std::uint32_t>(known_answers().size());
  const iron::ir::Kernel k = kernel_ir_for("philox_words", DType::F32);
  auto counter_tensor = iron::sim_test::make_tensor(DType::U32, counters);
  auto key_tensor = iron::sim_test::make_tensor(DType::U32, keys);
  auto words = iron::sim_test::zeros(DType::U32, 4 * threads);
  iron::runtime::Grid grid;
  grid.groups = {1, 1, 1};
  grid.group_size = {threads, 1, 1};
  iron::sim_test::run(k, {&counter_tensor, &key_tensor, &words}, grid);
  const std::vector<double> got = iron::sim_test::read_tensor(words);
  for (std::size_t i = 0; i < known_answers().size(); ++i) {
    for (std::size_t e = 0; e < 4; ++e) {
      EXPECT_EQ(static_cast<std::uint32_t>(got[4 * i + e]), known_answers()[i].words[e])
          << "answer " << i << " word " << e;
    }
  }
}

}  // namespace
