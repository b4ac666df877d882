// indexer_k_quant_and_cache AscendC kernel, split int8 layout (Atlas A2 / A3: no fp8 conversion,
// so the fused fp8 layout is refused by the host before launch). Tokens are split evenly across
// the vector cores. Per token: its row GM -> UB, widened to float32 (Cast, exact), Abs, one
// ReduceMax per group, the group scale on the scalar unit (amax / 127, 1 for a zero group), the
// scales broadcast over their groups (Duplicate), y = x / sc (Div), the codes
// round_half_even(clamp(y, -128, 127)) by Maxs / Mins, then Cast f32 -> int16 CAST_RINT (the one
// rounding: to an integer, ties to even; precision_conversion.md "float -> int16_t"), then
// int16 -> half -> int8 with CAST_NONE (both exact: integers in [-128, 127]). Atlas A2 has no
// f32 -> int8 Cast (Cast.md's A2 table: int8 only from half), and f32 -> half -> int8 would round
// twice (86.51 -> 86.5 -> 86). float16 scales: Cast f32 -> half CAST_RINT (nearest even).
// Tokens go through in batches of batch_tokens: one strided DMA brings a batch's rows, each vector
// step runs once over the batch (the per-group ReduceMax and Duplicate once per token group).
// All or nothing: every core first checks its tokens in order (the slot, then, when a float16
// scale can overflow, the token's scales, which needs the quantisation itself), publishes its
// first error in its check slot (aop_kernel/check_slots.h), SyncAll, and no core writes if any
// core found one. The codes and scales of a core's first resident_tokens tokens stay in UB from
// the check to the write, so k is read once (further tokens are quantised again after the check
// if their scales had to be checked). A batch reads its rows by one DMA per run of written tokens
// (padding rows are zeroed in UB, not read).
// Compiles with CANN's compiler on NPU and with g++ against the AscendC emulator.
#include "kernel_operator.h"
#include "aop_kernel/check_slots.h"
#include "aop_kernel/core_share.h"
#include "aop_kernel/load_tiling.h"
#include "kernel/indexer_k_quant_and_cache_tiling.h"

namespace {

using AscendC::HardEvent;

template <typename A, typename B>
struct Same {
  static constexpr bool value = false;
};
template <typename A>
struct Same<A, A> {
  static constexpr bool value = true;
};

__aicore__ inline uint32_t Align32(int64_t bytes) { return static_cast<uint32_t>((bytes + 31) / 32 * 32); }

__aicore__ inline int64_t FloatBits(float x) {
  union {
    float f;
    uint32_t u;
  } v;
  v.f = x;
  return static_cast<int64_t>(v.u);
}

// T: k's element type (half, bfloat16_t, float); S: the slot type; SC: the scale cache's (half, float).
template <typename T, typename S, typename SC>
class IndexerKQuantKernel {
 public:
  __aicore__ inline void Init(GM_ADDR k, GM_ADDR k_cache, GM_ADDR slot_mapping, GM_ADDR k_scale_cache,
                              const IndexerKQuantTiling& tiling) {
    t_ = tiling;
    tokens_ = aop_kernel::ThisCoreShare(tiling.tokens_per_core, tiling.cores_with_extra);
    const int64_t d = t_.head_dim;
    const int64_t blocks_before_last = t_.num_blocks > 0 ? t_.num_blocks - 1 : 0;
    const int64_t cache_span = t_.num_blocks > 0 ? blocks_before_last * t_.cache_block_stride + t_.block_size * d : 0;
    const int64_t scale_span =
        t_.num_blocks > 0 ? blocks_before_last * t_.scale_block_stride + t_.block_size * t_.groups : 0;
    k_.SetGlobalBuffer((__gm__ T*)k);
    cache_.SetGlobalBuffer((__gm__ int8_t*)k_cache, cache_span);
    scales_.SetGlobalBuffer((__gm__ SC*)k_scale_cache, scale_span);
    slots_.SetGlobalBuffer((__gm__ S*)slot_mapping, t_.num_tokens);

    const int64_t rows = t_.batch_tokens * d;  // elements of a batch
    pipe_.InitBuffer(in_buf_, Align32(rows * static_cast<int64_t>(sizeof(T))));
    pipe_.InitBuffer(xf_buf_, Align32(rows * 4));
    pipe_.InitBuffer(tmp_buf_, Align32(rows * 4));
    pipe_.InitBuffer(y_buf_, Align32(rows * 4));
    pipe_.InitBuffer(half_buf_, Align32(rows * 2));
    pipe_.InitBuffer(codes_buf_, Align32(rows));
    pipe_.InitBuffer(work_buf_, Align32(t_.quant_block * 4));
    pipe_.InitBuffer(amax_buf_, Align32(t_.batch_tokens * t_.groups * 32));
    pipe_.InitBuffer(scale_f32_buf_, static_cast<uint32_t>(t_.batch_tokens * t_.scale_row_bytes));
    pipe_.InitBuffer(scale_out_buf_, static_cast<uint32_t>(t_.batch_tokens * t_.scale_row_bytes));
    pipe_.InitBuffer(check_buf_, aop_kernel::check::UbBytes(t_.block_dim));
    pipe_.InitBuffer(slot_buf_, static_cast<uint32_t>(kIkqSlotChunk * sizeof(S)));
    if (t_.resident_tokens > 0) {
      pipe_.InitBuffer(res_codes_buf_, static_cast<uint32_t>(t_.resident_tokens) * Align32(d));
      pipe_.InitBuffer(res_scales_buf_, static_cast<uint32_t>(t_.resident_tokens * t_.scale_row_bytes));
    }
    slot_chunk_ = slot_buf_.template Get<S>();
  }

