// The AIC side of lightning_indexer: per unit (a work item, or one key split of it), the q tile
// [rows * N1, D] goes GM -(Nd2Nz)-> L1 -(LoadData, Zz)-> L0A once; the unit's keys are walked in
// blocks of block_keys, each block in Mmad tiles of tile_keys keys, each tile one contiguous GM
// run (PA_BSND: part of one cache block found through block_table): GM -(Nd2Nz)-> L1
// -(LoadData: NZ of k = ZN of k^T)-> L0B, Mmad (fp16 / bf16 in, fp32 accumulate, m padded to 16
// so it is never GEMV) into L0C. The Mmads of a chunk of fix_keys keys (as many as L0C holds)
// share one L0C tile, drained by one Fixpipe with ReLU into the block's GM slot [m, block_pad] at
// the chunk's column. Then the slot is published to the group's two AIVs
// (lightning_indexer_handshake.h). With halves (decode: one query row per group) the AIC takes
// two splits of an item at once and alternates their blocks, one for each AIV. Key tiles are double buffered in L1 and L0B, L0C tiles when
// two fit. No auto-sync exists on the AIC: every hand-off between its pipes is a queue event
// (A1/B1 MTE2->MTE1, A2/B2 MTE1->M, CO1 M->FIX and back on free).
// The first key block is computed while the AIVs still check the inputs; the verdict
// (CubeVerdict, kernel/lightning_indexer_check.h) is awaited before that block is published.
#pragma once
#include "kernel/lightning_indexer_check.h"
#include "kernel/lightning_indexer_handshake.h"
#include "kernel/lightning_indexer_work.h"

namespace lightning_indexer {

template <typename T>
class Cube {
 public:
  __aicore__ inline void Init(GM_ADDR query, GM_ADDR key, GM_ADDR lengths_q, GM_ADDR lengths_k, GM_ADDR block_table,
                              GM_ADDR residual, GM_ADDR check_lines, GM_ADDR workspace, const LightningIndexerTiling& tiling) {
    t_ = tiling;
    verdict_.Init(check_lines, t_.block_dim);
    const int64_t group = AscendC::GetBlockIdx();
    work_.Init(t_, lengths_q, lengths_k, residual, group);
    table_.Init(block_table, t_.table_bytes);
    q_total_ = QueryRowsTotal(t_);
    key_total_ = KeyRowsTotal(t_);
    query_.SetGlobalBuffer((__gm__ T*)query, q_total_ * t_.heads * t_.head_dim);
    key_.SetGlobalBuffer((__gm__ T*)key, KeySpanElements(t_, key_total_));
    workspace_.SetGlobalBuffer((__gm__ float*)workspace + group * t_.workspace_per_aic, t_.workspace_per_aic);
    const uint32_t d = static_cast<uint32_t>(t_.head_dim);
    pipe_.InitBuffer(q_l1_, 1, t_.m_pad * d * sizeof(T));
    pipe_.InitBuffer(k_l1_, 2, t_.tile_keys * d * sizeof(T));
    pipe_.InitBuffer(q_l0_, 1, t_.m_pad * d * sizeof(T));
    pipe_.InitBuffer(k_l0_, 2, t_.tile_keys * d * sizeof(T));
    pipe_.InitBuffer(c_l0_, t_.c_buffers, t_.m_pad * t_.fix_keys * sizeof(float));
  }

  __aicore__ inline void Process() {
    handshake_.Init(t_.slots);
    const int64_t step = work_.Step();
    for (int64_t u = work_.Begin(); u < work_.End(); u += step) {
      const Item x = work_.GetUnit(u);
      const Item y = step == 2 ? work_.GetUnit(u + 1) : x;
      // y (a later split) is empty when x is; false: the verdict is an error, nothing was published
      if (x.k1 > x.k0 && !ProcessItem(x, y, step == 2)) break;
    }
    verdict_.Ok();  // consumes the verdict also when this AIC had no block
    handshake_.Drain();
  }

