// The AIC's gather of a row's selected positions into an L1 tile (NZ, tile_keys rows):
// columns [0, D) the latent row (K, and V when value is key), [D, D + Dr) the rope row,
// [value_col, value_col + D) the value row when value is a separate tensor. The DMA plan: the
// positions come as runs of consecutive positions (an entry's sbs positions, and consecutive
// entries that continue each other), cut at cache-block ends (PA_BSND) and at the tile's end;
// each run is one Nd2Nz DataCopy per segment (nValue = run length, srcDValue = the row stride):
// a random decode gather (sbs = 1) costs one 1 KiB + one 128 B descriptor per position, sbs = 16
// one per 16 positions. Rows past the row's last position (the tile's padding to tile_keys)
// are copies of its last position: their scores equal a real one (the row maximum is unchanged)
// and the AIVs give them probability 0.
#pragma once
#include "kernel/sparse_flash_attention_rows.h"

namespace sparse_flash_attention {

template <typename T>
class Gather {
 public:
  __aicore__ inline void Init(GM_ADDR key, GM_ADDR key_rope, GM_ADDR value, GM_ADDR sparse_indices,
                              GM_ADDR block_table, const SparseFlashAttentionTiling& t) {
    t_ = &t;
    key_.SetGlobalBuffer((__gm__ T*)key);
    key_rope_.SetGlobalBuffer((__gm__ T*)key_rope);
    value_.SetGlobalBuffer((__gm__ T*)value);
    table_.Init(t.layout_kv == 2 ? block_table : nullptr);
    positions_.Init(sparse_indices, t);
  }

  __aicore__ inline void Start(const Row& x) {
    positions_.Start(x);
    batch_ = x.batch;
    kv_base_ = x.kv_base;
  }
  __aicore__ inline bool More() { return positions_.More(); }

  // The next tile_keys positions of the row (or its last ones, padded) into kv; returns how many
  // are real.
  __aicore__ inline int64_t Tile(const LocalTensor<T>& kv) {
    const int64_t kt = t_->tile_keys;
    int64_t filled = 0, run_p = 0, run_len = 0, p = 0, len = 0;
    while (filled + run_len < kt && positions_.Next(kt - filled - run_len, p, len)) {
      if (run_len > 0 && p == run_p + run_len && Contiguous(p)) {
        run_len += len;
        continue;
      }
      if (run_len > 0) filled += Copy(kv, filled, run_p, run_len);
      run_p = p;
      run_len = len;
    }
    if (run_len > 0) filled += Copy(kv, filled, run_p, run_len);
    const int64_t real = filled;
    const int64_t last = run_p + run_len - 1;
    while (filled < kt) filled += Copy(kv, filled, last, 1);
    return real;
  }

 private:
  // Whether position p continues p - 1 in memory (PA_BSND: within one cache block).
  __aicore__ inline bool Contiguous(int64_t p) const { return t_->layout_kv != 2 || p % t_->block_size != 0; }

  // Positions [p, p + len) into tile rows [row, row + len), split at cache-block ends.
  __aicore__ inline int64_t Copy(const LocalTensor<T>& kv, int64_t row, int64_t p, int64_t len) {
    const SparseFlashAttentionTiling& t = *t_;
    for (int64_t done = 0; done < len;) {
      const int64_t pos = p + done;
      int64_t key_at, rope_at, n = len - done;
      if (t.layout_kv == 2) {
        const int64_t block = table_.Get(batch_ * t.max_blocks + pos / t.block_size), in = pos % t.block_size;
        n = Min(n, t.block_size - in);
        key_at = block * t.kv_block_stride + in * t.head_dim;
        rope_at = block * t.rope_block_stride + in * t.rope_dim;
      } else {
        key_at = (kv_base_ + pos) * t.head_dim;
        rope_at = (kv_base_ + pos) * t.rope_dim;
      }
      const uint32_t at = static_cast<uint32_t>((row + done) * kFractal);
      // column c (a multiple of 16) of NZ row 0 is c / 16 column blocks of tile_keys rows in
      const int64_t seg = t.tile_keys;
      Segment(kv[at], key_, key_at, t.head_dim, n);
      if (t.rope_dim > 0) Segment(kv[at + static_cast<uint32_t>(t.head_dim * seg)], key_rope_, rope_at, t.rope_dim, n);
      if (!t.value_is_key) Segment(kv[at + static_cast<uint32_t>(t.value_col * seg)], value_, key_at, t.head_dim, n);
      done += n;
    }
    return len;
  }