  // The check phase: true when no core found an error. Quantises the resident tokens (and, when
  // the float16 scales can overflow, every token, to check them) on the way, a batch at a time.
  __aicore__ inline bool Check(GM_ADDR workspace, GM_ADDR error_record) {
    const int64_t core = AscendC::GetBlockIdx();
    int64_t record[aop_kernel::check::kWords] = {kIkqOk, 0, 0, 0, 0, 0, 0, 0};
    for (int64_t t0 = tokens_.begin; t0 < tokens_.end && record[0] == kIkqOk;) {
      const int64_t t1 = BatchEnd(t0);
      int64_t bad = t1;  // the first token of the batch with a bad slot
      for (int64_t t = t0; t < t1; ++t) {
        const int64_t slot = Slot(t);
        if (slot >= t_.num_slots) {
          record[0] = kIkqSlotOutOfRange;
          record[1] = t;
          record[2] = slot;
          record[4] = t_.num_blocks;
          record[5] = t_.block_size;
          bad = t;
          break;
        }
      }
      // the tokens before a bad slot may hold an earlier error: their scales come first
      if (bad > t0 && (Resident(t0) || t_.check_scales != 0)) (void)Quantize(t0, bad, record);
      t0 = t1;
    }
    const AscendC::LocalTensor<int64_t> slots_ub = check_buf_.template Get<int64_t>();
    const int64_t bad = aop_kernel::check::Exchange(pipe_, workspace, core, t_.block_dim, record, slots_ub);
    if (bad < 0) return true;
    if (core == 0) aop_kernel::check::Record(error_record, slots_ub, bad);
    return false;
  }

  // The write phase: resident tokens from UB, the others quantised now, a batch at a time.
  __aicore__ inline void Process() {
    aop_kernel::check::Sync<HardEvent::V_MTE3>(pipe_);  // the check's vector writes are done
    for (int64_t t0 = tokens_.begin; t0 < tokens_.end;) {
      const int64_t t1 = BatchEnd(t0);
      const bool resident = Resident(t0);
      if (!resident) {
        int64_t unused[aop_kernel::check::kWords] = {0, 0, 0, 0, 0, 0, 0, 0};
        (void)Quantize(t0, t1, unused);
        aop_kernel::check::Sync<HardEvent::V_MTE3>(pipe_);
      }
      for (int64_t t = t0; t < t1; ++t) {
        const int64_t slot = Slot(t);
        if (slot >= 0) WriteOut(slot, Codes(t0, t), ScaleOut(t0, t));  // slot < 0: padding
      }
      if (!resident) aop_kernel::check::Sync<HardEvent::MTE3_V>(pipe_);  // before the scratch is written again
      t0 = t1;
    }
  }

