// advance_step_flashattn AscendC kernel: advances the decode metadata of a multi-step runner
// by one step. Sequences are split evenly across the vector cores; each core stages its
// seq_lens and sampled tokens through UB in chunks (DataCopyPad: byte-exact, no GM padding),
// computes every row on the scalar unit with exact integer division (no float division: that
// is wrong from 2^24 on), reads one block-table entry per advancing row, and writes the four
// outputs back with DataCopyPad. Padding rows (num_queries <= i < num_seqs) get token 0,
// position 0, slot -1 and keep their seq_len. int32 and int64 arrays are told apart at run
// time by their element size in the tiling, so one kernel serves every dtype combination.
// All or nothing: first every core checks its advancing rows exactly as the host's check_data
// does (seq_len >= 0, block index in the table, block id >= 0, no int64 overflow, every value fits
// its output's dtype) while it computes them into UB (every input is read once), and publishes its
// verdict in its workspace slot (aop_kernel/check_slots.h); after SyncAll, no core writes an output if any core found an
// error, and core 0 records the first one (lowest core = lowest row) in the error record.
// Compiles with CANN's compiler on NPU and with g++ against the AscendC emulator.
#include "kernel_operator.h"
#include "aop_kernel/check_slots.h"
#include "aop_kernel/core_share.h"
#include "aop_kernel/load_tiling.h"
#include "kernel/adv_step_flash_tiling.h"

namespace {

// Two UB buffers per queue (InitBuffer) for double buffering, and queue depth 1: there are
// never two EnQue in a row, and depth 1 is the case the compiler optimises (TQue docs).
constexpr int32_t BUFFER_NUM = kAsfBufferNum;
constexpr int32_t QUEUE_DEPTH = 1;
constexpr uint32_t SECTION_ELEM_BYTES = kAsfSectionElemBytes;  // each UB section holds chunk_seqs int64 slots

__aicore__ inline int64_t LoadLocal(const AscendC::LocalTensor<uint8_t>& buf, uint32_t i, int32_t bytes) {
  if (bytes == 8) return buf.ReinterpretCast<int64_t>().GetValue(i);
  return static_cast<int64_t>(buf.ReinterpretCast<int32_t>().GetValue(i));
}

__aicore__ inline void StoreLocal(const AscendC::LocalTensor<uint8_t>& buf, uint32_t i, int64_t v, int32_t bytes) {
  if (bytes == 8) {
    buf.ReinterpretCast<int64_t>().SetValue(i, v);
  } else {
    buf.ReinterpretCast<int32_t>().SetValue(i, static_cast<int32_t>(v));
  }
}

constexpr int64_t kInt64Max = 0x7fffffffffffffffLL;
constexpr int64_t kInt32Max = 0x7fffffffLL;
constexpr int64_t kInt32Min = -0x80000000LL;

// Whether v fits an output array of `bytes` per element (int32 or int64).
__aicore__ inline bool Fits(int64_t v, int32_t bytes) { return bytes == 8 || (v >= kInt32Min && v <= kInt32Max); }

class AdvStepFlashKernel {
 public:
  __aicore__ inline void Init(GM_ADDR input_tokens, GM_ADDR sampled_token_ids, GM_ADDR input_positions,
                              GM_ADDR seq_lens, GM_ADDR slot_mapping, GM_ADDR block_tables,
                              const AdvStepFlashTiling& tiling) {
    t_ = tiling;
    seqs_ = aop_kernel::ThisCoreShare(tiling.seqs_per_core, tiling.cores_with_extra);
    section_ = static_cast<uint32_t>(tiling.chunk_seqs) * SECTION_ELEM_BYTES;

    tokens_.SetGlobalBuffer((__gm__ uint8_t*)input_tokens, tiling.num_seqs * tiling.token_bytes);
    sampled_.SetGlobalBuffer((__gm__ uint8_t*)sampled_token_ids, tiling.num_queries * tiling.sampled_bytes);
    positions_.SetGlobalBuffer((__gm__ uint8_t*)input_positions, tiling.num_seqs * tiling.position_bytes);
    seq_lens_.SetGlobalBuffer((__gm__ uint8_t*)seq_lens, tiling.num_seqs * tiling.seq_len_bytes);
    slots_.SetGlobalBuffer((__gm__ uint8_t*)slot_mapping, tiling.num_seqs * tiling.slot_bytes);
    tables32_.SetGlobalBuffer((__gm__ int32_t*)block_tables);
    tables64_.SetGlobalBuffer((__gm__ int64_t*)block_tables);
    pipe_.InitBuffer(in_queue_, BUFFER_NUM, kAsfInSections * section_);   // seq_lens | sampled_token_ids
    pipe_.InitBuffer(out_queue_, BUFFER_NUM, kAsfOutSections * section_);  // tokens | positions | seq_lens | slots
    pipe_.InitBuffer(check_buf_, aop_kernel::check::UbBytes(tiling.block_dim));
  }

