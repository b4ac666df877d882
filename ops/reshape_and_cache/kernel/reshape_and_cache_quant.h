// The int8 write of reshape_and_cache (kv_cache_dtype "int8") on the vector unit of Atlas A2 / A3:
//   x (float16 / bfloat16 -> float32: Cast CAST_NONE, exact; float32 as is)
//   y = Div(x, scale)                          float32 division by the per-channel scale
//   y = Add(y, offset)                         when k_offset / v_offset is given
//   y = Mins(Maxs(y, -128), 127)               clamp first (clamp and round commute: integer bounds)
//   r = Cast<int16_t, float>(y, CAST_RINT)     round to an integer, half to even
//   h = Cast<half, int16_t>(r, CAST_NONE)      exact: an integer in [-128, 127]
//   q = Cast<int8_t, half>(h, CAST_NONE)       exact: an integer in range
// A2 has no direct float -> int8 Cast (Cast.md, the Atlas A2 table), and float -> half -> int8
// would round twice (a half holds y only to 1/16 at |y| >= 64). float -> float CAST_RINT (which
// rounds to an integral float on the device, the Floor API's v220 implementation) is avoided:
// the emulator models it as a rounding to float precision, which would hide the step.
// Div is not documented as correctly rounded: the contract's tolerance admits the other
// neighbour at a rounding boundary.
// The scales / offsets come into UB once per core (one DMA each) and become per-channel float32
// tables (H*D floats); core 0 checks their raw bits there (every scale finite and > 0, every
// offset finite) before its slots, so the first error is the host's (host/validate_quant.cpp).
// Sliced launches (a per-channel table, tiling.sliced): a core loads only its channel slice of a
// per-channel table (the cores of token group 0 check theirs), and writes only that slice of its
// tokens' rows, a batch
// of tokens per strided DMA in, the per-channel steps as level-0 repeats (one per token) with the
// table's repeat stride 0.
#pragma once
#include "kernel_operator.h"
#include "aop_kernel/check_slots.h"
#include "kernel/reshape_and_cache_layout.h"
#include "kernel/reshape_and_cache_slots.h"
#include "kernel/reshape_and_cache_tiling.h"

// Orders dependent vector instructions (explicit, not left to the compiler's auto-sync).
__aicore__ inline void RacVecBarrier() {
  using namespace AscendC;  // pipe_t (PIPE_V) is global with CANN, in AscendC in the emulator
  PipeBarrier<PIPE_V>();
}

template <typename TIn, typename S>
class ReshapeAndCacheQuant {
 public:
  __aicore__ inline void Init(AscendC::TPipe& pipe, GM_ADDR key, GM_ADDR value, GM_ADDR key_cache,
                              GM_ADDR value_cache, GM_ADDR slot_mapping, GM_ADDR scales[4],
                              const ReshapeAndCacheTiling& tiling) {
    pipe_ = &pipe;
    tiling_ = tiling;
    key_.SetGlobalBuffer((__gm__ TIn*)key);
    key_cache_.SetGlobalBuffer((__gm__ int8_t*)key_cache, tiling.key_layout.span_elems);
    if (tiling.has_value != 0) {
      value_.SetGlobalBuffer((__gm__ TIn*)value);
      value_cache_.SetGlobalBuffer((__gm__ int8_t*)value_cache, tiling.value_layout.span_elems);
    }
    const uint32_t chunk = static_cast<uint32_t>(tiling.chunk_elems);
    pipe.InitBuffer(in_queue_, kRacBufferNum, chunk * static_cast<uint32_t>(sizeof(TIn)));
    pipe.InitBuffer(out_queue_, kRacBufferNum, chunk);
    pipe.InitBuffer(work_buf_, chunk * 4);
    pipe.InitBuffer(half_buf_, chunk * 2);
    const uint32_t table_bytes = static_cast<uint32_t>(tiling.table_elems * 4);
    pipe.InitBuffer(raw_buf_, table_bytes);
    for (int32_t i = 0; i < 4; ++i) {
      scales_[i] = scales[i];
      if (tiling.scale_dtype[i] >= 0) pipe.InitBuffer(table_buf_[i], table_bytes);
    }
    pipe.InitBuffer(verdict_buf_, 2 * table_bytes);
    slots_.Init(pipe, slot_mapping, tiling_);
  }

