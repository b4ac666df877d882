// The documented-style element-wise add kernel passes with and without tails, in order and
// shuffled, and its counters are exactly the traffic it must move.
#include <random>
#include <vector>

#include "ascendc_cpu/launch.h"
#include "kernels/add_kernel.h"
#include "test_framework.h"

namespace {

using ascendc_cpu::GmKind;

constexpr int64_t kUb = 196608;  // Ascend910B2 preset
constexpr uint32_t kCores = 48;

struct Run {
  std::vector<float> z;
  ascendc_cpu::LaunchReport report;
  AddTiling tiling;
  uint32_t blocks;
};

Run RunAdd(uint32_t n, ascendc_cpu::Order order, uint32_t max_cores = kCores) {
  std::mt19937 rng(n);
  std::uniform_real_distribution<float> dist(-10.f, 10.f);
  std::vector<float> x(n), y(n);
  for (uint32_t i = 0; i < n; ++i) {
    x[i] = dist(rng);
    y[i] = dist(rng);
  }
  Run r;
  r.z.assign(n, -1.f);
  r.blocks = AddTilingFor(n, sizeof(float), max_cores, kUb, &r.tiling);
  r.report = ascendc_cpu::Launch(
      {"add_custom_float", static_cast<int32_t>(r.blocks), kUb, order, 7},
      {{x.data(), n * 4ull, "x", GmKind::kInput},
       {y.data(), n * 4ull, "y", GmKind::kInput},
       {r.z.data(), n * 4ull, "z", GmKind::kOutput},
       {&r.tiling, sizeof(AddTiling), "tiling", GmKind::kInput}},
      add_custom_float, x.data(), y.data(), r.z.data(), &r.tiling);
  for (uint32_t i = 0; i < n; ++i) {
    if (r.z[i] != x[i] + y[i]) emu_test::Fail(__FILE__, __LINE__, "wrong sum at " + std::to_string(i));
  }
  return r;
}

// Transfers one block makes: per tile one DMA per input and one for the output.
uint64_t TilesOf(uint32_t len, uint32_t tile) { return len / tile + (len % tile ? 1 : 0); }

void CheckCounters(const Run& r, uint32_t n) {
  const auto& c = r.report.totals;
  CHECK_EQ(c.gm_read_bytes, 2ull * n * sizeof(float));
  CHECK_EQ(c.gm_write_bytes, 1ull * n * sizeof(float));
  CHECK_EQ(c.gm_scalar_reads, 0u);
  uint64_t tiles = 0;
  for (uint32_t b = 0; b < r.blocks; ++b) {
    const uint32_t start = b * r.tiling.per_core;
    const uint32_t len = std::min(n, start + r.tiling.per_core) - start;
    tiles += TilesOf(len, r.tiling.tile);
    const auto& bc = r.report.blocks[b].counters;
    CHECK_EQ(bc.gm_read_bytes, 2ull * len * sizeof(float));
    CHECK_EQ(r.report.blocks[b].ub_high_water, 6ull * ((r.tiling.tile * 4 + 31) / 32 * 32));
  }
  CHECK_EQ(c.gm_to_local.transfers, 2 * tiles);
  CHECK_EQ(c.local_to_gm.transfers, tiles);
  CHECK_EQ(c.gm_to_local.bytes, 2ull * n * sizeof(float));
  CHECK_EQ(c.local_to_gm.bytes, 1ull * n * sizeof(float));
  CHECK_EQ(c.vector_ops, tiles);
  CHECK_EQ(c.local_to_local.transfers, 0u);
}

TEST(add_without_tail_in_order) {
  const uint32_t n = 48 * 2048;
  const Run r = RunAdd(n, ascendc_cpu::Order::kInOrder);
  CHECK_EQ(r.blocks, 48u);
  CHECK_EQ(r.report.orders.size(), 1u);
  CheckCounters(r, n);
  // 2048 floats per block in one tile: exactly 2 reads and 1 write of 8192 bytes each.
  CHECK_EQ(r.report.totals.gm_to_local.sizes.at(8192), 96u);
  CHECK_EQ(r.report.totals.local_to_gm.sizes.at(8192), 48u);
}

TEST(add_with_tail_both_orders) {
  const uint32_t n = 48 * 2048 * 3 + 13;  // several tiles per block, a block tail and a 13-element tail
  const Run r = RunAdd(n, ascendc_cpu::Order::kBoth);
  CHECK_EQ(r.report.orders.size(), 2u);
  CHECK(r.report.orders[1] != r.report.orders[0]);
  CheckCounters(r, n);
}

TEST(add_small_sizes_shuffled) {
  for (uint32_t n : {1u, 7u, 8u, 9u, 63u, 64u, 100u, 1000u, 4097u}) {
    const Run r = RunAdd(n, ascendc_cpu::Order::kShuffled, 8);
    CheckCounters(r, n);
  }
}

TEST(add_half_with_tail) {
  const uint32_t n = 8 * 1000 + 5;
  std::vector<half> x(n), y(n), z(n);
  for (uint32_t i = 0; i < n; ++i) {
    x[i] = static_cast<half>(static_cast<float>(i % 97) * 0.25f);
    y[i] = static_cast<half>(1.5f);
  }
  AddTiling t;
  const uint32_t blocks = AddTilingFor(n, 2, 8, kUb, &t);
  const auto rep = ascendc_cpu::Launch({"add_custom_half", static_cast<int32_t>(blocks), kUb},
                                       {{x.data(), n * 2ull, "x", GmKind::kInput},
                                        {y.data(), n * 2ull, "y", GmKind::kInput},
                                        {z.data(), n * 2ull, "z", GmKind::kOutput},
                                        {&t, sizeof t, "tiling", GmKind::kInput}},
                                       add_custom_half, x.data(), y.data(), z.data(), &t);
  for (uint32_t i = 0; i < n; ++i) CHECK_EQ(static_cast<float>(z[i]), static_cast<float>(x[i]) + 1.5f);
  CHECK_EQ(rep.totals.gm_write_bytes, n * 2ull);
}

TEST(shuffled_order_is_seeded_and_never_identity) {
  CHECK(ascendc_cpu::ShuffledOrder(5, 1) == ascendc_cpu::ShuffledOrder(5, 1));
  for (uint64_t seed = 0; seed < 20; ++seed) {
    const auto o = ascendc_cpu::ShuffledOrder(2, seed);
    CHECK(o[0] == 1 && o[1] == 0);
  }
}

}  // namespace