 private:
  // Batches: batch_tokens tokens, none straddling the end of the resident tokens.
  __aicore__ inline int64_t BatchEnd(int64_t t0) {
    int64_t t1 = t0 + t_.batch_tokens;
    const int64_t resident_end = tokens_.begin + t_.resident_tokens;
    if (t0 < resident_end && t1 > resident_end) t1 = resident_end;
    return t1 < tokens_.end ? t1 : tokens_.end;
  }
  __aicore__ inline bool Resident(int64_t t) { return t - tokens_.begin < t_.resident_tokens; }

  // Where token t (of the batch from t0) has its codes and scales: its resident row, or the
  // batch's scratch row.
  __aicore__ inline AscendC::LocalTensor<int8_t> Codes(int64_t t0, int64_t t) {
    const uint32_t row = Align32(t_.head_dim);
    if (Resident(t)) return res_codes_buf_.template Get<int8_t>()[static_cast<uint32_t>(t - tokens_.begin) * row];
    return codes_buf_.template Get<int8_t>()[static_cast<uint32_t>(t - t0) * row];
  }
  __aicore__ inline AscendC::LocalTensor<SC> ScaleOut(int64_t t0, int64_t t) {
    const int64_t per = t_.scale_row_bytes / static_cast<int64_t>(sizeof(SC));
    if (Resident(t)) return res_scales_buf_.template Get<SC>()[static_cast<uint32_t>((t - tokens_.begin) * per)];
    return scale_out_buf_.template Get<SC>()[static_cast<uint32_t>((t - t0) * per)];
  }

