// reshape_and_cache AscendC kernel: copies each token's key (and value, unless key-only) rows
// into the paged cache at its slot. Tokens are split evenly across the vector cores; each row
// moves GM -> UB -> GM in bursts of up to chunk_elems, double-buffered, with DataCopyPad so rows
// whose byte size is not a multiple of 32 need no padding in GM. Slots < 0 are skipped. A core's
// slots come into UB by one DMA (per kRacSlotChunk) and serve both the check and the copy.
// All or nothing: first every core checks its tokens' slots (< num_slots) and publishes its verdict
// in its workspace slot (aop_kernel/check_slots.h); after SyncAll, no core copies a row if
// any core found a bad slot, and core 0 records the first one in the error record.
// Where a row lands: the cache's layout descriptor in the tiling (kernel/reshape_and_cache_layout.h):
// a contiguous ND row in one piece, a strided / head-major cache head by head, an NZ cache's 32-byte
// fractal rows chunk_stride apart by one strided DataCopyPad per chunk.
// kv_cache_dtype "int8" (kernel/reshape_and_cache_quant.h): the same structure, with the row
// converted on the vector unit between the two DMAs.
// Compiles with CANN's compiler on NPU and with g++ against the AscendC emulator.
#include "kernel_operator.h"
#include "aop_kernel/load_tiling.h"
#include "kernel/reshape_and_cache_layout.h"
#include "kernel/reshape_and_cache_quant.h"
#include "kernel/reshape_and_cache_slots.h"
#include "kernel/reshape_and_cache_tiling.h"

namespace {

// Two UB buffers per queue (InitBuffer) for double buffering, and queue depth 1: there are
// never two EnQue in a row, and depth 1 is the case the compiler optimises (TQue docs).
constexpr int32_t BUFFER_NUM = kRacBufferNum;
constexpr int32_t QUEUE_DEPTH = 1;

// T: an integer type of the element size (the op is a bit copy); S: the slot type.
template <typename T, typename S>
class ReshapeAndCacheKernel {
 public:
  __aicore__ inline void Init(GM_ADDR key, GM_ADDR value, GM_ADDR key_cache,
                              GM_ADDR value_cache, GM_ADDR slot_mapping,
                              const ReshapeAndCacheTiling& tiling) {
    tiling_ = tiling;
    key_.SetGlobalBuffer((__gm__ T*)key);
    key_cache_.SetGlobalBuffer((__gm__ T*)key_cache, tiling.key_layout.span_elems);
    if (tiling.has_value != 0) {  // key-only: value and value_cache are absent (null)
      value_.SetGlobalBuffer((__gm__ T*)value);
      value_cache_.SetGlobalBuffer((__gm__ T*)value_cache, tiling.value_layout.span_elems);
    }
    pipe_.InitBuffer(queue_, BUFFER_NUM, tiling.chunk_elems * sizeof(T));
    slots_.Init(pipe_, slot_mapping, tiling_);
  }

  __aicore__ inline bool Check(GM_ADDR workspace, GM_ADDR error_record, int64_t* record) {
    return slots_.Check(workspace, error_record, record);
  }

  __aicore__ inline void Process() {
    for (int64_t t = slots_.Tokens().begin; t < slots_.Tokens().end; ++t) {
      const int64_t slot = slots_.Slot(t);
      if (slot < 0) continue;  // padding token
      CopyRow(key_[t * tiling_.key_token_stride], key_cache_, tiling_.key_layout, slot, tiling_.key_row_elems);
      if (tiling_.has_value != 0) {
        CopyRow(value_[t * tiling_.value_token_stride], value_cache_, tiling_.value_layout, slot,
                tiling_.value_row_elems);
      }
    }
  }

 private:
  // One token's row of `elems` elements into `cache` at `slot`: group by group (a head, or the
  // whole row when the layout keeps heads together), each in chunks through UB.
  __aicore__ inline void CopyRow(const AscendC::GlobalTensor<T>& src, const AscendC::GlobalTensor<T>& cache,
                                 const RacCacheLayout& layout, int64_t slot, int64_t elems) {
    for (int64_t group = 0; group < elems; group += layout.group_elems) {
      for (int64_t done = 0; done < layout.group_elems; done += tiling_.chunk_elems) {
        const int64_t left = layout.group_elems - done;
        const uint32_t count = static_cast<uint32_t>(left < tiling_.chunk_elems ? left : tiling_.chunk_elems);
        CopyIn(src[group + done], count);
        AscendC::LocalTensor<T> buf = queue_.template DeQue<T>();
        RacWriteChunk(cache, layout, slot, group + done, count, buf);
        queue_.FreeTensor(buf);
      }
    }
  }