  // Loads the tables (k_scale, v_scale, k_offset, v_offset in turn) and the check's first part:
  // the first bad scale / offset of the elements this core checks into `record`, from the raw bits
  // in UB. A whole table is checked by core 0; in a sliced launch a per-channel table is loaded
  // and checked in slices, each by the core of token group 0 that loads it (cores
  // [0, chan_groups)), so the launch reads it once per token group (RacSlots::Check picks the
  // first error over those cores).
  __aicore__ inline void LoadTables(int64_t* record) {
    const int64_t core = AscendC::GetBlockIdx();
    for (int32_t i = 0; i < 4; ++i) {
      if (tiling_.scale_dtype[i] < 0) continue;
      const bool part = tiling_.sliced != 0 && tiling_.scale_numel[i] == RowElems(i);
      const int64_t from = part ? SliceBegin(i) : 0;
      const int64_t count = part ? SliceElems(i) : tiling_.scale_numel[i];
      const bool check = part ? core < tiling_.chan_groups : core == 0;
      LoadRaw(i, from, count);
      // scales: a vector verdict first, the scalar scan (which names the element) only on an
      // error; offsets: the scalar scan
      if (check && record[0] == kRacOk && (i >= 2 || AnyBadScale(i, from, count))) CheckRaw(i, from, count, record);
      LoadTable(i, from, count);
    }
  }

  __aicore__ inline bool Check(GM_ADDR workspace, GM_ADDR error_record, int64_t* record) {
    return slots_.Check(workspace, error_record, record);
  }

  __aicore__ inline void Process() {
    if (tiling_.sliced != 0) {
      ProcessSliced();
      return;
    }
    const bool kv = tiling_.has_value != 0;
    for (int64_t t = slots_.Tokens().begin; t < slots_.Tokens().end; ++t) {
      const int64_t slot = slots_.Slot(t);
      if (slot < 0) continue;  // padding token
      QuantRow(key_[t * tiling_.key_token_stride], key_cache_, tiling_.key_layout, slot, tiling_.key_row_elems, 0, 2);
      if (kv) {
        QuantRow(value_[t * tiling_.value_token_stride], value_cache_, tiling_.value_layout, slot,
                 tiling_.value_row_elems, 1, 3);
      }
    }
  }

 private:
  // The sliced write: this core's channel slice of each of its tokens, batch_tokens at a time.
  __aicore__ inline void ProcessSliced() {
    const int64_t end = slots_.Tokens().end;
    for (int64_t t0 = slots_.Tokens().begin; t0 < end; t0 += tiling_.batch_tokens) {
      const int64_t n = end - t0 < tiling_.batch_tokens ? end - t0 : tiling_.batch_tokens;
      QuantSlices(key_, tiling_.key_token_stride, key_cache_, tiling_.key_layout, t0, n, 0, 2);
      if (tiling_.has_value != 0) {
        QuantSlices(value_, tiling_.value_token_stride, value_cache_, tiling_.value_layout, t0, n, 1, 3);
      }
    }
  }

  // Tokens [t0, t0 + n)'s slice of one tensor: one strided DMA in (slices of 32-element multiples:
  // whole 32-byte blocks in UB, back to back), the conversion, then per written token one DMA per
  // cache group the slice touches (group and slice bounds are multiples of 32 elements, host-checked).
  __aicore__ inline void QuantSlices(const AscendC::GlobalTensor<TIn>& src, int64_t stride,
                                     const AscendC::GlobalTensor<int8_t>& cache, const RacCacheLayout& layout,
                                     int64_t t0, int64_t n, int32_t scale, int32_t offset) {
    const int64_t c0 = SliceBegin(scale), slice = SliceElems(scale);
    AscendC::LocalTensor<TIn> in = in_queue_.template AllocTensor<TIn>();
    const int64_t in_bytes = static_cast<int64_t>(sizeof(TIn));
    AscendC::DataCopyExtParams params{static_cast<uint16_t>(n), static_cast<uint32_t>(slice * in_bytes),
                                      static_cast<uint32_t>((stride - slice) * in_bytes), 0, 0};
    AscendC::DataCopyPadExtParams<TIn> pad{false, 0, 0, 0};
    AscendC::DataCopyPad(in, src[t0 * stride + c0], params, pad);
    in_queue_.EnQue(in);
    Convert(c0, static_cast<uint32_t>(slice), scale, offset, n);
    AscendC::LocalTensor<int8_t> out = out_queue_.template DeQue<int8_t>();
    for (int64_t i = 0; i < n; ++i) {
      const int64_t slot = slots_.Slot(t0 + i);
      if (slot < 0) continue;  // padding token
      for (int64_t j = c0; j < c0 + slice;) {
        const int64_t group_end = (j / layout.group_elems + 1) * layout.group_elems;
        const int64_t piece_end = group_end < c0 + slice ? group_end : c0 + slice;
        RacWriteChunk(cache, layout, slot, j, static_cast<uint32_t>(piece_end - j),
                      out[static_cast<uint32_t>(i * slice + j - c0)]);
        j = piece_end;
      }
    }
    out_queue_.FreeTensor(out);
  }