  // Tokens [t0, t1)'s codes and scales (Codes / ScaleOut). False (and `record` filled) at the
  // first written token whose float16 scale overflows, when the tiling asks for that check.
  __aicore__ inline bool Quantize(int64_t t0, int64_t t1, int64_t* record) {
    const int64_t d = t_.head_dim, qbs = t_.quant_block, groups = t_.groups, n = t1 - t0;
    const uint32_t elems = static_cast<uint32_t>(n * d);
    AscendC::LocalTensor<T> in = in_buf_.template Get<T>();
    aop_kernel::check::Sync<HardEvent::V_MTE2>(pipe_);  // the previous batch was read
    LoadRows(t0, t1, in);
    aop_kernel::check::Sync<HardEvent::MTE2_V>(pipe_);

    AscendC::LocalTensor<float> x = xf_buf_.template Get<float>();
    if constexpr (Same<T, float>::value) {
      x = in;
    } else {
      AscendC::Cast(x, in, AscendC::RoundMode::CAST_NONE, elems);  // exact widening
    }
    AscendC::LocalTensor<float> tmp = tmp_buf_.template Get<float>();
    AscendC::LocalTensor<float> work = work_buf_.template Get<float>();
    AscendC::LocalTensor<float> amax = amax_buf_.template Get<float>();
    AscendC::Abs(tmp, x, elems);
    for (int64_t j = 0; j < n * groups; ++j) {  // one per (token, group): 32 bytes apart
      AscendC::ReduceMax(amax[static_cast<uint32_t>(j * 8)], tmp[static_cast<uint32_t>(j * qbs)], work,
                         static_cast<int32_t>(qbs));
    }
    aop_kernel::check::Sync<HardEvent::V_S>(pipe_);
    AscendC::LocalTensor<float> scale_f32 = scale_f32_buf_.template Get<float>();
    const int64_t per = t_.scale_row_bytes / 4;  // float32 scales per staged row
    for (int64_t i = 0; i < n; ++i) {
      const bool checked = t_.check_scales != 0 && Slot(t0 + i) >= 0;  // padding is not written
      for (int64_t g = 0; g < groups; ++g) {
        const float a = amax.GetValue(static_cast<uint32_t>((i * groups + g) * 8));
        const float sc = a == 0.0f ? 1.0f : a / 127.0f;
        if (checked && !(sc < 65520.0f)) {
          record[0] = kIkqScaleOverflow;
          record[1] = t0 + i;
          record[2] = g;
          record[3] = FloatBits(a);
          record[4] = FloatBits(sc);
          return false;
        }
        scale_f32.SetValue(static_cast<uint32_t>(i * per + g), sc);
      }
    }
    aop_kernel::check::Sync<HardEvent::S_V>(pipe_);
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t g = 0; g < groups; ++g) {
        AscendC::Duplicate(tmp[static_cast<uint32_t>((i * groups + g) * qbs)],
                           scale_f32.GetValue(static_cast<uint32_t>(i * per + g)), static_cast<int32_t>(qbs));
      }
    }
    AscendC::LocalTensor<float> y = y_buf_.template Get<float>();
    AscendC::Div(y, x, tmp, elems);
    // clamp then round = round then clamp (the bounds are integers)
    AscendC::Maxs(y, y, -128.0f, elems);
    AscendC::Mins(y, y, 127.0f, elems);
    AscendC::LocalTensor<int16_t> q16 = tmp.template ReinterpretCast<int16_t>();  // the scales are used
    AscendC::Cast(q16, y, AscendC::RoundMode::CAST_RINT, elems);  // the one rounding: to integer, ties to even
    AscendC::LocalTensor<half> h = half_buf_.template Get<half>();
    AscendC::Cast(h, q16, AscendC::RoundMode::CAST_NONE, elems);              // exact: integers in [-128, 127]
    AscendC::Cast(Codes(t0, t0), h, AscendC::RoundMode::CAST_NONE, elems);  // exact; rows D apart
    const uint32_t count = static_cast<uint32_t>(groups);
    for (int64_t i = 0; i < n; ++i) {
      const AscendC::LocalTensor<float> from = scale_f32[static_cast<uint32_t>(i * per)];
      if constexpr (Same<SC, half>::value) {
        AscendC::Cast(ScaleOut(t0, t0 + i), from, AscendC::RoundMode::CAST_RINT, count);  // nearest even
      } else {
        AscendC::Adds(ScaleOut(t0, t0 + i), from, 0.0f, count);  // a vector copy (sc > 0: + 0 is exact)
      }
    }
    return true;
  }

  // The rows of tokens [t0, t1) into `in` (rows of D * sizeof(T) bytes: 32-byte multiples, D % 32
  // == 0): one DMA per run of written tokens; a padding token's row is not read but zeroed (its
  // codes are computed, never written).
  __aicore__ inline void LoadRows(int64_t t0, int64_t t1, const AscendC::LocalTensor<T>& in) {
    const int64_t d = t_.head_dim, row_bytes = d * static_cast<int64_t>(sizeof(T));
    const uint32_t row_halves = static_cast<uint32_t>(row_bytes / 2);
    int64_t run = -1;  // the first token of the current run of written tokens
    for (int64_t t = t0; t <= t1; ++t) {
      const bool written = t < t1 && Slot(t) >= 0;
      if (written && run < 0) run = t;
      if (written) continue;
      if (run >= 0) {
        AscendC::DataCopyExtParams params{static_cast<uint16_t>(t - run), static_cast<uint32_t>(row_bytes),
                                          static_cast<uint32_t>((t_.k_token_stride - d) * static_cast<int64_t>(sizeof(T))),
                                          0, 0};
        AscendC::DataCopyPadExtParams<T> pad{false, 0, 0, 0};
        AscendC::DataCopyPad(in[static_cast<uint32_t>((run - t0) * d)], k_[run * t_.k_token_stride], params, pad);
        run = -1;
      }
      if (t < t1) {  // +0.0 in every float type
        AscendC::Duplicate(in.template ReinterpretCast<int16_t>()[static_cast<uint32_t>(t - t0) * row_halves],
                           static_cast<int16_t>(0), static_cast<int32_t>(row_halves));
      }
    }
  }

  // One token's codes and scales to its slot (the vector writes are done).
  __aicore__ inline void WriteOut(int64_t slot, const AscendC::LocalTensor<int8_t>& codes,
                                  const AscendC::LocalTensor<SC>& scale_out) {
    const int64_t block = slot / t_.block_size, offset = slot % t_.block_size;
    AscendC::DataCopyExtParams row{1, static_cast<uint32_t>(t_.head_dim), 0, 0, 0};
    AscendC::DataCopyPad(cache_[block * t_.cache_block_stride + offset * t_.head_dim], codes, row);
    AscendC::DataCopyExtParams scales{1, static_cast<uint32_t>(t_.groups * static_cast<int64_t>(sizeof(SC))), 0, 0, 0};
    AscendC::DataCopyPad(scales_[block * t_.scale_block_stride + offset * t_.groups], scale_out, scales);
  }

  // slot_mapping[t] for one of this core's tokens, from the chunk of slots in UB (one DMA per chunk).
  __aicore__ inline int64_t Slot(int64_t t) {
    if (t < chunk_begin_ || t >= chunk_end_) LoadSlots(t);
    return static_cast<int64_t>(slot_chunk_.GetValue(static_cast<uint32_t>(t - chunk_begin_)));
  }

  __aicore__ inline void LoadSlots(int64_t t) {
    if (chunk_end_ > chunk_begin_) aop_kernel::check::Sync<HardEvent::S_MTE2>(pipe_);  // the old chunk was read
    const int64_t left = tokens_.end - t;
    const int64_t count = left < kIkqSlotChunk ? left : kIkqSlotChunk;
    AscendC::DataCopyExtParams params{1, static_cast<uint32_t>(count * static_cast<int64_t>(sizeof(S))), 0, 0, 0};
    AscendC::DataCopyPadExtParams<S> pad{false, 0, 0, 0};
    AscendC::DataCopyPad(slot_chunk_, slots_[t], params, pad);
    aop_kernel::check::Sync<HardEvent::MTE2_S>(pipe_);
    chunk_begin_ = t;
    chunk_end_ = t + count;
  }

  AscendC::TPipe pipe_;
  AscendC::TBuf<AscendC::TPosition::VECCALC> in_buf_, xf_buf_, tmp_buf_, y_buf_, work_buf_, half_buf_, codes_buf_,
      amax_buf_, scale_f32_buf_, scale_out_buf_, check_buf_, slot_buf_, res_codes_buf_, res_scales_buf_;
  AscendC::GlobalTensor<T> k_;
  AscendC::GlobalTensor<int8_t> cache_;
  AscendC::GlobalTensor<SC> scales_;
  AscendC::GlobalTensor<S> slots_;
  AscendC::LocalTensor<S> slot_chunk_;
  int64_t chunk_begin_ = 0;  // slot_chunk_ holds slot_mapping[chunk_begin_, chunk_end_)
  int64_t chunk_end_ = 0;
  IndexerKQuantTiling t_;
  aop_kernel::CoreShare tokens_{0, 0};  // the tokens this core writes
};

