/// The peer operations listed at build time from bench/peer_ops.py, and the dry-run check that a
/// bench names one of them.
#include "iron/bench/peer_ops.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "iron/bench/runner.hpp"
#include "iron/bench/setup.hpp"

namespace iron::bench {
namespace {

bool known(std::string_view op) {
  return std::find(peer_ops().begin(), peer_ops().end(), op) != peer_ops().end();
}

TEST(PeerOps, TheListComesFromPeerOpsPy) {
  EXPECT_TRUE(known("copy"));
  EXPECT_TRUE(known("softmax"));
  EXPECT_TRUE(known("scatter_rows"));  // a key whose entry spans two lines
  EXPECT_FALSE(known("CASES"));
  EXPECT_EQ(unknown_peer_op("softmax"), "");
}

TEST(PeerOps, AnUnknownOperationIsNamedWithTheKnownOnes) {
  const std::string why = unknown_peer_op("sofmax");
  EXPECT_EQ(why.rfind("peer case 'sofmax' is not in bench/peer_ops.py's CASES (add it there; it "
                      "has: copy arange scale ",
                      0),
            0u)
      << why;
}

TEST(PeerOps, DryRunRefusesABenchWhosePeerCaseIsUnknown) {
  const BenchCase bench{"testing_scale",
                        "testing_scale.case",
                        {DType::F32},
                        [](DType dt) {
                          return BenchSetup("testing_scale", dt)
                              .random("inp", 1024)
                              .output("out", 1024)
                              .constant("alpha", 2.0)
                              .constant("n", 1024)
                              .grid_1d(1024, 256)
                              .bytes_moved(8192)
                              .peer("scale_twice", {{"n", 1024}});
                        },
                        {}};
  EXPECT_EQ(check_bench_setup(bench, DType::F32), unknown_peer_op("scale_twice"));
}

}  // namespace
}  // namespace iron::bench
