// Calibration kernel: a tiled cube GEMM C[M, N] (float) = A[M, K] (half) * B[N, K]^T (half), the
// schedule of the published A2/A3 GEMM (pto-isa gemm_performance: base tile 128 x 256, k step 64,
// four k steps per L1 load, one core per singleCoreM x singleCoreN block). B is stored [N, K] so
// that its Nd2Nz tile is already the cube's ZN operand; the bytes and MACs equal the published
// A[M, K] x B[K, N] case. Double-buffered L1 and L0A/L0B; one L0C tile (128 KiB) per output tile.
#pragma once
#include <cstdint>

#include "kernel_operator.h"

namespace calib {

struct GemmTiling {
  uint32_t m, n, k;          // problem
  uint32_t core_m, core_n;   // per-core block (multiples of 128 / 256)
  uint32_t tiles_per_core;   // 0: all; else only the first ones (a representative schedule)
};

inline constexpr uint32_t kBaseM = 128, kBaseN = 256, kBaseK = 64, kStepK = 4;

inline void GemmKernel(GM_ADDR a, GM_ADDR b, GM_ADDR c, GM_ADDR tiling) {
  using namespace AscendC;
  const GemmTiling t = *reinterpret_cast<__gm__ GemmTiling*>(tiling);
  const uint32_t cores_n = t.n / t.core_n;
  const uint32_t row0 = (static_cast<uint32_t>(GetBlockIdx()) / cores_n) * t.core_m;
  const uint32_t col0 = (static_cast<uint32_t>(GetBlockIdx()) % cores_n) * t.core_n;
  GlobalTensor<half> ag, bg;
  GlobalTensor<float> cg;
  ag.SetGlobalBuffer((__gm__ half*)a);
  bg.SetGlobalBuffer((__gm__ half*)b);
  cg.SetGlobalBuffer((__gm__ float*)c);

  constexpr uint32_t kChunk = kBaseK * kStepK;  // K per L1 load
  TPipe pipe;
  TQue<TPosition::A1, 2> a1q;
  TQue<TPosition::B1, 2> b1q;
  TQue<TPosition::A2, 2> a2q;
  TQue<TPosition::B2, 2> b2q;
  TQue<TPosition::CO1, 1> coq;
  pipe.InitBuffer(a1q, 2, kBaseM * kChunk * sizeof(half));
  pipe.InitBuffer(b1q, 2, kBaseN * kChunk * sizeof(half));
  pipe.InitBuffer(a2q, 2, kBaseM * kBaseK * sizeof(half));
  pipe.InitBuffer(b2q, 2, kBaseN * kBaseK * sizeof(half));
  pipe.InitBuffer(coq, 1, kBaseM * kBaseN * sizeof(float));

  const uint32_t tiles_m = t.core_m / kBaseM, tiles_n = t.core_n / kBaseN;
  uint32_t tiles = tiles_m * tiles_n;
  if (t.tiles_per_core != 0 && t.tiles_per_core < tiles) tiles = t.tiles_per_core;
  for (uint32_t tile = 0; tile < tiles; ++tile) {
    const uint32_t r = row0 + (tile / tiles_n) * kBaseM, col = col0 + (tile % tiles_n) * kBaseN;
    LocalTensor<float> acc = coq.AllocTensor<float>();
    for (uint32_t k0 = 0; k0 < t.k; k0 += kChunk) {
      // GM (ND) -> L1 (NZ): column block j of 16 values sits j * rows * 16 elements in.
      LocalTensor<half> a1 = a1q.AllocTensor<half>();
      DataCopy(a1, ag[uint64_t{r} * t.k + k0], Nd2NzParams(1, kBaseM, kChunk, 0, t.k, kBaseM, 1, 0));
      a1q.EnQue(a1);
      LocalTensor<half> b1 = b1q.AllocTensor<half>();
      DataCopy(b1, bg[uint64_t{col} * t.k + k0], Nd2NzParams(1, kBaseN, kChunk, 0, t.k, kBaseN, 1, 0));
      b1q.EnQue(b1);
      a1 = a1q.DeQue<half>();
      b1 = b1q.DeQue<half>();
      for (uint32_t s = 0; s < kStepK; ++s) {
        // L1 -> L0A: NZ -> ZZ, one row of 16 x 16 fractals at a time; L1 -> L0B: the NZ fractals
        // of B[N, K] for k step s are the ZN fractals of B^T, contiguous.
        LocalTensor<half> a2 = a2q.AllocTensor<half>();
        for (uint32_t i = 0; i < kBaseM / 16; ++i) {
          LoadData(a2[i * kBaseK * 16], a1,
                   LoadData2DParams(s * (kBaseK / 16) * (kBaseM / 16) + i, kBaseK / 16, kBaseM / 16, 0, 0, false, 0));
        }
        a2q.EnQue(a2);
        LocalTensor<half> b2 = b2q.AllocTensor<half>();
        LoadData(b2, b1, LoadData2DParams(s * (kBaseK / 16) * (kBaseN / 16), (kBaseK / 16) * (kBaseN / 16), 1, 0, 0,
                                          false, 0));
        b2q.EnQue(b2);
        a2 = a2q.DeQue<half>();
        b2 = b2q.DeQue<half>();
        MmadParams mp;
        mp.m = kBaseM;
        mp.n = kBaseN;
        mp.k = kBaseK;
        mp.cmatrixInitVal = k0 == 0 && s == 0;
        Mmad(acc, a2, b2, mp);
        a2q.FreeTensor(a2);
        b2q.FreeTensor(b2);
      }
      a1q.FreeTensor(a1);
      b1q.FreeTensor(b1);
    }
    coq.EnQue(acc);
    acc = coq.DeQue<float>();
    FixpipeParamsV220 fp;
    fp.nSize = kBaseN;
    fp.mSize = kBaseM;
    fp.srcStride = kBaseM;
    fp.dstStride = t.n;
    Fixpipe(cg[uint64_t{r} * t.n + col], acc, fp);
    coq.FreeTensor(acc);
  }
}

}  // namespace calib
