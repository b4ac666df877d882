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
  kFractal16 = 5,    // broken: L1 -> L0A counted in 16 x 16 fractals (the fp16 shape) for int8
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
  const uint32_t c0 = t.out == kFractal16 ? 16 : 32;  // int8: 16 x 32 fractals (512 B)
  for (uint32_t i = 0; i < t.m / 16; ++i) {
    LoadData(a2[i * t.d * 16], a1, LoadData2DParams(i, t.d / c0, t.m / 16, 0, 0, false, 0));
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

TEST(int8_tiles_counted_in_fp16_fractals_overrun_l0a) {
  Problem p = Make(32, 16, 64, kFractal16, 0.f);
  EXPECT_EMU_ERROR(Run(p), "ub-out-of-bounds", "qk_int8", 0);
}

TEST(int32_to_float_is_not_an_a2_fixpipe_pair) {
  Problem p = Make(16, 16, 32, kInt32ToFloat, 0.f);
  EXPECT_EMU_ERROR(Run(p), "api-constraint", "qk_int8", 0);
}

// The head reduction on the cube (the arch22 way): c^T = k . q^T (int8, L0C int32 [keys x heads])
// -> Fixpipe DEQF16 + reluPre into L1 (NZ: the ZN fractals of the next B) -> L0B, then
// s = wq . c^T (fp16, m = 16: row 0 the weights, rows 1..15 zero) -> Fixpipe row 0 to GM (float).
struct TwoTiling {
  uint32_t keys, heads, d;
  uint32_t broken;  // 0 ok, 1 Fixpipe into L1 with CFG_ROW_MAJOR, 2 no FIX -> MTE1 flag
};

void TwoStage(GM_ADDR q, GM_ADDR k, GM_ADDR w, GM_ADDR s, GM_ADDR tiling) {
  const TwoTiling t = *reinterpret_cast<__gm__ TwoTiling*>(tiling);
  GlobalTensor<int8_t> qg, kg;
  GlobalTensor<half> wg;
  GlobalTensor<float> sg;
  qg.SetGlobalBuffer((__gm__ int8_t*)q);
  kg.SetGlobalBuffer((__gm__ int8_t*)k);
  wg.SetGlobalBuffer((__gm__ half*)w);
  sg.SetGlobalBuffer((__gm__ float*)s);
  TPipe pipe;
  TQue<TPosition::A1, 1> ka1, wa1;
  TQue<TPosition::B1, 1> qb1;
  TBuf<TPosition::C1> cl1;
  TQue<TPosition::A2, 1> ka2, wa2;
  TQue<TPosition::B2, 1> qb2, cb2;
  TQue<TPosition::CO1, 1> c1q, c2q;
  pipe.InitBuffer(ka1, 1, t.keys * t.d);
  pipe.InitBuffer(qb1, 1, t.heads * t.d);
  pipe.InitBuffer(wa1, 1, 16 * t.heads * sizeof(half));
  pipe.InitBuffer(cl1, t.keys * t.heads * sizeof(half));
  pipe.InitBuffer(ka2, 1, t.keys * t.d);
  pipe.InitBuffer(wa2, 1, 16 * t.heads * sizeof(half));
  pipe.InitBuffer(qb2, 1, t.heads * t.d);
  pipe.InitBuffer(cb2, 1, t.keys * t.heads * sizeof(half));
  pipe.InitBuffer(c1q, 1, t.keys * t.heads * sizeof(int32_t));
  pipe.InitBuffer(c2q, 1, 16 * t.keys * sizeof(float));

  LocalTensor<int8_t> k1 = ka1.AllocTensor<int8_t>();
  DataCopy(k1, kg, Nd2NzParams(1, t.keys, t.d, 0, t.d, t.keys, 1, 0));
  LocalTensor<int8_t> q1 = qb1.AllocTensor<int8_t>();
  DataCopy(q1, qg, Nd2NzParams(1, t.heads, t.d, 0, t.d, t.heads, 1, 0));
  LocalTensor<half> w1 = wa1.AllocTensor<half>();
  DataCopy(w1, wg, Nd2NzParams(1, 16, t.heads, 0, t.heads, 16, 1, 0));
  ka1.EnQue(k1);
  qb1.EnQue(q1);
  wa1.EnQue(w1);
  k1 = ka1.DeQue<int8_t>();
  q1 = qb1.DeQue<int8_t>();
  w1 = wa1.DeQue<half>();
  LocalTensor<int8_t> k2 = ka2.AllocTensor<int8_t>();
  for (uint32_t i = 0; i < t.keys / 16; ++i) {
    LoadData(k2[i * t.d * 16], k1, LoadData2DParams(i, t.d / 32, t.keys / 16, 0, 0, false, 0));
  }
  LocalTensor<int8_t> q2 = qb2.AllocTensor<int8_t>();
  LoadData(q2, q1, LoadData2DParams(0, (t.heads / 16) * (t.d / 32), 1, 0, 0, false, 0));
  LocalTensor<half> w2 = wa2.AllocTensor<half>();
  LoadData(w2, w1, LoadData2DParams(0, t.heads / 16, 1, 0, 0, false, 0));
  ka1.FreeTensor(k1);
  qb1.FreeTensor(q1);
  wa1.FreeTensor(w1);
  ka2.EnQue(k2);
  qb2.EnQue(q2);
  wa2.EnQue(w2);
  k2 = ka2.DeQue<int8_t>();
  q2 = qb2.DeQue<int8_t>();
  w2 = wa2.DeQue<half>();

  LocalTensor<int32_t> c1 = c1q.AllocTensor<int32_t>();
  MmadParams mp;
  mp.m = static_cast<uint16_t>(t.keys);
  mp.n = static_cast<uint16_t>(t.heads);
  mp.k = static_cast<uint16_t>(t.d);
  Mmad(c1, k2, q2, mp);
  ka2.FreeTensor(k2);
  qb2.FreeTensor(q2);
  c1q.EnQue(c1);
  c1 = c1q.DeQue<int32_t>();
  FixpipeParamsV220 fp(static_cast<uint16_t>(t.heads), static_cast<uint16_t>(t.keys), static_cast<uint16_t>(t.keys),
                       t.keys, true, QuantMode_t::DEQF16, 0x3a800000, 1, 0, 0, 0);
  LocalTensor<half> cs = cl1.Get<half>();
  if (t.broken == 1) {
    Fixpipe(cs, c1, fp);  // CFG_ROW_MAJOR by default: not a path into L1
  } else {
    Fixpipe<half, int32_t, CFG_NZ>(cs, c1, fp);
  }
  c1q.FreeTensor(c1);
  if (t.broken != 2) {
    SetFlag<HardEvent::FIX_MTE1>(0);
    WaitFlag<HardEvent::FIX_MTE1>(0);
  }
  LocalTensor<half> cb = cb2.AllocTensor<half>();
  LoadData(cb, cs, LoadData2DParams(0, (t.heads / 16) * (t.keys / 16), 1, 0, 0, false, 0));
  cb2.EnQue(cb);
  cb = cb2.DeQue<half>();
  LocalTensor<float> c2 = c2q.AllocTensor<float>();
  MmadParams mp2;
  mp2.m = 16;
  mp2.n = static_cast<uint16_t>(t.keys);
  mp2.k = static_cast<uint16_t>(t.heads);
  Mmad(c2, w2, cb, mp2);
  wa2.FreeTensor(w2);
  cb2.FreeTensor(cb);
  c2q.EnQue(c2);
  c2 = c2q.DeQue<float>();
  FixpipeParamsV220 out(static_cast<uint16_t>(t.keys), 1, 16, t.keys, false);
  Fixpipe(sg, c2, out);
  c2q.FreeTensor(c2);
}

struct Two {
  TwoTiling t;
  std::vector<int8_t> q, k;
  std::vector<half> w;
  std::vector<float> s;
};

Two MakeTwo(uint32_t broken) {
  Two p{{64, 64, 128, broken}, {}, {}, {}, {}};
  std::mt19937 rng(11);
  std::uniform_int_distribution<int> dist(-127, 127);
  std::uniform_real_distribution<float> wd(-2.f, 2.f);
  for (uint32_t i = 0; i < p.t.heads * p.t.d; ++i) p.q.push_back(static_cast<int8_t>(dist(rng)));
  for (uint32_t i = 0; i < p.t.keys * p.t.d; ++i) p.k.push_back(static_cast<int8_t>(dist(rng)));
  p.w.assign(16 * p.t.heads, static_cast<half>(0.f));
  for (uint32_t h = 0; h < p.t.heads; ++h) p.w[h] = static_cast<half>(wd(rng));
  p.s.assign(p.t.keys, -1.f);
  return p;
}

ascendc_cpu::LaunchReport RunTwo(Two& p) {
  ascendc_cpu::LaunchConfig cfg{"two_stage", 1, 196608};
  cfg.kernel_type = ascendc_cpu::KernelType::kAicOnly;
  return ascendc_cpu::Launch(cfg,
                             {{p.q.data(), p.q.size(), "q", GmKind::kInput},
                              {p.k.data(), p.k.size(), "k", GmKind::kInput},
                              {p.w.data(), p.w.size() * 2, "w", GmKind::kInput},
                              {p.s.data(), p.s.size() * 4, "s", GmKind::kOutput},
                              {&p.t, sizeof p.t, "tiling", GmKind::kInput}},
                             TwoStage, p.q.data(), p.k.data(), p.w.data(), p.s.data(), &p.t);
}

TEST(head_sum_on_the_cube_through_l1_matches_the_fp16_path) {
  Two p = MakeTwo(0);
  RunTwo(p);
  for (uint32_t j = 0; j < p.t.keys; ++j) {
    float want = 0;  // the emulator's Mmad order: float products, summed in k (head) order
    for (uint32_t h = 0; h < p.t.heads; ++h) {
      int64_t dot = 0;
      for (uint32_t e = 0; e < p.t.d; ++e) dot += int64_t{p.q[h * p.t.d + e]} * p.k[j * p.t.d + e];
      const half a = static_cast<half>(static_cast<float>(std::max<int64_t>(dot, 0)) * 0x1p-10f);
      want += static_cast<float>(p.w[h]) * static_cast<float>(a);
    }
    CHECK_EQ(p.s[j], want);
  }
}

TEST(fixpipe_into_l1_must_be_nz) {
  Two p = MakeTwo(1);
  EXPECT_EMU_ERROR(RunTwo(p), "api-constraint", "two_stage", 0);
}

TEST(fixpipe_into_l1_then_loaddata_needs_a_fix_to_mte1_flag) {
  Two p = MakeTwo(2);
  EXPECT_EMU_ERROR(RunTwo(p), "pipe-race", "two_stage", 0);
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
