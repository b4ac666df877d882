// The timing model: sanity of its shape, not of its absolute numbers (it is a model).
#include <vector>

#include "ascendc_cpu/launch.h"
#include "kernel_operator.h"
#include "test_framework.h"

namespace {

using namespace AscendC;
using ascendc_cpu::GmKind;
using ascendc_cpu::Order;

struct CopyTiling {
  uint32_t per_block;  // floats
  uint32_t tile;       // floats per DMA
  uint32_t vec_ops;    // vector ops per tile
};

void CopyKernel(GM_ADDR xp, GM_ADDR zp, GM_ADDR tp) {
  const CopyTiling t = *reinterpret_cast<__gm__ CopyTiling*>(tp);
  GlobalTensor<float> x, z;
  x.SetGlobalBuffer((__gm__ float*)xp + GetBlockIdx() * t.per_block);
  z.SetGlobalBuffer((__gm__ float*)zp + GetBlockIdx() * t.per_block);
  TPipe pipe;
  TQue<TPosition::VECIN, 2> in;
  TQue<TPosition::VECOUT, 2> out;
  pipe.InitBuffer(in, 2, t.tile * sizeof(float));
  pipe.InitBuffer(out, 2, t.tile * sizeof(float));
  for (uint32_t off = 0; off < t.per_block; off += t.tile) {
    LocalTensor<float> a = in.AllocTensor<float>();
    DataCopy(a, x[off], t.tile);
    in.EnQue(a);
    a = in.DeQue<float>();
    LocalTensor<float> b = out.AllocTensor<float>();
    Adds(b, a, 1.f, t.tile);
    for (uint32_t i = 1; i < t.vec_ops; ++i) Muls(b, b, 1.0001f, t.tile);
    in.FreeTensor(a);
    out.EnQue(b);
    b = out.DeQue<float>();
    DataCopy(z[off], b, t.tile);
    out.FreeTensor(b);
  }
}

ascendc_cpu::LaunchReport Run(int32_t blocks, uint32_t per_block, uint32_t tile, uint32_t vec_ops) {
  CopyTiling t{per_block, tile, vec_ops};
  std::vector<float> x(static_cast<size_t>(blocks) * per_block, 1.f), z(x.size(), 0.f);
  return ascendc_cpu::Launch({"copy", blocks, 196608, Order::kInOrder},
                             {{x.data(), x.size() * 4, "x", GmKind::kInput},
                              {z.data(), z.size() * 4, "z", GmKind::kOutput},
                              {&t, sizeof t, "tiling", GmKind::kInput}},
                             CopyKernel, x.data(), z.data(), &t);
}

TEST(copy_kernel_is_gm_bound_and_scales_with_bytes) {
  const auto small = Run(48, 64 * 1024, 8192, 1);
  const auto large = Run(48, 128 * 1024, 8192, 1);
  std::printf("    copy 12 MiB: %.2f us (%s), gm bound %.2f us; 24 MiB: %.2f us (%s)\n", small.modelled_us,
              small.bound.c_str(), small.gm_bound_us, large.modelled_us, large.bound.c_str());
  CHECK_EQ(small.bound, std::string("gm"));
  CHECK_EQ(large.bound, std::string("gm"));
  CHECK_NEAR(large.modelled_us / small.modelled_us, 2.0, 0.2);
  CHECK_NEAR(small.gm_bound_us, 2.0 * 48 * 64 * 1024 * 4 / 1.6e12 * 1e6, 1e-6);  // read + write
  CHECK(small.modelled_us >= small.gm_bound_us);
  CHECK(small.pipe_busy_us.count("MTE2") == 1 && small.pipe_busy_us.count("MTE3") == 1);
  CHECK(small.pipe_busy_max_us.at("MTE2") * 48 >= small.pipe_busy_us.at("MTE2") * 0.99);
}

TEST(vector_heavy_kernel_is_vector_bound) {
  const auto r = Run(1, 16 * 1024, 4096, 64);
  std::printf("    vector-heavy: %.2f us (%s), V busy %.2f us, MTE2 busy %.2f us\n", r.modelled_us, r.bound.c_str(),
              r.pipe_busy_us.at("V"), r.pipe_busy_us.at("MTE2"));
  CHECK_EQ(r.bound, std::string("vector"));
  CHECK(r.pipe_busy_us.at("V") > 5 * r.pipe_busy_us.at("MTE2"));
}

TEST(double_buffering_overlaps_pipes) {
  // One block, moderate vector work: with asynchronous pipes the kernel takes less than the sum
  // of its pipes' busy times.
  const auto r = Run(1, 64 * 1024, 4096, 8);
  double sum = 0;
  for (const auto& kv : r.pipe_busy_us) sum += kv.second;
  std::printf("    overlap: modelled %.2f us, sum of pipe busy %.2f us\n", r.modelled_us, sum);
  CHECK(r.modelled_us < 0.9 * sum);
  CHECK_EQ(r.blocks.size(), 1u);
  CHECK_NEAR(r.blocks[0].modelled_us, r.modelled_us, 1e-9);
}

}  // namespace

namespace {

TEST(many_tiny_dmas_are_latency_bound) {
  const auto r = Run(1, 2048, 8, 1);  // 256 DMAs of 32 bytes each way
  std::printf("    tiny DMAs: %.2f us (%s), MTE2 busy %.2f us\n", r.modelled_us, r.bound.c_str(), r.pipe_busy_us.at("MTE2"));
  CHECK_EQ(r.bound, std::string("latency"));
  const auto big = Run(1, 2048, 2048, 1);  // the same bytes in one DMA each way
  CHECK(big.modelled_us * 20 < r.modelled_us);
}

}  // namespace
