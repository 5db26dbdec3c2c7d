/// Tile copies on the simulator: the box lands with zeros outside the matrix, and each thread's
/// share is checked like any copy_async.
#include <gtest/gtest.h>

#include <string>

#include "../sim/sim_helpers.hpp"
#include "iron/iron.hpp"

namespace {
using namespace iron::dsl;
using iron::DType;
namespace ir = iron::ir;
namespace sim_test = iron::sim_test;

// out[r·8 + c] = the 4×8 box of x (h rows of w) at (row0, col0), one group of 32 threads.
IRON_KERNEL(tile_box, (Tensor<T> x, Out<T> out, Constexpr<u32> h, Constexpr<u32> w,
                       Constexpr<u32> row0, Constexpr<u32> col0)) {
  dispatch(tiled, {exactly(32)});
  auto tile = shared<T>(32);
  copy_tile_async<4, 8>(tile, Expr<u32>(0u), x, Expr<u32>(0u), h, w, row0, col0);
  async_commit();
  async_wait(0);
  barrier();
  auto t = thread_id<0>();
  store(out[t], load(tile[t]));
}

struct BoxRun {
  std::optional<iron::runtime::SimError> finding;
  std::vector<double> out;
};

BoxRun run_box(std::uint32_t h, std::uint32_t w, std::uint32_t row0, std::uint32_t col0) {
  const ir::Kernel k = kernel_ir_for("tile_box", DType::F16);
  std::vector<double> values(std::size_t{h} * w);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<double>(i + 1);
  auto x = sim_test::make_tensor(DType::F16, values);
  auto out = sim_test::zeros(DType::F16, 32);
  BoxRun r;
  r.finding =
      sim_test::finding(k,
                        {&x, &out, sim_test::scalar(DType::U32, h), sim_test::scalar(DType::U32, w),
                         sim_test::scalar(DType::U32, row0), sim_test::scalar(DType::U32, col0)},
                        {{1, 1, 1}, {32, 1, 1}});
  r.out = sim_test::read_tensor(out);
  return r;
}

TEST(TileCopies, TheBoxLandsWithZerosOutsideTheMatrix) {
  const BoxRun r = run_box(6, 16, 4, 8);  // rows 4 and 5 inside, 6 and 7 past the matrix
  ASSERT_FALSE(r.finding.has_value()) << r.finding->what();
  for (std::uint32_t row = 0; row < 4; ++row) {
    for (std::uint32_t c = 0; c < 8; ++c) {
      const double want = 4 + row < 6 ? static_cast<double>((4 + row) * 16 + 8 + c + 1) : 0.0;
      EXPECT_EQ(r.out[row * 8 + c], want) << "row " << row << " column " << c;
    }
  }
}

TEST(TileCopies, AWidthOffTheSixteenBytePiecesIsReported) {
  const BoxRun r = run_box(8, 12, 0, 0);  // row 1 starts 24 bytes in
  ASSERT_TRUE(r.finding.has_value());
  EXPECT_NE(std::string(r.finding->what()).find("tile_box"), std::string::npos)
      << r.finding->what();
}

}  // namespace
