// Example element-wise kernel z = x + y in the documented Init / Process { CopyIn; Compute;
// CopyOut } style with double-buffered queues. Compiles unchanged with CANN.
#pragma once
#include "kernel_operator.h"
#include "add_tiling.h"

namespace add_example {

using namespace AscendC;
constexpr int32_t BUFFER_NUM = 2;

template <class T>
class KernelAdd {
 public:
  __aicore__ inline KernelAdd() {}

  // x, y, z: [total]
  __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, GM_ADDR z, const AddTiling& t) {
    const uint32_t start = t.per_core * static_cast<uint32_t>(GetBlockIdx());
    const uint32_t end = start + t.per_core < t.total ? start + t.per_core : t.total;
    len_ = end > start ? end - start : 0;
    tile_ = t.tile;
    xGm_.SetGlobalBuffer((__gm__ T*)x + start, len_);
    yGm_.SetGlobalBuffer((__gm__ T*)y + start, len_);
    zGm_.SetGlobalBuffer((__gm__ T*)z + start, len_);
    pipe_.InitBuffer(inQueueX_, BUFFER_NUM, tile_ * sizeof(T));
    pipe_.InitBuffer(inQueueY_, BUFFER_NUM, tile_ * sizeof(T));
    pipe_.InitBuffer(outQueueZ_, BUFFER_NUM, tile_ * sizeof(T));
  }

  __aicore__ inline void Process() {
    const uint32_t tiles = len_ / tile_;
    const uint32_t tail = len_ % tile_;
    for (uint32_t i = 0; i < tiles; ++i) {
      CopyIn(i * tile_, tile_);
      Compute(tile_);
      CopyOut(i * tile_, tile_);
    }
    if (tail > 0) {
      CopyIn(tiles * tile_, tail);
      Compute(tail);
      CopyOut(tiles * tile_, tail);
    }
  }

 private:
  __aicore__ inline void CopyIn(uint32_t offset, uint32_t count) {
    LocalTensor<T> x = inQueueX_.AllocTensor<T>();
    LocalTensor<T> y = inQueueY_.AllocTensor<T>();
    if (count * sizeof(T) % 32 == 0) {
      DataCopy(x, xGm_[offset], count);
      DataCopy(y, yGm_[offset], count);
    } else {
      const DataCopyExtParams params{1, static_cast<uint32_t>(count * sizeof(T)), 0, 0, 0};
      const DataCopyPadExtParams<T> pad{false, 0, 0, 0};
      DataCopyPad(x, xGm_[offset], params, pad);
      DataCopyPad(y, yGm_[offset], params, pad);
    }
    inQueueX_.EnQue(x);
    inQueueY_.EnQue(y);
  }

  __aicore__ inline void Compute(uint32_t count) {
    LocalTensor<T> x = inQueueX_.DeQue<T>();
    LocalTensor<T> y = inQueueY_.DeQue<T>();
    LocalTensor<T> z = outQueueZ_.AllocTensor<T>();
    Add(z, x, y, count);
    outQueueZ_.EnQue<T>(z);
    inQueueX_.FreeTensor(x);
    inQueueY_.FreeTensor(y);
  }

  __aicore__ inline void CopyOut(uint32_t offset, uint32_t count) {
    LocalTensor<T> z = outQueueZ_.DeQue<T>();
    if (count * sizeof(T) % 32 == 0) {
      DataCopy(zGm_[offset], z, count);
    } else {
      DataCopyPad(zGm_[offset], z, DataCopyExtParams{1, static_cast<uint32_t>(count * sizeof(T)), 0, 0, 0});
    }
    outQueueZ_.FreeTensor(z);
  }

  TPipe pipe_;
  TQue<TPosition::VECIN, BUFFER_NUM> inQueueX_, inQueueY_;
  TQue<TPosition::VECOUT, BUFFER_NUM> outQueueZ_;
  GlobalTensor<T> xGm_, yGm_, zGm_;
  uint32_t len_ = 0;
  uint32_t tile_ = 0;
};

}  // namespace add_example

extern "C" __global__ __aicore__ inline void add_custom_float(GM_ADDR x, GM_ADDR y, GM_ADDR z, GM_ADDR tiling) {
  const AddTiling t = *reinterpret_cast<__gm__ AddTiling*>(tiling);
  add_example::KernelAdd<float> op;
  op.Init(x, y, z, t);
  op.Process();
}

extern "C" __global__ __aicore__ inline void add_custom_half(GM_ADDR x, GM_ADDR y, GM_ADDR z, GM_ADDR tiling) {
  const AddTiling t = *reinterpret_cast<__gm__ AddTiling*>(tiling);
  add_example::KernelAdd<half> op;
  op.Init(x, y, z, t);
  op.Process();
}