  __aicore__ inline void CopyIn(const AscendC::GlobalTensor<T>& src, uint32_t count) {
    AscendC::LocalTensor<T> buf = queue_.template AllocTensor<T>();
    AscendC::DataCopyExtParams params{1, count * static_cast<uint32_t>(sizeof(T)), 0, 0, 0};
    AscendC::DataCopyPadExtParams<T> pad{false, 0, 0, 0};
    AscendC::DataCopyPad(buf, src, params, pad);
    queue_.EnQue(buf);
  }

  AscendC::TPipe pipe_;
  // A bound VECIN -> VECOUT queue: MTE2 fills a buffer, MTE3 drains it, no vector work.
  AscendC::TQueBind<AscendC::TPosition::VECIN, AscendC::TPosition::VECOUT, QUEUE_DEPTH> queue_;
  AscendC::GlobalTensor<T> key_, value_, key_cache_, value_cache_;
  ReshapeAndCacheTiling tiling_;
  RacSlots<S> slots_;
};

template <typename T, typename S>
__aicore__ inline void Run(GM_ADDR key, GM_ADDR value, GM_ADDR key_cache, GM_ADDR value_cache,
                           GM_ADDR slot_mapping, GM_ADDR workspace, GM_ADDR error_record,
                           const ReshapeAndCacheTiling& tiling) {
  ReshapeAndCacheKernel<T, S> op;
  op.Init(key, value, key_cache, value_cache, slot_mapping, tiling);
  int64_t record[aop_kernel::check::kWords] = {kRacOk, 0, 0, 0, 0, 0, 0, 0};
  if (op.Check(workspace, error_record, record)) op.Process();
}

// The int8 write: the copy kernel's slots and check, the quantising rows of QuantRows.
template <typename TIn, typename S>
__aicore__ inline void RunQuant(GM_ADDR key, GM_ADDR value, GM_ADDR key_cache, GM_ADDR value_cache,
                                GM_ADDR slot_mapping, GM_ADDR scales[4], GM_ADDR workspace, GM_ADDR error_record,
                                const ReshapeAndCacheTiling& tiling) {
  AscendC::TPipe pipe;
  ReshapeAndCacheQuant<TIn, S> op;
  op.Init(pipe, key, value, key_cache, value_cache, slot_mapping, scales, tiling);
  int64_t record[aop_kernel::check::kWords] = {kRacOk, 0, 0, 0, 0, 0, 0, 0};
  op.LoadTables(record);  // the scales (core 0, or its slices) before the slots
  if (op.Check(workspace, error_record, record)) op.Process();
}

template <typename S>
__aicore__ inline void RunQuantForSlot(GM_ADDR key, GM_ADDR value, GM_ADDR key_cache, GM_ADDR value_cache,
                                       GM_ADDR slot_mapping, GM_ADDR scales[4], GM_ADDR workspace,
                                       GM_ADDR error_record, const ReshapeAndCacheTiling& tiling) {
  switch (tiling.in_dtype) {
    case kRacFloat16:
      RunQuant<half, S>(key, value, key_cache, value_cache, slot_mapping, scales, workspace, error_record, tiling);
      break;
    case kRacBfloat16:
      RunQuant<bfloat16_t, S>(key, value, key_cache, value_cache, slot_mapping, scales, workspace, error_record,
                              tiling);
      break;
    case kRacFloat32:
      RunQuant<float, S>(key, value, key_cache, value_cache, slot_mapping, scales, workspace, error_record, tiling);
      break;
    default: break;  // unreachable: host validation admits only these
  }
}

template <typename S>
__aicore__ inline void RunForSlot(GM_ADDR key, GM_ADDR value, GM_ADDR key_cache,
                                  GM_ADDR value_cache, GM_ADDR slot_mapping, GM_ADDR scales[4], GM_ADDR workspace,
                                  GM_ADDR error_record, const ReshapeAndCacheTiling& tiling) {
  if (tiling.quant != 0) {
    RunQuantForSlot<S>(key, value, key_cache, value_cache, slot_mapping, scales, workspace, error_record, tiling);
    return;
  }
  switch (tiling.elem_bytes) {
    case 1: Run<int8_t, S>(key, value, key_cache, value_cache, slot_mapping, workspace, error_record, tiling); break;
    case 2: Run<int16_t, S>(key, value, key_cache, value_cache, slot_mapping, workspace, error_record, tiling); break;
    case 4: Run<int32_t, S>(key, value, key_cache, value_cache, slot_mapping, workspace, error_record, tiling); break;
    default: break;  // unreachable: host tiling only produces 1, 2 or 4
  }
}

}  // namespace

