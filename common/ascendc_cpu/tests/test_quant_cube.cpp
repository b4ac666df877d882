// The int8 cube path (Atlas A2): int8 q [M, D] and k [N, D] through GM -> A1/B1 (Nd2Nz, 16 x 32
// int8 fractals) -> A2/B2 (LoadData) -> CO1 (Mmad, int32 accumulation) -> GM (Fixpipe, int32
// as is or DEQF16 with reluPre and a scalar deq scale), against an exact reference; each
// strictness rule of the quantising Fixpipe beside a broken twin; int8 Mmad at twice the fp16 rate.
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "ascendc_cpu/launch.h"
#include "ascendc_cpu/timing_model.h"
#include "kernel_operator.h"
#include "test_framework.h"

namespace {

using namespace AscendC;
using ascendc_cpu::GmKind;

enum Out : uint32_t {
  kInt32 = 0,        // int32 -> int32, NoQuant
  kDeq = 1,          // int32 -> half, DEQF16, reluPre, deqScalar = t.deq
  kHalfNoQuant = 2,  // broken: int32 -> half without a quantisation mode
  kDeqUnset = 3,     // broken: DEQF16 with deqScalar never set (SetFixpipePreQuantFlag only)
  kInt32ToFloat = 4, // broken: int32 -> float is not an A2 pair
};

struct Tiling {
  uint32_t m, n, d;  // multiples of 16 (m, n) and 32 (d)
  uint32_t out;      // Out
  uint64_t deq;      // the deqScalar of kDeq
};

void QkInt8(GM_ADDR q, GM_ADDR k, GM_ADDR s, GM_ADDR tiling) {
  const Tiling t = *reinterpret_cast<__gm__ Tiling*>(tiling);
  GlobalTensor<int8_t> qg, kg;
  qg.SetGlobalBuffer((__gm__ int8_t*)q);
  kg.SetGlobalBuffer((__gm__ int8_t*)k);
  TPipe pipe;
  TQue<TPosition::A1, 1> qa1;
  TQue<TPosition::B1, 1> kb1;
  TQue<TPosition::A2, 1> qa2;
  TQue<TPosition::B2, 1> kb2;
  TQue<TPosition::CO1, 1> co1;
  pipe.InitBuffer(qa1, 1, t.m * t.d);
  pipe.InitBuffer(kb1, 1, t.n * t.d);
  pipe.InitBuffer(qa2, 1, t.m * t.d);
  pipe.InitBuffer(kb2, 1, t.n * t.d);
  pipe.InitBuffer(co1, 1, t.m * t.n * sizeof(int32_t));

  // ND -> NZ: 32-byte column blocks of 32 int8, block c of row r at (c * rows + r) * 32 B.
  LocalTensor<int8_t> a1 = qa1.AllocTensor<int8_t>();
  DataCopy(a1, qg, Nd2NzParams(1, t.m, t.d, 0, t.d, t.m, 1, 0));
  LocalTensor<int8_t> b1 = kb1.AllocTensor<int8_t>();
  DataCopy(b1, kg, Nd2NzParams(1, t.n, t.d, 0, t.d, t.n, 1, 0));
  qa1.EnQue(a1);
  kb1.EnQue(b1);
  a1 = qa1.DeQue<int8_t>();
  b1 = kb1.DeQue<int8_t>();
  // 16 x 32 fractals (512 B): d / 32 per row block.
  LocalTensor<int8_t> a2 = qa2.AllocTensor<int8_t>();
  for (uint32_t i = 0; i < t.m / 16; ++i) {
    LoadData(a2[i * t.d * 16], a1, LoadData2DParams(i, t.d / 32, t.m / 16, 0, 0, false, 0));
  }
  LocalTensor<int8_t> b2 = kb2.AllocTensor<int8_t>();
  LoadData(b2, b1, LoadData2DParams(0, (t.n / 16) * (t.d / 32), 1, 0, 0, false, 0));
  qa1.FreeTensor(a1);
  kb1.FreeTensor(b1);
  qa2.EnQue(a2);
  kb2.EnQue(b2);
  a2 = qa2.DeQue<int8_t>();
  b2 = kb2.DeQue<int8_t>();

  LocalTensor<int32_t> c = co1.AllocTensor<int32_t>();
  MmadParams mp;
  mp.m = static_cast<uint16_t>(t.m);
  mp.n = static_cast<uint16_t>(t.n);
  mp.k = static_cast<uint16_t>(t.d);
  Mmad(c, a2, b2, mp);
  qa2.FreeTensor(a2);
  kb2.FreeTensor(b2);
  co1.EnQue(c);
  c = co1.DeQue<int32_t>();

  FixpipeParamsV220 fp;
  fp.nSize = static_cast<uint16_t>(t.n);
  fp.mSize = static_cast<uint16_t>(t.m);
  fp.srcStride = static_cast<uint16_t>(t.m);
  fp.dstStride = t.n;
  if (t.out == kInt32) {
    GlobalTensor<int32_t> sg;
    sg.SetGlobalBuffer((__gm__ int32_t*)s);
    Fixpipe(sg, c, fp);
  } else if (t.out == kInt32ToFloat) {
    GlobalTensor<float> sg;
    sg.SetGlobalBuffer((__gm__ float*)s);
    Fixpipe(sg, c, fp);
  } else {
    GlobalTensor<half> sg;
    sg.SetGlobalBuffer((__gm__ half*)s);
    if (t.out != kHalfNoQuant) fp.quantPre = QuantMode_t::DEQF16;
    fp.reluEn = true;
    if (t.out == kDeq) fp.deqScalar = t.deq;
    SetFixpipePreQuantFlag(t.deq);
    PipeBarrier<PIPE_FIX>();
    Fixpipe(sg, c, fp);
  }
  co1.FreeTensor(c);
}

struct Problem {
  Tiling t;
  std::vector<int8_t> q, k;
  std::vector<uint8_t> s;  // int32 or half rows
};

Problem Make(uint32_t m, uint32_t n, uint32_t d, uint32_t out, float scale, int lim = 127) {
  uint32_t bits;
  std::memcpy(&bits, &scale, 4);
  Problem p{{m, n, d, out, bits}, {}, {}, {}};
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> dist(-lim, lim);
  for (uint32_t i = 0; i < m * d; ++i) p.q.push_back(static_cast<int8_t>(dist(rng)));
  for (uint32_t i = 0; i < n * d; ++i) p.k.push_back(static_cast<int8_t>(dist(rng)));
  p.s.assign(size_t{m} * n * 4, 0xAB);
  return p;
}

ascendc_cpu::LaunchReport Run(Problem& p) {
  ascendc_cpu::LaunchConfig cfg{"qk_int8", 1, 196608};
  cfg.kernel_type = ascendc_cpu::KernelType::kAicOnly;
  return ascendc_cpu::Launch(cfg,
                             {{p.q.data(), p.q.size(), "q", GmKind::kInput},
                              {p.k.data(), p.k.size(), "k", GmKind::kInput},
                              {p.s.data(), p.s.size(), "scores", GmKind::kOutput},
                              {&p.t, sizeof p.t, "tiling", GmKind::kInput}},
                             QkInt8, p.q.data(), p.k.data(), p.s.data(), &p.t);
}

int64_t Dot(const Problem& p, uint32_t r, uint32_t j) {
  int64_t dot = 0;
  for (uint32_t e = 0; e < p.t.d; ++e) dot += int64_t{p.q[r * p.t.d + e]} * p.k[j * p.t.d + e];
  return dot;
}

TEST(int8_mmad_accumulates_exactly_in_int32) {
  Problem p = Make(32, 48, 128, kInt32, 0.f);
  const auto rep = Run(p);
  const int32_t* s = reinterpret_cast<const int32_t*>(p.s.data());
  for (uint32_t r = 0; r < p.t.m; ++r) {
    for (uint32_t j = 0; j < p.t.n; ++j) CHECK_EQ(int64_t{s[r * p.t.n + j]}, Dot(p, r, j));
  }
  CHECK_EQ(rep.totals.cube_macs, 32ull * 48 * 128);
  CHECK_EQ(rep.totals.cube_int8_macs, 32ull * 48 * 128);
  CHECK_EQ(rep.totals.gm_read_bytes, (32ull + 48) * 128);
}

// fp16(2^-10 * max(dot, 0)): the NPU numerics of lightning_indexer_quant
TEST(deqf16_with_relu_pre_matches_the_rounded_reference) {
  Problem p = Make(16, 32, 128, kDeq, 0x1p-10f);
  Run(p);
  const half* s = reinterpret_cast<const half*>(p.s.data());
  for (uint32_t r = 0; r < p.t.m; ++r) {
    for (uint32_t j = 0; j < p.t.n; ++j) {
      const double want = static_cast<double>(static_cast<half>(static_cast<float>(std::max<int64_t>(Dot(p, r, j), 0)) * 0x1p-10f));
      CHECK_EQ(static_cast<double>(static_cast<float>(s[r * p.t.n + j])), want);
    }
  }
}

TEST(int32_to_half_needs_a_dequant_mode) {
  Problem p = Make(16, 16, 32, kHalfNoQuant, 0x1p-10f);
  EXPECT_EMU_ERROR(Run(p), "api-constraint", "qk_int8", 0);
}

TEST(deqf16_needs_deq_scalar_in_the_params) {
  Problem p = Make(16, 16, 32, kDeqUnset, 0x1p-10f);
  EXPECT_EMU_ERROR(Run(p), "api-constraint", "qk_int8", 0);
}

TEST(deq_scale_bits_below_13_are_refused) {
  Problem p = Make(16, 16, 32, kDeq, 0.1f);  // 0.1f has low mantissa bits the hardware drops
  EXPECT_EMU_ERROR(Run(p), "api-constraint", "qk_int8", 0);
  Problem ok = Make(16, 16, 32, kDeq, 0.099975586f);  // 0.1 rounded to 10 mantissa bits (0x3dccc000)
  CHECK_EQ(ok.t.deq & 0x1FFFu, 0u);
  Run(ok);
}

TEST(deqf16_overflow_is_refused) {
  Problem p = Make(16, 16, 128, kDeq, 1.0f);  // dots up to 2^21 do not fit float16
  EXPECT_EMU_ERROR(Run(p), "api-constraint", "qk_int8", 0);
  Problem ok = Make(16, 16, 128, kDeq, 1.0f, 10);  // |dot| <= 12800
  Run(ok);
}

TEST(int32_to_float_is_not_an_a2_fixpipe_pair) {
  Problem p = Make(16, 16, 32, kInt32ToFloat, 0.f);
  EXPECT_EMU_ERROR(Run(p), "api-constraint", "qk_int8", 0);
}

// int8 Mmad at twice the fp16 cube rate: the M pipe's busy time is its start cost plus
// m * n * k / kCubeInt8MacsPerCycle cycles.
TEST(int8_mmad_runs_at_twice_the_fp16_rate) {
  using namespace ascendc_cpu::timing;
  CHECK_EQ(kCubeInt8MacsPerCycle, 2 * kCubeMacsPerCycle);
  Problem p = Make(64, 128, 128, kInt32, 0.f);
  const auto rep = Run(p);
  const double want_us = (kCubeStartCycles + 64.0 * 128 * 128 / kCubeInt8MacsPerCycle) / (kClockGHz * 1e3);
  CHECK_NEAR(rep.pipe_busy_us.at("M"), want_us, 1e-9);
}

}  // namespace
