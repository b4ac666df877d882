// The cube path on a lightning-indexer-shaped tile: scores = ReLU(q . k^T), q [M, D], k [N, D]
// half, scores float, through GM -> A1/B1 (Nd2Nz) -> A2/B2 (LoadData) -> CO1 (Mmad) -> GM
// (Fixpipe with ReLU).
#include <cmath>
#include <random>
#include <vector>

#include "ascendc_cpu/launch.h"
#include "kernel_operator.h"
#include "test_framework.h"

namespace {

using namespace AscendC;
using ascendc_cpu::GmKind;

struct QkTiling {
  uint32_t m;  // query rows per block (multiple of 16)
  uint32_t n;  // keys (multiple of 16)
  uint32_t d;  // head dim (multiple of 16)
  uint32_t skip_b_load;  // 1: a deliberately broken kernel
};

// q: [blocks * m, d] half, k: [n, d] half, s: [blocks * m, n] float
void QkRelu(GM_ADDR q, GM_ADDR k, GM_ADDR s, GM_ADDR tiling) {
  const QkTiling t = *reinterpret_cast<__gm__ QkTiling*>(tiling);
  const uint32_t row0 = t.m * static_cast<uint32_t>(GetBlockIdx());
  GlobalTensor<half> qg, kg;
  GlobalTensor<float> sg;
  qg.SetGlobalBuffer((__gm__ half*)q + uint64_t{row0} * t.d);
  kg.SetGlobalBuffer((__gm__ half*)k);
  sg.SetGlobalBuffer((__gm__ float*)s + uint64_t{row0} * t.n);

  TPipe pipe;
  TQue<TPosition::A1, 1> qa1;
  TQue<TPosition::B1, 1> kb1;
  TQue<TPosition::A2, 1> qa2;
  TQue<TPosition::B2, 1> kb2;
  TQue<TPosition::CO1, 1> co1;
  pipe.InitBuffer(qa1, 1, t.m * t.d * sizeof(half));
  pipe.InitBuffer(kb1, 1, t.n * t.d * sizeof(half));
  pipe.InitBuffer(qa2, 1, t.m * t.d * sizeof(half));
  pipe.InitBuffer(kb2, 1, t.n * t.d * sizeof(half));
  pipe.InitBuffer(co1, 1, t.m * t.n * sizeof(float));

  // GM (ND) -> L1 (NZ): column block c of 16 values sits c * rows * 32 B in.
  LocalTensor<half> a1 = qa1.AllocTensor<half>();
  DataCopy(a1, qg, Nd2NzParams(1, t.m, t.d, 0, t.d, t.m, 1, 0));
  LocalTensor<half> b1 = kb1.AllocTensor<half>();
  DataCopy(b1, kg, Nd2NzParams(1, t.n, t.d, 0, t.d, t.n, 1, 0));
  qa1.EnQue(a1);
  kb1.EnQue(b1);
  a1 = qa1.DeQue<half>();
  b1 = kb1.DeQue<half>();

  // L1 -> L0A: NZ -> ZZ one row of fractals at a time. L1 -> L0B: the NZ fractals of k are
  // already the ZN fractals of k^T, in the same order.
  LocalTensor<half> a2 = qa2.AllocTensor<half>();
  for (uint32_t i = 0; i < t.m / 16; ++i) {
    LoadData(a2[i * t.d * 16], a1, LoadData2DParams(i, t.d / 16, t.m / 16, 0, 0, false, 0));
  }
  LocalTensor<half> b2 = kb2.AllocTensor<half>();
  if (t.skip_b_load == 0) LoadData(b2, b1, LoadData2DParams(0, (t.n / 16) * (t.d / 16), 1, 0, 0, false, 0));
  qa1.FreeTensor(a1);
  kb1.FreeTensor(b1);
  qa2.EnQue(a2);
  kb2.EnQue(b2);
  a2 = qa2.DeQue<half>();
  b2 = kb2.DeQue<half>();

  LocalTensor<float> c = co1.AllocTensor<float>();
  MmadParams mp;  // the real struct has no (m, n, k) constructor
  mp.m = static_cast<uint16_t>(t.m);
  mp.n = static_cast<uint16_t>(t.n);
  mp.k = static_cast<uint16_t>(t.d);
  Mmad(c, a2, b2, mp);
  qa2.FreeTensor(a2);
  kb2.FreeTensor(b2);
  co1.EnQue(c);
  c = co1.DeQue<float>();

  FixpipeParamsV220 fp;
  fp.nSize = t.n;
  fp.mSize = t.m;
  fp.srcStride = t.m;
  fp.dstStride = t.n;
  fp.reluEn = true;
  Fixpipe(sg, c, fp);
  co1.FreeTensor(c);
}

struct Problem {
  QkTiling t;
  uint32_t blocks;
  std::vector<half> q, k;
  std::vector<float> s;
};

Problem Make(uint32_t blocks, uint32_t m, uint32_t n, uint32_t d) {
  Problem p{{m, n, d, 0}, blocks, {}, {}, {}};
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  for (uint32_t i = 0; i < blocks * m * d; ++i) p.q.push_back(static_cast<half>(dist(rng)));
  for (uint32_t i = 0; i < n * d; ++i) p.k.push_back(static_cast<half>(dist(rng)));
  p.s.assign(blocks * m * n, -1.f);
  return p;
}

ascendc_cpu::LaunchConfig CubeConfig(const char* name, int32_t blocks) {  // a pure cube kernel runs on AICs
  ascendc_cpu::LaunchConfig cfg{name, blocks, 196608};
  cfg.kernel_type = ascendc_cpu::KernelType::kAicOnly;
  return cfg;
}

ascendc_cpu::LaunchReport Run(Problem& p) {
  return ascendc_cpu::Launch(CubeConfig("qk_relu", static_cast<int32_t>(p.blocks)),
                             {{p.q.data(), p.q.size() * 2, "q", GmKind::kInput},
                              {p.k.data(), p.k.size() * 2, "k", GmKind::kInput},
                              {p.s.data(), p.s.size() * 4, "scores", GmKind::kOutput},
                              {&p.t, sizeof p.t, "tiling", GmKind::kInput}},
                             QkRelu, p.q.data(), p.k.data(), p.s.data(), &p.t);
}

TEST(qk_relu_matches_reference) {
  Problem p = Make(2, 32, 48, 128);
  const auto rep = Run(p);
  const uint32_t rows = p.blocks * p.t.m;
  for (uint32_t r = 0; r < rows; ++r) {
    for (uint32_t j = 0; j < p.t.n; ++j) {
      double dot = 0;
      for (uint32_t e = 0; e < p.t.d; ++e) {
        dot += static_cast<double>(static_cast<float>(p.q[r * p.t.d + e])) * static_cast<float>(p.k[j * p.t.d + e]);
      }
      CHECK_NEAR(p.s[r * p.t.n + j], std::max(dot, 0.0), 1e-4);
    }
  }
  CHECK_EQ(rep.totals.cube_ops, 2u);
  CHECK_EQ(rep.totals.cube_macs, 2ull * 32 * 48 * 128);
  CHECK_EQ(rep.totals.gm_read_bytes, (2ull * 32 * 128 + 2ull * 48 * 128) * 2);
  CHECK_EQ(rep.totals.gm_write_bytes, 2ull * 32 * 48 * 4);
}

TEST(mmad_reading_an_unloaded_b2_is_an_uninitialized_read) {
  Problem p = Make(1, 16, 16, 32);
  p.t.skip_b_load = 1;
  EXPECT_EMU_ERROR(Run(p), "ub-uninitialized-read", "qk_relu", 0);
}

void MmadFromUb(GM_ADDR) {
  TPipe pipe;
  TBuf<TPosition::VECCALC> ub;
  TQue<TPosition::B2, 1> b2q;
  TQue<TPosition::CO1, 1> cq;
  pipe.InitBuffer(ub, 512);
  pipe.InitBuffer(b2q, 1, 512);
  pipe.InitBuffer(cq, 1, 1024);
  LocalTensor<half> b2 = b2q.AllocTensor<half>();
  LocalTensor<float> c = cq.AllocTensor<float>();
  Mmad(c, ub.Get<half>(), b2, MmadParams(16, 16, 16, 0, false, true));
  b2q.FreeTensor(b2);
  cq.FreeTensor(c);
}

TEST(mmad_operands_must_sit_at_cube_positions) {
  // An AIC has no UB at all: the TBuf at VECCALC is already wrong (core-type).
  EXPECT_EMU_ERROR(ascendc_cpu::Launch(CubeConfig("mmad_ub", 1), {}, MmadFromUb, nullptr), "core-type", "mmad_ub", 0);
}

}  // namespace