  // The check phase: true when no core found an error. Reads sampled_token_ids, seq_lens and
  // block_tables only. The rows are checked while they are computed into UB: when this core's rows
  // fit one chunk (the usual case), that chunk stays queued for Process to write out; otherwise
  // every chunk is computed here only for its checks, and again in Process.
  __aicore__ inline bool Check(GM_ADDR workspace, GM_ADDR error_record) {
    const int64_t core = AscendC::GetBlockIdx();
    int64_t record[aop_kernel::check::kWords] = {kAsfOk, 0, 0, 0, 0, 0, 0, 0};
    one_chunk_ = seqs_.end - seqs_.begin <= t_.chunk_seqs;
    for (int64_t start = seqs_.begin; start < seqs_.end && record[0] == kAsfOk; start += t_.chunk_seqs) {
      Stage(start, record);
      if (!one_chunk_) Discard();
    }
    const AscendC::LocalTensor<int64_t> slots_ub = check_buf_.Get<int64_t>();
    const int64_t bad = aop_kernel::check::Exchange(pipe_, workspace, core, t_.block_dim, record, slots_ub);
    if (bad < 0) return true;
    if (core == 0) aop_kernel::check::Record(error_record, slots_ub, bad);
    if (one_chunk_ && seqs_.begin < seqs_.end) Discard();
    return false;
  }

  __aicore__ inline void Process() {
    if (one_chunk_) {
      if (seqs_.begin < seqs_.end) CopyOut(seqs_.begin, Count(seqs_.begin), Queries(seqs_.begin));
      return;
    }
    int64_t record[aop_kernel::check::kWords] = {kAsfOk, 0, 0, 0, 0, 0, 0, 0};  // stays clean: Check passed
    for (int64_t start = seqs_.begin; start < seqs_.end; start += t_.chunk_seqs) {
      Stage(start, record);
      CopyOut(start, Count(start), Queries(start));
    }
  }

 private:
  __aicore__ inline uint32_t Count(int64_t start) const {
    const int64_t left = seqs_.end - start;
    return static_cast<uint32_t>(left < t_.chunk_seqs ? left : t_.chunk_seqs);
  }

  // Rows start .. start + Queries(start) of the chunk advance; the rest are padding rows.
  __aicore__ inline uint32_t Queries(int64_t start) const {
    const int64_t q = t_.num_queries - start;
    const uint32_t count = Count(start);
    return static_cast<uint32_t>(q <= 0 ? 0 : (q < count ? q : count));
  }

  // The chunk at `start` in, computed and checked; its outputs wait in out_queue_.
  __aicore__ inline void Stage(int64_t start, int64_t* record) {
    CopyIn(start, Queries(start));
    Compute(start, Count(start), Queries(start), record);
  }

  // Drops a computed chunk unwritten.
  __aicore__ inline void Discard() {
    AscendC::LocalTensor<uint8_t> out = out_queue_.DeQue<uint8_t>();
    out_queue_.FreeTensor(out);
  }

  // Row i's checks in the host's order (host/step.h compute_row); the first failing one fills
  // `record` (words: kernel/adv_step_flash_tiling.h) and returns false. Sets the row's block id.
  __aicore__ inline bool CheckRow(int64_t i, int64_t pos, int64_t token, int64_t* record, int64_t& block) {
    const int64_t bs = t_.block_size;
    record[1] = i;
    if (pos < 0) return Fail(record, kAsfSeqLenNegative, pos);
    const int64_t index = pos / bs;  // exact integer division
    const int64_t offset = pos - index * bs;
    if (index >= t_.max_blocks) return Fail(record, kAsfBlockIndexBeyond, pos, index, bs, t_.max_blocks);
    const uint64_t entry = static_cast<uint64_t>(i * t_.table_row_stride + index);
    block = t_.table_bytes == 8 ? tables64_.GetValue(entry) : static_cast<int64_t>(tables32_.GetValue(entry));
    if (block < 0) return Fail(record, kAsfBlockIdNegative, block, index);
    if (block > (kInt64Max - offset) / bs) return Fail(record, kAsfSlotOverflow, block, index, bs, offset);
    const int64_t slot = block * bs + offset;
    if (pos == kInt64Max) return Fail(record, kAsfSeqLenMax, pos);
    if (!Fits(token, t_.token_bytes)) return Fail(record, kAsfTokenInt32, token);
    if (!Fits(pos, t_.position_bytes)) return Fail(record, kAsfPositionInt32, pos);
    if (!Fits(pos + 1, t_.seq_len_bytes)) return Fail(record, kAsfSeqLenInt32, pos + 1);
    if (!Fits(slot, t_.slot_bytes)) return Fail(record, kAsfSlotInt32, slot);
    return true;
  }