template <typename T, typename S, typename SC>
__aicore__ inline void Run(GM_ADDR k, GM_ADDR k_cache, GM_ADDR slot_mapping, GM_ADDR k_scale_cache, GM_ADDR workspace,
                           GM_ADDR error_record, const IndexerKQuantTiling& tiling) {
  IndexerKQuantKernel<T, S, SC> op;
  op.Init(k, k_cache, slot_mapping, k_scale_cache, tiling);
  if (op.Check(workspace, error_record)) op.Process();
}

template <typename T, typename S>
__aicore__ inline void RunForScale(GM_ADDR k, GM_ADDR k_cache, GM_ADDR slot_mapping, GM_ADDR k_scale_cache,
                                   GM_ADDR workspace, GM_ADDR error_record, const IndexerKQuantTiling& tiling) {
  if (tiling.scale_bytes == 2) {
    Run<T, S, half>(k, k_cache, slot_mapping, k_scale_cache, workspace, error_record, tiling);
  } else {
    Run<T, S, float>(k, k_cache, slot_mapping, k_scale_cache, workspace, error_record, tiling);
  }
}

template <typename S>
__aicore__ inline void RunForSlot(GM_ADDR k, GM_ADDR k_cache, GM_ADDR slot_mapping, GM_ADDR k_scale_cache,
                                  GM_ADDR workspace, GM_ADDR error_record, const IndexerKQuantTiling& tiling) {
  switch (tiling.k_dtype) {  // aop_dtype: 0 float16, 1 bfloat16, 2 float32
    case 0: RunForScale<half, S>(k, k_cache, slot_mapping, k_scale_cache, workspace, error_record, tiling); break;
    case 1: RunForScale<bfloat16_t, S>(k, k_cache, slot_mapping, k_scale_cache, workspace, error_record, tiling); break;
    case 2: RunForScale<float, S>(k, k_cache, slot_mapping, k_scale_cache, workspace, error_record, tiling); break;
    default: break;  // unreachable: the host validates k's dtype
  }
}

}  // namespace

