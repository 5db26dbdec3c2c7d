/// Vector accesses on the simulator: loads and stores of consecutive elements on tensors and
/// threadgroup memory, extract, and the findings of a vector access out of bounds or misaligned.
#include <gtest/gtest.h>

#include <string>

#include "ir_builder.hpp"
#include "sim_helpers.hpp"

namespace iron::sim_test {
namespace {

using ir::OpKind;
using runtime::Grid;
using Kind = runtime::SimError::Kind;

/// Thread t loads elements [t*lanes, t*lanes + lanes) and stores them back reversed.
ir::Kernel reverse_groups(DType t, std::uint8_t lanes) {
  IrBuilder b("reverse_groups");
  const int x = b.input("x", t);
  const int out = b.output("out", t);
  const auto i = b.op(OpKind::Mul, {b.gid(), b.u32(lanes)});
  const auto v = b.vector_load(x, i, lanes);
  std::vector<ir::ValueId> reversed;
  for (int l = lanes - 1; l >= 0; --l) reversed.push_back(b.extract(v, l));
  b.vector_store(out, i, reversed);
  return b.build();
}

TEST(SimVector, LoadsExtractsAndStoresEveryLaneExactly) {
  const std::pair<DType, std::uint8_t> cases[] = {
      {DType::F32, 4}, {DType::F16, 8}, {DType::BF16, 8}, {DType::U8, 16}, {DType::I32, 2}};
  for (const auto& [t, lanes] : cases) {
    std::vector<double> values;
    for (int e = 0; e < 64 * lanes; ++e) values.push_back(is_float(t) ? 0.25 * e - 3 : e % 100);
    runtime::HostTensor hx = make_tensor(t, values), ho = zeros(t, values.size());
    run(reverse_groups(t, lanes), {&hx, &ho}, Grid::elementwise(64, 32));
    const std::vector<double> got = read_tensor(ho);
    const std::vector<double> in = read_tensor(hx);
    for (std::size_t e = 0; e < got.size(); ++e) {
      const std::size_t first = e / lanes * lanes;
      ASSERT_EQ(got[e], in[first + (lanes - 1 - e % lanes)]) << dtype_name(t) << " element " << e;
    }
  }
}

// Each thread writes two lanes of threadgroup memory; after a barrier, it reads four.
TEST(SimVector, SharedMemoryVectorsWithABarrier) {
  IrBuilder b("shared_vectors");
  b.group_contract();
  const int out = b.output("out", DType::F32);
  const int s = b.shared("smem0", DType::F32, 64);
  const auto tid = b.tid();
  const auto two = b.op(OpKind::Mul, {tid, b.u32(2)});
  const auto f = b.cast(DType::F32, tid);
  b.shared_vector_store(s, two, {f, b.op(OpKind::Neg, {f})});
  b.barrier();
  const auto four = b.op(OpKind::Rem, {b.op(OpKind::Mul, {tid, b.u32(4)}), b.u32(64)});
  const auto v = b.shared_vector_load(s, four, 4);
  b.vector_store(out, b.op(OpKind::Mul, {tid, b.u32(4)}),
                 {b.extract(v, 0), b.extract(v, 1), b.extract(v, 2), b.extract(v, 3)});
  const ir::Kernel k = b.build();
  runtime::HostTensor ho = zeros(DType::F32, 128);
  run(k, {&ho}, Grid::per_row(1, 32));
  const std::vector<double> got = read_tensor(ho);
  // Thread t reads elements 4t..4t+3 (mod 64): those thread 2t and 2t+1 wrote.
  for (std::size_t t = 0; t < 32; ++t) {
    const double a = static_cast<double>((2 * t) % 32), c = static_cast<double>((2 * t + 1) % 32);
    EXPECT_EQ(got[4 * t], a);
    EXPECT_EQ(got[4 * t + 1], -a);
    EXPECT_EQ(got[4 * t + 2], c);
    EXPECT_EQ(got[4 * t + 3], -c);
  }
}

TEST(SimVector, EveryLaneOfASharedAccessIsRaceChecked) {
  IrBuilder b("vector_race");
  b.group_contract();
  const int out = b.output("out", DType::F32);
  const int s = b.shared("smem0", DType::F32, 64);
  const auto tid = b.tid();
  const auto f = b.cast(DType::F32, tid);
  b.at(10);
  b.shared_vector_store(s, b.op(OpKind::Mul, {tid, b.u32(2)}), {f, f});
  b.at(11);
  const auto v = b.shared_vector_load(s, b.op(OpKind::Mul, {tid, b.u32(4)}), 4);
  b.store(out, tid, b.extract(v, 3));
  const ir::Kernel k = b.build();
  runtime::HostTensor ho = zeros(DType::F32, 32);
  const auto e = finding(k, {&ho}, Grid::per_row(1, 32));
  ASSERT_TRUE(e);
  EXPECT_EQ(e->kind(), Kind::SharedRace);
  EXPECT_EQ(std::string(e->what()),
            "vector_race: shared-memory race on 'smem0' at index 2 ('smem0' has 64 elements): "
            "thread 0 (0,0,0) read it after thread 1 (1,0,0) wrote it at "
            "tests/sim/kernels.cpp:10, with no barrier in between, in group (0,0,0) at "
            "tests/sim/kernels.cpp:11");
}

/// out[i] = x[i .. i+3] lane 0, with i = gid * 4 + offset.
ir::Kernel offset_vector_load(std::uint32_t offset) {
  IrBuilder b("vector_oob");
  const int x = b.input("x", DType::F32);
  const int out = b.output("out", DType::F32);
  const auto i = b.op(OpKind::Add, {b.op(OpKind::Mul, {b.gid(), b.u32(4)}), b.u32(offset)});
  b.at(20);
  const auto v = b.vector_load(x, i, 4);
  const auto first = b.extract(v, 0);
  b.store(out, b.gid(), first);
  return b.build();
}

TEST(SimVector, OutOfBoundsWhenAnyLaneIsOutside) {
  runtime::HostTensor hx = zeros(DType::F32, 126), ho = zeros(DType::F32, 32);
  const auto e = finding(offset_vector_load(0), {&hx, &ho}, Grid::per_row(1, 32));
  ASSERT_TRUE(e);
  EXPECT_EQ(e->kind(), Kind::OutOfBounds);
  EXPECT_EQ(std::string(e->what()),
            "vector_oob: out-of-bounds load of 'x' at index 124..127 ('x' has 126 elements) by "
            "thread 31 (31,0,0) in group (0,0,0) at tests/sim/kernels.cpp:20");
  runtime::HostTensor full = zeros(DType::F32, 128);
  EXPECT_FALSE(finding(offset_vector_load(0), {&full, &ho}, Grid::per_row(1, 32)));
}

TEST(SimVector, MisalignedVectorAccessIsReported) {
  runtime::HostTensor hx = zeros(DType::F32, 256), ho = zeros(DType::F32, 32);
  const auto e = finding(offset_vector_load(2), {&hx, &ho}, Grid::per_row(1, 32));
  ASSERT_TRUE(e);
  EXPECT_EQ(e->kind(), Kind::BadArgument);
  EXPECT_EQ(std::string(e->what()),
            "vector_oob: misaligned vector load of 'x' at index 2: a 4-lane access needs an "
            "index that is a multiple of 4, by thread 0 (0,0,0) in group (0,0,0) at "
            "tests/sim/kernels.cpp:20");
}

// Malformed vector IR never runs: the simulator reports the verifier's findings, which name the
// kernel and the op's line.
TEST(SimVector, MalformedVectorIrIsRejected) {
  const ir::Kernel good = offset_vector_load(0);
  runtime::HostTensor hx = zeros(DType::F32, 128), ho = zeros(DType::F32, 32);
  auto expect_bad = [&](const ir::Kernel& k) {
    const auto e = finding(k, {&hx, &ho}, Grid::per_row(1, 32));
    ASSERT_TRUE(e);
    EXPECT_EQ(e->kind(), Kind::BadArgument);
    EXPECT_EQ(std::string(e->what()), verifier_findings(k));
    EXPECT_NE(std::string(e->what()).find("kernel vector_oob: tests/sim/kernels.cpp:20: "),
              std::string::npos)
        << e->what();
  };
  // The body ends with: %5 = load x[%4] : f32x4; %6 = extract %5, 0; %7 = gid; store.
  const std::size_t store = good.body.ops.size() - 1, extract = store - 2, load = store - 3;

  ir::Kernel k = good;
  k.body.ops[extract].ivalue = 4;  // a lane the vector does not have
  expect_bad(k);
  k = good;
  k.body.ops[load].lanes = 3;
  expect_bad(k);
  k = good;
  k.body.ops[store].args[1] = k.body.ops[load].result;  // a vector used as a scalar
  expect_bad(k);
  k = good;
  k.body.ops[extract].args[0] = k.body.ops[load].args[0];  // an extract of a scalar
  expect_bad(k);
  k = good;
  k.body.ops[extract].lanes = 2;
  expect_bad(k);
  k = good;
  k.body.ops[store].lanes = 2;  // one value for two lanes
  expect_bad(k);
}

}  // namespace
}  // namespace iron::sim_test