  // n consecutive rows of `cols` elements at src[at] into the NZ tile at dst (its first row).
  __aicore__ inline void Segment(const LocalTensor<T>& dst, const GlobalTensor<T>& src, int64_t at, int64_t cols,
                                 int64_t n) {
    const uint16_t c = static_cast<uint16_t>(cols);
    AscendC::DataCopy(dst, src[static_cast<uint64_t>(at)],
                      AscendC::Nd2NzParams(1, static_cast<uint16_t>(n), c, 0, c,
                                           static_cast<uint16_t>(t_->tile_keys), 1, 0));
  }

  const SparseFlashAttentionTiling* t_ = nullptr;
  GlobalTensor<T> key_, key_rope_, value_;
  Int32Gm table_;
  Positions positions_;
  int64_t batch_ = 0;
  int64_t kv_base_ = 0;
};

// Before its group's verdict (kernel/sparse_flash_attention_kernel.cpp) the AIC is idle for the
// whole check phase; the walk of its first tile (the scalar unit reading indices and block-table
// entries from GM, a data-cache miss per 64-byte line) is on the critical path right after it.
// So the AIC reads, while the AIVs check, one entry per data-cache line of what that walk will
// read: the first unit's first ceil(tile_keys / sbs) entries from its guessed first entry
// (split * n / splits, balanced a * n / row_tiles: the check phase's E is n unless the row holds a -1) and the first
// kWarmTableEntries block-table entries of its batch. Only loads of inputs, each index clamped
// into its tensor (the lengths are not checked yet: they only choose which lines), nothing
// written: a wrong guess or bad data costs the wasted reads only.
constexpr int64_t kWarmTableEntries = 64;  // 4 data-cache lines of block ids at most
constexpr int64_t kLineInt32 = 16;          // int32 per 64-byte data-cache line

__aicore__ inline void WarmFirstTile(const SparseFlashAttentionTiling& t, GM_ADDR lengths_q, GM_ADDR lengths_kv,
                                     GM_ADDR sparse_indices, GM_ADDR block_table) {
  Rows rows;
  rows.Init(t, lengths_q, lengths_kv, AscendC::GetBlockIdx());
  if (rows.Begin() >= rows.End()) return;
  const int64_t u = rows.Begin();
  const Row x = rows.Get(rows.RowOf(u));
  if (!x.in_batch || x.n <= 0 || x.batch < 0 || x.batch >= t.batch) return;
  const int64_t n = Min(x.n, t.topk);
  const int64_t e0 = Min(rows.FirstEntry(u, n), t.topk - 1);
  const int64_t count = Min(t.topk - e0, CeilDiv(t.tile_keys, t.sparse_block_size));
  int32_t sink = 0;
  GlobalTensor<int32_t> gm;
  gm.SetGlobalBuffer((__gm__ int32_t*)sparse_indices);
  const int64_t first = x.q * t.topk + e0;
  for (int64_t i = 0; i < count; i += kLineInt32) sink |= gm.GetValue(static_cast<uint64_t>(first + i));
  sink |= gm.GetValue(static_cast<uint64_t>(first + count - 1));
  if (t.layout_kv == 2 && block_table != nullptr) {
    gm.SetGlobalBuffer((__gm__ int32_t*)block_table);
    const int64_t at = x.batch * t.max_blocks, entries = Min(t.max_blocks, kWarmTableEntries);
    for (int64_t i = 0; i < entries; i += kLineInt32) sink |= gm.GetValue(static_cast<uint64_t>(at + i));
    sink |= gm.GetValue(static_cast<uint64_t>(at + entries - 1));
  }
  volatile int32_t keep = sink;  // the loads are the point: not dead code
  (void)keep;
}

}  // namespace sparse_flash_attention