// k:             [T, D] float16 / bfloat16 / float32 (token rows may be strided)
// k_cache:       int8 [num_blocks, block_size, (1,) D] (blocks cache_block_stride apart)
// slot_mapping:  [T'] int32 or int64
// k_scale_cache: float16 / float32 [num_blocks, block_size, (1,) G] (blocks scale_block_stride apart)
// workspace:     [block_dim] 64-byte check slots (any content)
// error_record:  64 bytes, 8 int64 (kernel/indexer_k_quant_and_cache_tiling.h), written only on an error
extern "C" __global__ __aicore__ void indexer_k_quant_and_cache_kernel(GM_ADDR k, GM_ADDR k_cache,
                                                                       GM_ADDR slot_mapping, GM_ADDR k_scale_cache,
                                                                       GM_ADDR workspace, GM_ADDR error_record,
                                                                       GM_ADDR tiling_gm) {
  // Vector cores only, launched as MIX_AIV_1_0 on block_dim AIV cores: the check phase's hardware
  // SyncAll needs the cross-core scheduler, which an AIV_ONLY launch does not start.
  KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIV_1_0);
  const IndexerKQuantTiling tiling = aop_kernel::LoadTiling<IndexerKQuantTiling>(tiling_gm);
  if (tiling.slot_bytes == 8) {
    RunForSlot<int64_t>(k, k_cache, slot_mapping, k_scale_cache, workspace, error_record, tiling);
  } else {
    RunForSlot<int32_t>(k, k_cache, slot_mapping, k_scale_cache, workspace, error_record, tiling);
  }
}

// The host-side <<<>>> launch, in the kernel's translation unit as CANN's ascendc_library needs it.
// CPU builds define ASCENDC_CPU_DEBUG: the emulator and the real-header check call the kernel alone.
#ifndef ASCENDC_CPU_DEBUG
#include "kernel/indexer_k_quant_and_cache_launch.h"

extern "C" void indexer_k_quant_and_cache_launch(uint32_t block_dim, void* stream, uint8_t* k, uint8_t* k_cache,
                                                 uint8_t* slot_mapping, uint8_t* k_scale_cache, uint8_t* workspace,
                                                 uint8_t* error_record, uint8_t* tiling) {
  indexer_k_quant_and_cache_kernel<<<block_dim, nullptr, stream>>>(k, k_cache, slot_mapping, k_scale_cache, workspace,
                                                                    error_record, tiling);
}
#endif  // ASCENDC_CPU_DEBUG