  // Row elements of the tensor that table `which` (k_scale, v_scale, k_offset, v_offset) scales,
  // and this core's slice of them in a sliced launch.
  __aicore__ inline int64_t RowElems(int32_t which) const {
    return which == 0 || which == 2 ? tiling_.key_row_elems : tiling_.value_row_elems;
  }
  __aicore__ inline int64_t SliceElems(int32_t which) const {
    return which == 0 || which == 2 ? tiling_.key_slice_elems : tiling_.value_slice_elems;
  }
  __aicore__ inline int64_t SliceBegin(int32_t which) const {
    return (AscendC::GetBlockIdx() % tiling_.chan_groups) * SliceElems(which);
  }

  // Whether scale `which` (0 or 1; its raw bits in raw_buf_) holds a value not finite and > 0,
  // by vector integer work on the bits: as signed integers, exactly the positive finite values
  // lie in [1, top] (top: the largest finite's bits, float32 0x7F7FFFFF, float16 0x7BFF,
  // bfloat16 0x7F7F). With p = max(b, 0), the flag (1 - min(p, 1)) + (max(p, top) - top) is 0 for
  // every valid element and at least 1 for any other, and no step overflows; then
  // max |float(flag)| by ReduceMax (finite values only: no NaN semantics involved).
  __aicore__ inline bool AnyBadScale(int32_t which, int64_t from, int64_t count) {
    aop_kernel::check::Sync<AscendC::HardEvent::MTE2_V>(*pipe_);
    const AscendC::LocalTensor<float> d = verdict_buf_.template Get<float>()[static_cast<uint32_t>(tiling_.table_elems)];
    const int32_t dtype = tiling_.scale_dtype[which];
    const int32_t n = static_cast<int32_t>(count);
    if (dtype == kRacFloat32) {
      ScaleFlags<int32_t>(0x7F7FFFFF, from, n);
      AscendC::Cast(d, verdict_buf_.template Get<int32_t>(), AscendC::RoundMode::CAST_RINT, static_cast<uint32_t>(n));
    } else {
      ScaleFlags<int16_t>(dtype == kRacFloat16 ? 0x7BFF : 0x7F7F, from, n);
      AscendC::Cast(d, verdict_buf_.template Get<int16_t>(), AscendC::RoundMode::CAST_NONE, static_cast<uint32_t>(n));
    }
    RacVecBarrier();
    AscendC::Abs(d, d, n);
    RacVecBarrier();
    const AscendC::LocalTensor<float> most = work_buf_.template Get<float>();  // dst and scratch may overlap
    AscendC::ReduceMax(most, d, most, n);
    aop_kernel::check::Sync<AscendC::HardEvent::V_S>(*pipe_);
    return most.template ReinterpretCast<uint32_t>().GetValue(0) != 0;  // +0.0: every flag was 0
  }

  // The flags of AnyBadScale for the raw elements [from, from + n) into the front of verdict_buf_
  // (I: int32_t or int16_t, the bits' width).
  template <typename I>
  __aicore__ inline void ScaleFlags(I top, int64_t from, int32_t n) {
    const AscendC::LocalTensor<I> b = raw_buf_.template Get<I>()[static_cast<uint32_t>(from)];
    const AscendC::LocalTensor<I> p = verdict_buf_.template Get<I>();
    // h from byte 4 * table_elems (32-byte aligned; the float flags go there after h is used)
    const AscendC::LocalTensor<I> h =
        verdict_buf_.template Get<I>()[static_cast<uint32_t>(tiling_.table_elems * 4 / sizeof(I))];
    AscendC::Maxs(p, b, static_cast<I>(0), n);    // p = max(b, 0)
    RacVecBarrier();
    AscendC::Maxs(h, p, top, n);                  // h = max(p, top) - top: > 0 above the finite range
    RacVecBarrier();
    AscendC::Adds(h, h, static_cast<I>(-top), n);
    AscendC::Mins(p, p, static_cast<I>(1), n);    // p = 1 - min(p, 1): 1 for b <= 0
    RacVecBarrier();
    AscendC::Muls(p, p, static_cast<I>(-1), n);
    RacVecBarrier();
    AscendC::Adds(p, p, static_cast<I>(1), n);
    RacVecBarrier();
    AscendC::Add(p, p, h, n);
    RacVecBarrier();
  }