 private:
  // Unit x, or (pair) units x and y, two splits of one item: the q tile once, then their blocks
  // alternately (x's n-th, y's n-th, ...: AIV 0 takes x's, AIV 1 y's). False when the verdict is an
  // error (learnt before the first block is published): the unit is abandoned.
  __aicore__ inline bool ProcessItem(const Item& x, const Item& y, bool pair) {
    const int64_t n1 = t_.heads, d = t_.head_dim;
    const int64_t m = (x.real_end - x.r0) * n1, m_pad = RoundUp(m, kFractalRows);
    int64_t first_q = (x.q_begin + x.r0) * n1;  // first row of the q tile, in [*, D] rows
    if (first_q < 0 || first_q >= q_total_ * n1) first_q = 0;  // bad lengths: see CubeVerdict

    LocalTensor<T> q_l1 = q_l1_.template AllocTensor<T>();
    LoadNz(q_l1, query_[first_q * d], m, m_pad, q_total_ * n1 - first_q);
    q_l1_.EnQue(q_l1);
    q_l1 = q_l1_.template DeQue<T>();
    LocalTensor<T> q_l0 = q_l0_.template AllocTensor<T>();
    const int64_t d_fractals = d / kFractalRows;
    for (int64_t i = 0; i < m_pad / kFractalRows; ++i) {  // fractal row i of NZ -> Zz row block i
      AscendC::LoadData2DParams ld;
      ld.startIndex = static_cast<uint16_t>(i);
      ld.repeatTimes = static_cast<uint8_t>(d_fractals);
      ld.srcStride = static_cast<uint16_t>(m_pad / kFractalRows);
      ld.sid = 0;
      ld.dstGap = 0;
      ld.ifTranspose = false;
      ld.addrMode = 0;
      AscendC::LoadData(q_l0[i * d_fractals * kFractalRows * kFractalRows], q_l1, ld);
    }
    q_l1_.FreeTensor(q_l1);
    q_l0_.EnQue(q_l0);
    q_l0 = q_l0_.template DeQue<T>();

    // The key tiles of the hand-offs in order, each tile's GM -> L1 load issued before the last
    // one's LoadData / Mmad wait for theirs: the DMA latency of one overlaps the other's transfer
    // and the cube work (k_l1 holds two tiles).
    const int64_t bx = work_.Blocks(x), by = pair ? work_.Blocks(y) : 0, handoffs = bx + by;
    const int64_t tile = t_.tile_keys, fix = t_.fix_keys;
    int64_t h = 0, off = 0;
    Item cur = work_.Hand(x, y, by, h);
    int64_t j0 = cur.k0, nb = Min(t_.block_keys, cur.k1 - j0);
    IssueTile(cur, j0, Min(tile, nb));
    int32_t slot = 0;
    LocalTensor<float> c;
    while (true) {
      int64_t nh = h, noff = off + tile;
      if (noff >= nb) {
        ++nh;
        noff = 0;
      }
      Item next = cur;
      int64_t next_j0 = j0, next_nb = nb;
      if (nh < handoffs) {
        if (nh != h) {
          next = work_.Hand(x, y, by, nh);
          next_j0 = next.k0;
          next_nb = Min(t_.block_keys, next.k1 - next_j0);
        }
        IssueTile(next, next_j0 + noff, Min(tile, next_nb - noff));
      }
      const int64_t c0 = off / fix * fix, chunk = Min(fix, nb - c0);
      if (off == 0) slot = handshake_.Acquire();
      if (off == c0) c = c_l0_.template AllocTensor<float>();
      // columns [i, i + tile) of the NZ L0C tile start at i * m_pad (16-column fractal blocks of m_pad rows)
      MmadTile(q_l0, c[static_cast<uint32_t>((off - c0) * m_pad)], Min(tile, nb - off), m, m_pad);
      if (off + tile >= c0 + chunk) {
        DrainChunk(c, chunk, m, m_pad, slot * t_.slot_floats + c0);
        if (c0 + chunk >= nb) {
          if (!verdict_.Ok()) {
            if (nh < handoffs) {  // the next tile was issued
              LocalTensor<T> issued = k_l1_.template DeQue<T>();
              k_l1_.FreeTensor(issued);
            }
            q_l0_.FreeTensor(q_l0);
            return false;
          }
          handshake_.Publish(slot);
        }
      }
      if (nh >= handoffs) break;
      h = nh;
      off = noff;
      cur = next;
      j0 = next_j0;
      nb = next_nb;
    }
    q_l0_.FreeTensor(q_l0);
    return true;
  }

  // rows [n, D] of src into an L1 NZ tile of n_pad (multiple of 16) rows; rows past n are copies
  // of loaded rows (read only where the GM run has them: `available` rows), never used.
  __aicore__ inline void LoadNz(const LocalTensor<T>& dst, const GlobalTensor<T>& src, int64_t n, int64_t n_pad,
                                int64_t available) {
    const uint16_t d = static_cast<uint16_t>(t_.head_dim);
    int64_t filled = Min(n_pad, available);
    AscendC::DataCopy(dst, src, AscendC::Nd2NzParams(1, static_cast<uint16_t>(filled), d, 0, d,
                                                     static_cast<uint16_t>(n_pad), 1, 0));
    while (filled < n_pad) {
      const int64_t c = Min(n_pad - filled, Min(n, available));  // n <= available unless the lengths are bad
      AscendC::DataCopy(dst[static_cast<uint32_t>(filled * kFractalRows)], src,
                        AscendC::Nd2NzParams(1, static_cast<uint16_t>(c), d, 0, d, static_cast<uint16_t>(n_pad), 1, 0));
      filled += c;
    }
  }