  __aicore__ inline bool Fail(int64_t* record, int64_t code, int64_t value, int64_t aux = 0, int64_t c4 = 0,
                              int64_t c5 = 0) {
    record[0] = code;
    record[2] = value;
    record[3] = aux;
    record[4] = c4;
    record[5] = c5;
    return false;
  }

  __aicore__ inline void CopyIn(int64_t start, uint32_t queries) {
    AscendC::LocalTensor<uint8_t> in = in_queue_.AllocTensor<uint8_t>();
    if (queries > 0) {
      AscendC::DataCopyPadExtParams<uint8_t> pad{false, 0, 0, 0};
      AscendC::DataCopyExtParams lens{1, queries * static_cast<uint32_t>(t_.seq_len_bytes), 0, 0, 0};
      AscendC::DataCopyPad(in, seq_lens_[start * t_.seq_len_bytes], lens, pad);
      AscendC::DataCopyExtParams sampled{1, queries * static_cast<uint32_t>(t_.sampled_bytes), 0, 0, 0};
      AscendC::DataCopyPad(in[section_], sampled_[start * t_.sampled_bytes], sampled, pad);
    }
    in_queue_.EnQue(in);
  }

  // The first row that fails its checks stops the chunk (no output of it is ever written).
  __aicore__ inline void Compute(int64_t start, uint32_t count, uint32_t queries, int64_t* record) {
    AscendC::LocalTensor<uint8_t> in = in_queue_.DeQue<uint8_t>();
    AscendC::LocalTensor<uint8_t> out = out_queue_.AllocTensor<uint8_t>();
    // The scalar unit reads what MTE2 brought in.
    const int32_t mte2_to_s = static_cast<int32_t>(pipe_.FetchEventID(AscendC::HardEvent::MTE2_S));
    AscendC::SetFlag<AscendC::HardEvent::MTE2_S>(mte2_to_s);
    AscendC::WaitFlag<AscendC::HardEvent::MTE2_S>(mte2_to_s);
    const AscendC::LocalTensor<uint8_t> lens_in = in;
    const AscendC::LocalTensor<uint8_t> sampled_in = in[section_];
    const AscendC::LocalTensor<uint8_t> tokens_out = out;
    const AscendC::LocalTensor<uint8_t> positions_out = out[section_];
    const AscendC::LocalTensor<uint8_t> lens_out = out[2 * section_];
    const AscendC::LocalTensor<uint8_t> slots_out = out[3 * section_];
    for (uint32_t r = 0; r < count; ++r) {
      if (r < queries) {
        const int64_t pos = LoadLocal(lens_in, r, t_.seq_len_bytes);
        const int64_t token = LoadLocal(sampled_in, r, t_.sampled_bytes);
        int64_t block = 0;
        if (!CheckRow(start + r, pos, token, record, block)) break;
        StoreLocal(tokens_out, r, token, t_.token_bytes);
        StoreLocal(positions_out, r, pos, t_.position_bytes);
        StoreLocal(lens_out, r, pos + 1, t_.seq_len_bytes);
        StoreLocal(slots_out, r, block * t_.block_size + pos % t_.block_size, t_.slot_bytes);
      } else {  // padding row of a captured graph: seq_lens is left as it is
        StoreLocal(tokens_out, r, 0, t_.token_bytes);
        StoreLocal(positions_out, r, 0, t_.position_bytes);
        StoreLocal(slots_out, r, -1, t_.slot_bytes);
      }
    }
    // MTE3 writes out what the scalar unit wrote.
    const int32_t s_to_mte3 = static_cast<int32_t>(pipe_.FetchEventID(AscendC::HardEvent::S_MTE3));
    AscendC::SetFlag<AscendC::HardEvent::S_MTE3>(s_to_mte3);
    AscendC::WaitFlag<AscendC::HardEvent::S_MTE3>(s_to_mte3);
    out_queue_.EnQue(out);
    in_queue_.FreeTensor(in);
  }

