// Calibration kernels on the AIVs: a streaming GM -> UB -> GM copy, a streaming read (each core
// folds its slice into one UB tile with Add and writes that tile once: the memory side of a GEMV,
// bytes read from HBM over time), and a tiny vector kernel (one 32-byte row in, Adds, out).
#pragma once
#include <cstdint>

#include "kernel_operator.h"

namespace calib {

struct StreamTiling {
  uint64_t elems_per_core;  // half elements, a multiple of tile
  uint32_t tile;            // half elements per DMA
  uint32_t read_only;       // 1: fold into one tile, write it once per core
};

inline void StreamKernel(GM_ADDR x, GM_ADDR y, GM_ADDR tiling) {
  using namespace AscendC;
  const StreamTiling t = *reinterpret_cast<__gm__ StreamTiling*>(tiling);
  const uint64_t base = t.elems_per_core * static_cast<uint64_t>(GetBlockIdx());
  GlobalTensor<half> xg, yg;
  xg.SetGlobalBuffer((__gm__ half*)x + base);
  TPipe pipe;
  const uint64_t tiles = t.elems_per_core / t.tile;
  if (t.read_only == 0) {
    yg.SetGlobalBuffer((__gm__ half*)y + base);
    TQueBind<TPosition::VECIN, TPosition::VECOUT, 2> q;
    pipe.InitBuffer(q, 2, t.tile * sizeof(half));
    for (uint64_t i = 0; i < tiles; ++i) {
      LocalTensor<half> b = q.AllocTensor<half>();
      DataCopy(b, xg[i * t.tile], t.tile);
      q.EnQue(b);
      b = q.DeQue<half>();
      DataCopy(yg[i * t.tile], b, t.tile);
      q.FreeTensor(b);
    }
    return;
  }
  yg.SetGlobalBuffer((__gm__ half*)y + uint64_t{t.tile} * static_cast<uint64_t>(GetBlockIdx()));
  TQue<TPosition::VECIN, 2> in;
  TQue<TPosition::VECOUT, 1> out;
  pipe.InitBuffer(in, 2, t.tile * sizeof(half));
  pipe.InitBuffer(out, 1, t.tile * sizeof(half));
  LocalTensor<half> acc = out.AllocTensor<half>();
  Duplicate(acc, static_cast<half>(0.0f), static_cast<int32_t>(t.tile));
  for (uint64_t i = 0; i < tiles; ++i) {
    LocalTensor<half> b = in.AllocTensor<half>();
    DataCopy(b, xg[i * t.tile], t.tile);
    in.EnQue(b);
    b = in.DeQue<half>();
    Add(acc, acc, b, static_cast<int32_t>(t.tile));
    in.FreeTensor(b);
  }
  out.EnQue(acc);
  acc = out.DeQue<half>();
  DataCopy(yg, acc, t.tile);
  out.FreeTensor(acc);
}

// One block: 16 halves in, + 1, out.
inline void TinyKernel(GM_ADDR x, GM_ADDR y) {
  using namespace AscendC;
  GlobalTensor<half> xg, yg;
  xg.SetGlobalBuffer((__gm__ half*)x);
  yg.SetGlobalBuffer((__gm__ half*)y);
  TPipe pipe;
  TQue<TPosition::VECIN, 1> in;
  TQue<TPosition::VECOUT, 1> out;
  pipe.InitBuffer(in, 1, 32);
  pipe.InitBuffer(out, 1, 32);
  LocalTensor<half> a = in.AllocTensor<half>();
  DataCopy(a, xg, 16);
  in.EnQue(a);
  a = in.DeQue<half>();
  LocalTensor<half> b = out.AllocTensor<half>();
  Adds(b, a, static_cast<half>(1.0f), 16);
  in.FreeTensor(a);
  out.EnQue(b);
  b = out.DeQue<half>();
  DataCopy(yg, b, 16);
  out.FreeTensor(b);
}

}  // namespace calib