// key:          [T, H, Dk]   value:       [T, H, Dv]    (token rows may be strided; value and
//                                                        value_cache null when key-only)
// key_cache:    ND [num_blocks, block_size, H, Dk] / NZ [num_blocks, H*Dk/F, block_size, F]
// value_cache:  the same with Dv
// slot_mapping: [T'] int32 or int64                     tiling: ReshapeAndCacheTiling
// k_scale, v_scale, k_offset, v_offset: kv_cache_dtype "int8" only ([], [1], [H], [H*D] float32,
//               float16 or bfloat16), null otherwise (and offsets when not given)
// workspace:    [block_dim] 64-byte check slots (any content)
// error_record: 64 bytes, 8 int64 (kernel/reshape_and_cache_tiling.h), written only on an error
extern "C" __global__ __aicore__ void reshape_and_cache_kernel(
    GM_ADDR key, GM_ADDR value, GM_ADDR key_cache, GM_ADDR value_cache, GM_ADDR slot_mapping, GM_ADDR k_scale,
    GM_ADDR v_scale, GM_ADDR k_offset, GM_ADDR v_offset, GM_ADDR workspace, GM_ADDR error_record, GM_ADDR tiling_gm) {
  // Vector cores only (DataCopyPad and scalar work, no cube API), launched as MIX_AIV_1_0 on
  // block_dim AIV cores (GetBlockIdx() in [0, block_dim)): the check phase's hardware SyncAll
  // needs the cross-core scheduler, which an AIV_ONLY launch does not start.
  KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIV_1_0);
  const ReshapeAndCacheTiling tiling = aop_kernel::LoadTiling<ReshapeAndCacheTiling>(tiling_gm);
  GM_ADDR scales[4] = {k_scale, v_scale, k_offset, v_offset};
  if (tiling.slot_bytes == 8) {
    RunForSlot<int64_t>(key, value, key_cache, value_cache, slot_mapping, scales, workspace, error_record, tiling);
  } else {
    RunForSlot<int32_t>(key, value, key_cache, value_cache, slot_mapping, scales, workspace, error_record, tiling);
  }
}

// The host-side <<<>>> launch, in the kernel's translation unit as CANN's ascendc_library
// needs it (its host stub for the kernel is generated from this file). CPU builds define
// ASCENDC_CPU_DEBUG, as CANN's CPU-debug build does: the emulator and the real-header check
// (ascendc-api-check) call or compile the kernel function alone.
#ifndef ASCENDC_CPU_DEBUG
#include "kernel/reshape_and_cache_launch.h"

extern "C" void reshape_and_cache_launch(uint32_t block_dim, void* stream, uint8_t* key, uint8_t* value,
                                         uint8_t* key_cache, uint8_t* value_cache, uint8_t* slot_mapping,
                                         uint8_t* k_scale, uint8_t* v_scale, uint8_t* k_offset, uint8_t* v_offset,
                                         uint8_t* workspace, uint8_t* error_record, uint8_t* tiling) {
  reshape_and_cache_kernel<<<block_dim, nullptr, stream>>>(key, value, key_cache, value_cache, slot_mapping,
                                                           k_scale, v_scale, k_offset, v_offset, workspace,
                                                           error_record, tiling);
}
#endif  // ASCENDC_CPU_DEBUG