  __aicore__ inline void CopyOut(int64_t start, uint32_t count, uint32_t queries) {
    AscendC::LocalTensor<uint8_t> out = out_queue_.DeQue<uint8_t>();
    WriteSection(tokens_, out, start, count, t_.token_bytes);
    WriteSection(positions_, out[section_], start, count, t_.position_bytes);
    if (queries > 0) WriteSection(seq_lens_, out[2 * section_], start, queries, t_.seq_len_bytes);
    WriteSection(slots_, out[3 * section_], start, count, t_.slot_bytes);
    out_queue_.FreeTensor(out);
  }

  __aicore__ inline void WriteSection(const AscendC::GlobalTensor<uint8_t>& dst,
                                      const AscendC::LocalTensor<uint8_t>& src, int64_t start, uint32_t count,
                                      int32_t bytes) {
    AscendC::DataCopyExtParams params{1, count * static_cast<uint32_t>(bytes), 0, 0, 0};
    AscendC::DataCopyPad(dst[start * bytes], src, params);
  }

  AscendC::TPipe pipe_;
  AscendC::TQue<AscendC::TPosition::VECIN, QUEUE_DEPTH> in_queue_;
  AscendC::TQue<AscendC::TPosition::VECOUT, QUEUE_DEPTH> out_queue_;
  AscendC::GlobalTensor<uint8_t> tokens_, sampled_, positions_, seq_lens_, slots_;
  AscendC::GlobalTensor<int32_t> tables32_;
  AscendC::GlobalTensor<int64_t> tables64_;
  AscendC::TBuf<AscendC::TPosition::VECCALC> check_buf_;  // the check slots (aop_kernel::check)
  AdvStepFlashTiling t_;
  aop_kernel::CoreShare seqs_{0, 0};  // the sequences this core advances
  uint32_t section_ = 0;
  bool one_chunk_ = true;  // this core's rows fit one chunk: Check leaves it queued for Process
};

}  // namespace

// input_tokens [num_seqs] (out)     sampled_token_ids [num_queries(, 1)]
// input_positions [num_seqs] (out)  seq_lens [num_seqs] (in/out)   slot_mapping [num_seqs] (out)
// block_tables [num_seqs, max_blocks_per_seq], rows table_row_stride apart
// tiling: AdvStepFlashTiling. Every integer array is int32 or int64 (its *_bytes in the tiling).
// workspace: [block_dim] 64-byte check slots (any content)
// error_record: 64 bytes, 8 int64 (kernel/adv_step_flash_tiling.h), written only on an error
extern "C" __global__ __aicore__ void adv_step_flash_kernel(GM_ADDR input_tokens, GM_ADDR sampled_token_ids,
                                                            GM_ADDR input_positions, GM_ADDR seq_lens,
                                                            GM_ADDR slot_mapping, GM_ADDR block_tables,
                                                            GM_ADDR workspace, GM_ADDR error_record,
                                                            GM_ADDR tiling_gm) {
  // Vector cores only (DataCopyPad and scalar work, no cube API), launched as MIX_AIV_1_0 on
  // block_dim AIV cores (GetBlockIdx() in [0, block_dim)): the check phase's hardware SyncAll
  // needs the cross-core scheduler, which an AIV_ONLY launch does not start.
  KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIV_1_0);
  const AdvStepFlashTiling tiling = aop_kernel::LoadTiling<AdvStepFlashTiling>(tiling_gm);
  AdvStepFlashKernel op;
  op.Init(input_tokens, sampled_token_ids, input_positions, seq_lens, slot_mapping, block_tables, tiling);
  if (op.Check(workspace, error_record)) op.Process();
}

// The host-side <<<>>> launch, in the kernel's translation unit as CANN's ascendc_library
// needs it (its host stub for the kernel is generated from this file). CPU builds define
// ASCENDC_CPU_DEBUG, as CANN's CPU-debug build does: the emulator and the real-header check
// (ascendc-api-check) call or compile the kernel function alone.
#ifndef ASCENDC_CPU_DEBUG
#include "kernel/adv_step_flash_launch.h"

extern "C" void adv_step_flash_launch(uint32_t block_dim, void* stream, uint8_t* input_tokens,
                                      uint8_t* sampled_token_ids, uint8_t* input_positions, uint8_t* seq_lens,
                                      uint8_t* slot_mapping, uint8_t* block_tables, uint8_t* workspace,
                                      uint8_t* error_record, uint8_t* tiling) {
  adv_step_flash_kernel<<<block_dim, nullptr, stream>>>(input_tokens, sampled_token_ids, input_positions, seq_lens,
                                                        slot_mapping, block_tables, workspace, error_record, tiling);
}
#endif  // ASCENDC_CPU_DEBUG