  // Elements [from, from + count) of scale / offset `which` (its raw bits in raw_buf_): every
  // scale finite and > 0, every offset finite, by integer tests on the bits (exponent not all
  // ones; sign clear and not zero).
  __aicore__ inline void CheckRaw(int32_t which, int64_t from, int64_t count, int64_t* record) {
    const int32_t dtype = tiling_.scale_dtype[which];
    aop_kernel::check::Sync<AscendC::HardEvent::MTE2_S>(*pipe_);
    for (int64_t i = from; i < from + count; ++i) {
      uint32_t bits, exp_mask, sign_mask;
      if (dtype == kRacFloat32) {
        bits = raw_buf_.template Get<uint32_t>().GetValue(static_cast<uint32_t>(i));
        exp_mask = 0x7f800000u;
        sign_mask = 0x80000000u;
      } else {
        bits = raw_buf_.template Get<uint16_t>().GetValue(static_cast<uint32_t>(i));
        exp_mask = dtype == kRacFloat16 ? 0x7c00u : 0x7f80u;
        sign_mask = 0x8000u;
      }
      const bool finite = (bits & exp_mask) != exp_mask;
      const bool positive = (bits & sign_mask) == 0 && (bits & ~sign_mask) != 0;
      if (!finite || (which < 2 && !positive)) {
        record[0] = kRacBadScale;
        record[1] = i;
        record[2] = static_cast<int64_t>(bits);
        record[3] = which;
        record[4] = dtype;
        break;
      }
    }
    aop_kernel::check::Sync<AscendC::HardEvent::S_MTE2>(*pipe_);  // raw_buf_ is read before its next load
  }

  // Elements [from, from + count) of the raw scale / offset `which` into raw_buf_ at the same
  // index (its own dtype; from is 0 or a slice's start, a multiple of 32).
  __aicore__ inline void LoadRaw(int32_t which, int64_t from, int64_t count) {
    const int64_t size = tiling_.scale_dtype[which] == kRacFloat32 ? 4 : 2;
    const uint32_t bytes = static_cast<uint32_t>(count * size);
    AscendC::GlobalTensor<uint8_t> gm;
    gm.SetGlobalBuffer((__gm__ uint8_t*)scales_[which] + from * size, bytes);
    AscendC::DataCopyExtParams params{1, bytes, 0, 0, 0};
    AscendC::DataCopyPadExtParams<uint8_t> pad{false, 0, 0, 0};
    AscendC::DataCopyPad(raw_buf_.template Get<uint8_t>()[static_cast<uint32_t>(from * size)], gm, params, pad);
  }