  // The L0C tile of a chunk of n keys (its Mmads done) -> ReLU -> the slot's columns at `at`.
  __aicore__ inline void DrainChunk(LocalTensor<float>& c, int64_t n, int64_t m, int64_t m_pad, int64_t at) {
    c_l0_.EnQue(c);
    c = c_l0_.template DeQue<float>();
    AscendC::FixpipeParamsV220 fp;
    fp.nSize = static_cast<uint16_t>(n);
    fp.mSize = static_cast<uint16_t>(m);
    fp.srcStride = static_cast<uint16_t>(m_pad);
    fp.dstStride = static_cast<uint32_t>(t_.block_pad);
    fp.reluEn = true;  // ReLU on the way out of L0C
    AscendC::Fixpipe(workspace_[static_cast<uint64_t>(at)], c, fp);
    c_l0_.FreeTensor(c);
  }

  // Keys [j0, j0 + n) (n <= tile_keys) of unit x: GM -> L1 (NZ), queued in k_l1_.
  __aicore__ inline void IssueTile(const Item& x, int64_t j0, int64_t n) {
    const int64_t d = t_.head_dim, n_pad = RoundUp(n, kFractalRows);
    // Before the verdict the lengths and block ids are unchecked: a row or block id outside the
    // tensor (only possible with bad inputs, whose verdict is an error) reads row 0 instead.
    int64_t at, available;  // at: the tile's first element in key
    if (t_.layout_key == 2) {  // PA_BSND: a tile never crosses a cache block (tile_keys | block_size)
      const int64_t entry = j0 / t_.block_size;
      int64_t block = entry >= 0 && entry < t_.max_blocks ? table_.Get(x.batch * t_.max_blocks + entry) : -1;
      if (block < 0 || block >= key_total_ / t_.block_size) block = 0;
      at = block * t_.key_block_stride + (j0 % t_.block_size) * d;
      available = t_.block_size - j0 % t_.block_size;
    } else {
      int64_t row = x.k_begin + j0;
      if (row < 0 || row >= key_total_) row = 0;
      at = row * d;
      available = key_total_ - row;
    }
    LocalTensor<T> k_l1 = k_l1_.template AllocTensor<T>();
    LoadNz(k_l1, key_[at], n, n_pad, available);
    k_l1_.EnQue(k_l1);
  }

  // q . k^T of the q tile against the oldest queued key tile (n keys) into c.
  __aicore__ inline void MmadTile(const LocalTensor<T>& q_l0, const LocalTensor<float>& c, int64_t n, int64_t m,
                                  int64_t m_pad) {
    const int64_t d = t_.head_dim, n_pad = RoundUp(n, kFractalRows);
    LocalTensor<T> k_l1 = k_l1_.template DeQue<T>();
    LocalTensor<T> k_l0 = k_l0_.template AllocTensor<T>();
    AscendC::LoadData2DParams ld;  // the NZ fractals of k [n, D] are the ZN fractals of k^T, in order
    ld.startIndex = 0;
    ld.repeatTimes = static_cast<uint8_t>((n_pad / kFractalRows) * (d / kFractalRows));
    ld.srcStride = 1;
    ld.sid = 0;
    ld.dstGap = 0;
    ld.ifTranspose = false;
    ld.addrMode = 0;
    AscendC::LoadData(k_l0, k_l1, ld);
    k_l1_.FreeTensor(k_l1);
    k_l0_.EnQue(k_l0);
    k_l0 = k_l0_.template DeQue<T>();
    // m = 1 (one head, one row) would switch the cube to GEMV, which reads L0A as ND instead of
    // the Zz tile prepared here: pass m_pad (16) then. The padding rows are copies of real rows;
    // Fixpipe moves only the m real ones.
    AscendC::MmadParams mp;
    mp.m = static_cast<uint16_t>(m == 1 ? m_pad : m);
    mp.n = static_cast<uint16_t>(n);
    mp.k = static_cast<uint16_t>(d);
    AscendC::Mmad(c, q_l0, k_l0, mp);
    k_l0_.FreeTensor(k_l0);
  }

  AscendC::TPipe pipe_;
  AscendC::TQue<AscendC::TPosition::A1, 1> q_l1_;
  AscendC::TQue<AscendC::TPosition::B1, 2> k_l1_;  // depth 2: the next tile is queued before this one is used
  AscendC::TQue<AscendC::TPosition::A2, 1> q_l0_;
  AscendC::TQue<AscendC::TPosition::B2, 1> k_l0_;
  AscendC::TQue<AscendC::TPosition::CO1, 1> c_l0_;
  GlobalTensor<T> query_, key_;
  GlobalTensor<float> workspace_;
  IndexTensor table_;
  Work work_;
  CubeHandshake handshake_;
  CubeVerdict verdict_;
  LightningIndexerTiling t_;
  int64_t q_total_ = 0;
  int64_t key_total_ = 0;
};

}  // namespace lightning_indexer