  // Table `which` (per channel, float32, the row of key for 0 / 2, of value for 1 / 3) from the
  // raw values in raw_buf_: as float32 (Cast CAST_NONE from float16 / bfloat16: exact), then
  // widened from one value (per tensor: Duplicate) or H values (per head: one Duplicate per head
  // when a head's floats start 32-byte aligned (D a multiple of 8), else scalar, last element
  // first so the H values at the front are read before they are overwritten). A per-channel
  // table is converted only on [from, from + count) (LoadRaw's elements).
  __aicore__ inline void LoadTable(int32_t which, int64_t from, int64_t count_elems) {
    const int32_t dtype = tiling_.scale_dtype[which];
    const int64_t n = tiling_.scale_numel[which];
    const bool key_side = which == 0 || which == 2;
    const int64_t row = key_side ? tiling_.key_row_elems : tiling_.value_row_elems;
    const int64_t head = key_side ? tiling_.key_head_size : tiling_.value_head_size;
    const AscendC::LocalTensor<float> table = table_buf_[which].template Get<float>();
    aop_kernel::check::Sync<AscendC::HardEvent::MTE2_V>(*pipe_);
    const uint32_t count = static_cast<uint32_t>(count_elems);
    const uint32_t at = static_cast<uint32_t>(from);
    if (dtype == kRacFloat16) {
      AscendC::Cast(table[at], raw_buf_.template Get<half>()[at], AscendC::RoundMode::CAST_NONE, count);
    } else if (dtype == kRacBfloat16) {
      AscendC::Cast(table[at], raw_buf_.template Get<bfloat16_t>()[at], AscendC::RoundMode::CAST_NONE, count);
    } else {
      AscendC::Adds(table[at], raw_buf_.template Get<float>()[at], 0.0f, count);  // a UB -> UB move on the vector unit
    }
    if (n == row) {  // per channel: the table as loaded
      RacVecBarrier();
      aop_kernel::check::Sync<AscendC::HardEvent::V_MTE2>(*pipe_);  // raw_buf_ is read before its next load
      return;
    }
    aop_kernel::check::Sync<AscendC::HardEvent::V_S>(*pipe_);
    if (n == 1) {
      const float v = table.GetValue(0);
      aop_kernel::check::Sync<AscendC::HardEvent::S_V>(*pipe_);
      AscendC::Duplicate(table, v, static_cast<int32_t>(row));
      RacVecBarrier();
    } else if (head % 8 == 0 && n <= kRacMaxHeads) {
      float values[kRacMaxHeads];
      for (int64_t h = 0; h < n; ++h) values[h] = table.GetValue(static_cast<uint32_t>(h));
      aop_kernel::check::Sync<AscendC::HardEvent::S_V>(*pipe_);
      for (int64_t h = n - 1; h >= 0; --h) {
        AscendC::Duplicate(table[static_cast<uint32_t>(h * head)], values[h], static_cast<int32_t>(head));
      }
      RacVecBarrier();
    } else {
      for (int64_t j = row - 1; j >= 0; --j) {
        table.SetValue(static_cast<uint32_t>(j), table.GetValue(static_cast<uint32_t>(j / head)));
      }
      aop_kernel::check::Sync<AscendC::HardEvent::S_V>(*pipe_);
    }
    aop_kernel::check::Sync<AscendC::HardEvent::V_MTE2>(*pipe_);
  }

  // One token's row into `cache` at `slot`, group by group (kernel/reshape_and_cache_layout.h),
  // in chunks: GM -> UB, the conversion, UB -> GM.
  __aicore__ inline void QuantRow(const AscendC::GlobalTensor<TIn>& src, const AscendC::GlobalTensor<int8_t>& cache,
                                  const RacCacheLayout& layout, int64_t slot, int64_t elems, int32_t scale,
                                  int32_t offset) {
    for (int64_t group = 0; group < elems; group += layout.group_elems) {
      for (int64_t done = 0; done < layout.group_elems; done += tiling_.chunk_elems) {
        const int64_t left = layout.group_elems - done;
        const uint32_t count = static_cast<uint32_t>(left < tiling_.chunk_elems ? left : tiling_.chunk_elems);
        CopyIn(src[group + done], count);
        Convert(group + done, count, scale, offset);
        AscendC::LocalTensor<int8_t> buf = out_queue_.template DeQue<int8_t>();
        RacWriteChunk(cache, layout, slot, group + done, count, buf);
        out_queue_.FreeTensor(buf);
      }
    }
  }

  __aicore__ inline void CopyIn(const AscendC::GlobalTensor<TIn>& src, uint32_t count) {
    AscendC::LocalTensor<TIn> buf = in_queue_.template AllocTensor<TIn>();
    AscendC::DataCopyExtParams params{1, count * static_cast<uint32_t>(sizeof(TIn)), 0, 0, 0};
    AscendC::DataCopyPadExtParams<TIn> pad{false, 0, 0, 0};
    AscendC::DataCopyPad(buf, src, params, pad);
    in_queue_.EnQue(buf);
  }

  // `rows` rows of `count` elements (the tables' elements [done, done + count)), from in_queue_
  // to out_queue_.
  __aicore__ inline void Convert(int64_t done, uint32_t count, int32_t scale, int32_t offset, int64_t rows = 1) {
    using AscendC::RoundMode;
    AscendC::LocalTensor<TIn> in = in_queue_.template DeQue<TIn>();
    const AscendC::LocalTensor<float> work = work_buf_.template Get<float>();
    const AscendC::LocalTensor<float> scales = table_buf_[scale].template Get<float>()[static_cast<uint32_t>(done)];
    const uint32_t all = count * static_cast<uint32_t>(rows);
    if constexpr (sizeof(TIn) == 4) {  // float32: divide the input buffer itself
      ByTable(work, in, scales, count, rows, true);
    } else {
      AscendC::Cast(work, in, RoundMode::CAST_NONE, all);
      RacVecBarrier();
      ByTable(work, work, scales, count, rows, true);
    }
    RacVecBarrier();
    in_queue_.FreeTensor(in);
    if (tiling_.scale_dtype[offset] >= 0) {
      ByTable(work, work, table_buf_[offset].template Get<float>()[static_cast<uint32_t>(done)], count, rows, false);
      RacVecBarrier();
    }
    AscendC::Maxs(work, work, -128.0f, all);
    RacVecBarrier();
    AscendC::Mins(work, work, 127.0f, all);
    RacVecBarrier();
    const AscendC::LocalTensor<int16_t> i16 = half_buf_.template Get<int16_t>();
    AscendC::Cast(i16, work, RoundMode::CAST_RINT, all);
    RacVecBarrier();
    const AscendC::LocalTensor<half> h = work.template ReinterpretCast<half>();
    AscendC::Cast(h, i16, RoundMode::CAST_NONE, all);
    RacVecBarrier();
    AscendC::LocalTensor<int8_t> out = out_queue_.template AllocTensor<int8_t>();
    AscendC::Cast(out, h, RoundMode::CAST_NONE, all);
    out_queue_.EnQue(out);
  }

  // dst = src / table (divide) or src + table per row: one row (count form), or `rows` rows
  // `count` floats apart (count a multiple of 8 <= 2040: whole 32-byte blocks) by level-0
  // repeats, one per row, columns of 64 floats (one 256-byte repeat), the table's repeat stride 0.
  __aicore__ inline void ByTable(const AscendC::LocalTensor<float>& dst, const AscendC::LocalTensor<float>& src,
                                 const AscendC::LocalTensor<float>& table, uint32_t count, int64_t rows, bool divide) {
    if (rows == 1) {
      if (divide) {
        AscendC::Div(dst, src, table, static_cast<int32_t>(count));
      } else {
        AscendC::Add(dst, src, table, static_cast<int32_t>(count));
      }
      return;
    }
    const uint8_t stride = static_cast<uint8_t>(count / 8);
    const AscendC::BinaryRepeatParams params(1, 1, 1, stride, stride, 0);
    for (int64_t r0 = 0; r0 < rows; r0 += kRacMaxRepeat) {
      const uint8_t repeats = static_cast<uint8_t>(rows - r0 < kRacMaxRepeat ? rows - r0 : kRacMaxRepeat);
      for (uint32_t col = 0; col < count; col += 64) {
        const uint64_t mask = count - col < 64 ? count - col : 64;
        const uint32_t at = static_cast<uint32_t>(r0) * count + col;
        if (divide) {
          AscendC::Div(dst[at], src[at], table[col], mask, repeats, params);
        } else {
          AscendC::Add(dst[at], src[at], table[col], mask, repeats, params);
        }
      }
    }
  }

  AscendC::TPipe* pipe_ = nullptr;
  AscendC::TQue<AscendC::TPosition::VECIN, 1> in_queue_;
  AscendC::TQue<AscendC::TPosition::VECOUT, 1> out_queue_;
  AscendC::TBuf<AscendC::TPosition::VECCALC> work_buf_, half_buf_, raw_buf_;
  AscendC::TBuf<AscendC::TPosition::VECCALC> table_buf_[4];  // k_scale, v_scale, k_offset, v_offset
  AscendC::TBuf<AscendC::TPosition::VECCALC> verdict_buf_;   // the scale check (AnyBadScale): two tables' room
  GM_ADDR scales_[4] = {nullptr, nullptr, nullptr, nullptr};
  AscendC::GlobalTensor<TIn> key_, value_;
  AscendC::GlobalTensor<int8_t> key_cache_, value_cache_;
  ReshapeAndCacheTiling tiling_;
  RacSlots<S> slots_;
};
