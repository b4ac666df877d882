// The AIC side of sparse_flash_attention. Per query row of the group (all N1 heads: m = N1 rows
// of the q tile, N2 = 1) the q tile [m, D | Dr] goes GM -(Nd2Nz)-> L1 once; the row's selected
// positions are gathered tile_keys at a time into an L1 tile of rows [latent D | rope Dr | value D
// when value is not key] (kernel/sparse_flash_attention_gather.h), and per tile:
//   S = Q.K^T      k_chunk columns at a time: L1 -(LoadData)-> L0A (Zz) / L0B (Zn), Mmad
//                  accumulating in L0C (float32), one Fixpipe into the tile's S slot in GM;
//   O_t = P.V      once the AIVs published P (input dtype) in the P slot: GM -(Nd2Nz)-> L1 ->
//                  L0A; V = the tile's latent (or value) columns, L1 -(LoadData, transposed
//                  fractals)-> L0B, n_chunk output columns per Mmad / Fixpipe into the O slot.
// Before the verdict (Warm) the first row's q tile is loaded and the first walk's data-cache
// lines read, reads only. Tiles are double buffered in L1 (gather of tile t + 1 after the P.V of
// tile t - 1); Q.K^T of tile t runs while the AIVs still work on tile t - 1. m is padded to 16 (pad rows copy real ones):
// m = 1 would be GEMV on the cube. No auto-sync exists on the AIC: every hand-off between its
// pipes is a queue event (A1/B1 MTE2->MTE1, A2/B2 MTE1->M, CO1 M->FIX and back on free).
#pragma once
#include "kernel/sparse_flash_attention_check.h"
#include "kernel/sparse_flash_attention_gather.h"
#include "kernel/sparse_flash_attention_handshake.h"
#include "kernel/sparse_flash_attention_rows.h"

namespace sparse_flash_attention {

constexpr int64_t kValueChunksAhead = 2;  // L0B holds two V chunks (b_l0_'s buffers)

template <typename T>
class Cube {
 public:
  __aicore__ inline void Init(GM_ADDR query, GM_ADDR query_rope, GM_ADDR key, GM_ADDR key_rope, GM_ADDR value,
                              GM_ADDR sparse_indices, GM_ADDR block_table, GM_ADDR lengths_q, GM_ADDR lengths_kv,
                              GM_ADDR workspace, const SparseFlashAttentionTiling& tiling) {
    t_ = tiling;
    const int64_t group = AscendC::GetBlockIdx();
    rows_.Init(t_, lengths_q, lengths_kv, group);
    rows_.SetEntries(workspace);
    GM_ADDR slots = workspace + t_.slots_offset;
    gather_.Init(key, key_rope, value, sparse_indices, block_table, t_);
    query_.SetGlobalBuffer((__gm__ T*)query);
    query_rope_.SetGlobalBuffer((__gm__ T*)query_rope);
    GM_ADDR mine = slots + group * t_.workspace_per_aic;
    s_slots_.SetGlobalBuffer((__gm__ float*)mine);
    o_slots_.SetGlobalBuffer((__gm__ float*)mine + 2 * t_.s_slot_floats);
    p_slots_.SetGlobalBuffer((__gm__ T*)((__gm__ float*)mine + 2 * t_.s_slot_floats + 2 * t_.o_slot_floats));
    if (t_.splits > 1) partials_.SetGlobalBuffer((__gm__ float*)(workspace + t_.partials_offset));
    const uint32_t mp = static_cast<uint32_t>(t_.m_pad), kt = static_cast<uint32_t>(t_.tile_keys);
    const uint32_t qk_width = static_cast<uint32_t>(t_.head_dim + t_.rope_dim);
    pipe_.InitBuffer(q_l1_, 1, mp * qk_width * sizeof(T));
    early_ = EarlyHeads(t_);
    if (early_ > 0) {  // P's early rows (2 e) and the rest: together the m_pad rows of one P tile
      pipe_.InitBuffer(pe_l1_, 1, static_cast<uint32_t>(2 * early_) * kt * sizeof(T));
      pipe_.InitBuffer(p_l1_, 1, (mp - static_cast<uint32_t>(2 * early_)) * kt * sizeof(T));
    } else {
      pipe_.InitBuffer(p_l1_, 1, mp * kt * sizeof(T));
    }
    pipe_.InitBuffer(kv_l1_, 2, kt * static_cast<uint32_t>(t_.kv_width) * sizeof(T));
    const uint32_t kc = static_cast<uint32_t>(t_.k_chunk), nc = static_cast<uint32_t>(t_.n_chunk);
    pipe_.InitBuffer(a_l0_, 2, mp * (kc > kt ? kc : kt) * sizeof(T));
    pipe_.InitBuffer(b_l0_, 2, kt * (kc > nc ? kc : nc) * sizeof(T));
    pipe_.InitBuffer(c_l0_, 2, mp * (kt > nc ? kt : nc) * sizeof(float));
  }

  // Before the group's verdict (the AIVs' check phase): the q tile of the first unit's row into
  // L1 (its row number comes from the work split alone: an in-bounds read whatever the data) and
  // the data-cache lines of its first tile's walk (WarmFirstTile). Nothing is written to GM.
  __aicore__ inline void Warm(GM_ADDR lengths_q, GM_ADDR lengths_kv, GM_ADDR sparse_indices, GM_ADDR block_table) {
    if (rows_.Begin() < rows_.End()) {
      const int64_t q = rows_.RowOf(rows_.Begin());
      LoadQuery(q);
      preloaded_ = q;
    }
    WarmFirstTile(t_, lengths_q, lengths_kv, sparse_indices, block_table);
  }

  // ok: the verdict (false: nothing is computed, the preloaded q tile is released). The group's
  // tiles run as one stream across its units: Q.K^T of tile n, then P.V of tile n - 1, also when
  // tile n is the next unit's first (so the AIVs have its S while they finish P of the unit's last
  // tile); the last tile's P.V after the loop.
  __aicore__ inline void Process(bool ok) {
    int64_t tile = 0;  // the group's tiles so far: the hand-off slots
    Row x{};
    for (int64_t u = ok ? NextUnit(rows_.Begin(), x) : rows_.End(); u < rows_.End();) u = ProcessRow(x, tile, u);
    if (pending_) {
      ValueTile(prev_, tile - 1, prev_direct_);
      kv_l1_.FreeTensor(prev_);
      pending_ = false;
    }
    DropQuery();
  }

 private:
  // Rows of the q / P tiles the cube computes: m = 1 would be GEMV (L0A read as ND), so a
  // single head runs as 16 rows (copies of the real one; Fixpipe moves only the real row).
  __aicore__ inline uint16_t MmadRows() const {
    return static_cast<uint16_t>(t_.heads == 1 ? t_.m_pad : t_.heads);
  }

  // The q tile [m_pad, D | Dr] of flat row q into L1 (queued in q_l1_).
  __aicore__ inline void LoadQuery(int64_t q) {
    const int64_t m = t_.heads, d = t_.head_dim, dr = t_.rope_dim;
    LocalTensor<T> q_l1 = q_l1_.template AllocTensor<T>();
    LoadNz(q_l1, query_[static_cast<uint64_t>(q * m * d)], m, d, t_.m_pad);
    if (dr > 0) {
      LoadNz(q_l1[static_cast<uint32_t>(d * t_.m_pad)], query_rope_[static_cast<uint64_t>(q * m * dr)], m, dr,
             t_.m_pad);
    }
    q_l1_.EnQue(q_l1);
  }

  // Releases the preloaded q tile if no row used it.
  __aicore__ inline void DropQuery() {
    if (preloaded_ < 0) return;
    LocalTensor<T> q_l1 = q_l1_.template DeQue<T>();
    q_l1_.FreeTensor(q_l1);
    preloaded_ = -1;
  }

  // The first unit from `u` on with a position in the window (its gather started: x), or
  // rows_.End(). Units without one are skipped: their AIVs zero the row or leave an empty partial.
  __aicore__ inline int64_t NextUnit(int64_t u, Row& x) {
    for (; u < rows_.End(); ++u) {
      x = rows_.GetUnit(u);
      if (x.e1 <= x.e0) continue;
      gather_.Start(x);
      if (gather_.More()) return u;
    }
    return rows_.End();
  }

  // Unit u (x, its gather started); returns the next unit with positions (x becomes it) or
  // rows_.End(). Its last tile's P.V is left pending (prev_): it follows the next unit's first
  // Q.K^T. After its last Q.K^T the unit needs neither its q tile nor a second kv buffer: the q
  // tile is released before the P.V of the tile before is issued, the next unit's q tile and
  // first kv tile loaded after it (its P load goes first on MTE2), so the next unit's first
  // Q.K^T can run before this unit's last P.V (no drain of the pipeline between units). A next
  // unit of the same row (its next split) keeps the q tile in L1 (held_).
  __aicore__ inline int64_t ProcessRow(Row& x, int64_t& tile, int64_t u) {
    if (held_ != x.q) {
      if (preloaded_ != x.q) {
        DropQuery();
        LoadQuery(x.q);
      }
      preloaded_ = -1;
      q_held_ = q_l1_.template DeQue<T>();
      held_ = x.q;
    }
    const LocalTensor<T> q_l1 = q_held_;

    if (!gathered_) GatherTile();
    gathered_ = false;
    for (int64_t t = 0;; ++t) {
      QueryChunk(q_l1, 0);  // needs no kv tile: issued before the wait for the gather
      LocalTensor<T> cur = kv_l1_.template DeQue<T>();
      ScoreTile(q_l1, cur, tile);
      const bool last = !gather_.More();
      // A split row's unit of one tile: its P.V is the unit's partial acc itself (alpha = 0
      // on a row's first tile), written straight into the partials (the AIVs skip its copy)
      const int64_t direct = last && t == 0 && t_.splits > 1 ? x.unit : -1;
      int64_t next = u;
      if (last) {
        // the next unit found while the previous tile's P.V waits for P; the q tile released
        // before that P.V is issued, so that its MTE1 release follows this Q.K^T's loads
        next = NextUnit(u + 1, x);
        if (next >= rows_.End() || x.q != held_) {
          q_l1_.FreeTensor(q_held_);
          held_ = -1;
        }
      }
      if (pending_) {
        ValueTile(prev_, tile - 1, prev_direct_);
        kv_l1_.FreeTensor(prev_);
      }
      prev_ = cur;
      pending_ = true;
      prev_direct_ = direct;
      ++tile;
      if (last) {
        if (next < rows_.End()) {
          if (held_ < 0) {
            LoadQuery(x.q);
            preloaded_ = x.q;
          }
          GatherTile();
          gathered_ = true;
        }
        return next;
      }
      GatherTile();
    }
  }

  __aicore__ inline void GatherTile() {
    LocalTensor<T> kv = kv_l1_.template AllocTensor<T>();
    gather_.Tile(kv);
    kv_l1_.EnQue(kv);
  }

  // rows [n, cols] of an ND source (cols apart) into an L1 NZ tile of n_pad (multiple of 16)
  // rows; rows past n are copies of the first rows (computed, never moved out).
  __aicore__ inline void LoadNz(const LocalTensor<T>& dst, const GlobalTensor<T>& src, int64_t n, int64_t cols,
                                int64_t n_pad) {
    const uint16_t c = static_cast<uint16_t>(cols);
    for (int64_t filled = 0; filled < n_pad;) {
      const int64_t rows = Min(n_pad - filled, n);
      AscendC::DataCopy(dst[static_cast<uint32_t>(filled * kFractal)], src,
                        AscendC::Nd2NzParams(1, static_cast<uint16_t>(rows), c, 0, c, static_cast<uint16_t>(n_pad), 1, 0));
      filled += rows;
    }
  }

  // Fractals [first, first + count) of each row block of an L1 NZ tile with m_pad rows into a
  // Zz L0A tile (row block after row block, `count` fractals each).
  __aicore__ inline void LoadZz(const LocalTensor<T>& dst, const LocalTensor<T>& src, int64_t first, int64_t count) {
    const int64_t blocks = t_.m_pad / kFractal;
    for (int64_t i = 0; i < blocks; ++i) {
      AscendC::LoadData2DParams ld;
      ld.startIndex = static_cast<uint16_t>(first * blocks + i);
      ld.repeatTimes = static_cast<uint8_t>(count);
      ld.srcStride = static_cast<uint16_t>(blocks);
      ld.sid = 0;
      ld.dstGap = 0;
      ld.ifTranspose = false;
      ld.addrMode = 0;
      AscendC::LoadData(dst[static_cast<uint32_t>(i * count * kFractal * kFractal)], src, ld);
    }
  }

  // q's columns [k0, k0 + k_chunk) (or to its end) into an L0A buffer, queued in a_l0_.
  __aicore__ inline void QueryChunk(const LocalTensor<T>& q_l1, int64_t k0) {
    const int64_t kc = Min(t_.k_chunk, t_.head_dim + t_.rope_dim - k0);
    LocalTensor<T> a = a_l0_.template AllocTensor<T>();
    LoadZz(a, q_l1, k0 / kFractal, kc / kFractal);
    a_l0_.EnQue(a);
  }

  // S = Q.K^T of the tile (tile_keys rows, pad rows copies) -> S slot; published to the AIVs.
  // q's first column chunk is already queued in a_l0_ (QueryChunk, issued before the wait for
  // the gathered tile: MTE1 loads it while the gather completes).
  __aicore__ inline void ScoreTile(const LocalTensor<T>& q_l1, const LocalTensor<T>& kv, int64_t tile) {
    const int64_t width = t_.head_dim + t_.rope_dim, kt = t_.tile_keys, key_blocks = kt / kFractal;
    LocalTensor<float> c = c_l0_.template AllocTensor<float>();
    for (int64_t k0 = 0; k0 < width; k0 += t_.k_chunk) {
      const int64_t kc = Min(t_.k_chunk, width - k0);
      if (k0 > 0) QueryChunk(q_l1, k0);
      LocalTensor<T> a = a_l0_.template DeQue<T>();
      // The NZ fractals of the kv rows' columns [k0, k0 + kc) are the Zn fractals of their
      // transpose, in order: one LoadData.
      LocalTensor<T> b = b_l0_.template AllocTensor<T>();
      AscendC::LoadData2DParams ld;
      ld.startIndex = static_cast<uint16_t>(k0 / kFractal * key_blocks);
      ld.repeatTimes = static_cast<uint8_t>(kc / kFractal * key_blocks);
      ld.srcStride = 1;
      ld.sid = 0;
      ld.dstGap = 0;
      ld.ifTranspose = false;
      ld.addrMode = 0;
      AscendC::LoadData(b, kv, ld);
      b_l0_.EnQue(b);
      b = b_l0_.template DeQue<T>();
      AscendC::MmadParams mp;
      mp.m = MmadRows();
      mp.n = static_cast<uint16_t>(kt);
      mp.k = static_cast<uint16_t>(kc);
      mp.cmatrixInitVal = k0 == 0;
      AscendC::Mmad(c, a, b, mp);
      a_l0_.FreeTensor(a);
      b_l0_.FreeTensor(b);
    }
    c_l0_.EnQue(c);
    c = c_l0_.template DeQue<float>();
    AscendC::FixpipeParamsV220 fp;
    fp.nSize = static_cast<uint16_t>(kt);
    fp.mSize = static_cast<uint16_t>(t_.heads);
    fp.srcStride = static_cast<uint16_t>(t_.m_pad);
    fp.dstStride = static_cast<uint32_t>(kt);
    fp.reluEn = false;
    AscendC::Fixpipe(s_slots_[static_cast<uint64_t>(SlotOf(tile) * t_.s_slot_floats)], c, fp);
    c_l0_.FreeTensor(c);
    AscendC::CrossCoreSetFlag<2, PIPE_FIX>(kScoresReady + SlotOf(tile));
  }

  // O_t = P.V of the tile once the AIVs published P -> O slot (direct_unit >= 0: into that
  // unit's partial acc); published to the AIVs. V's first two column chunks go to L0B before the
  // wait for P (they need only the gathered tile): after P the kv buffer is freed two Mmads
  // earlier, and the next gather into it starts sooner.
  __aicore__ inline void ValueTile(const LocalTensor<T>& kv, int64_t tile, int64_t direct_unit = -1) {
    const int64_t kt = t_.tile_keys, key_blocks = kt / kFractal, nc = t_.n_chunk;
    const int64_t chunks = t_.head_dim / nc, ahead = Min(chunks, kValueChunksAhead);
    // With P in two hand-offs only V's first chunk goes ahead of P's rows: MTE1 takes its loads
    // in issue order, and the second chunk's L0B buffer is free only after the last Q.K^T Mmad,
    // so loaded ahead it would hold P's rows (and P.V's first Mmad) behind that Mmad.
    const int64_t before = early_ > 0 ? Min(ahead, static_cast<int64_t>(1)) : ahead;
    for (int64_t i = 0; i < before; ++i) LoadValue(kv, i * nc);
    const int32_t slot = SlotOf(tile);
    LocalTensor<T> a = a_l0_.template AllocTensor<T>();
    if (early_ > 0) {
      // P in two hand-offs (EarlyHeads): the AIVs' early rows [0, e) and [hpa, hpa + e) into
      // their own L1 tile (rows [0, 2e)) and L0A while the AIVs finish their last chunk, then
      // the rest (rows [e, hpa) and [hpa + e, 2 hpa)) into another; each row block of L0A (Zz)
      // at its place in P.
      const int64_t e = early_, hpa = t_.heads_per_aiv, l = hpa - e;
      AscendC::CrossCoreWaitFlag(kProbsEarly + slot);
      LoadProbRows(a, pe_l1_, slot, e, 0, key_blocks);
      AscendC::CrossCoreWaitFlag(kProbsReady + slot);
      LoadProbRows(a, p_l1_, slot, l, e, key_blocks);
      a_l0_.EnQue(a);  // before V's next chunk: P.V's first Mmad need not wait for its load
      for (int64_t i = before; i < ahead; ++i) LoadValue(kv, i * nc);
    } else {
      AscendC::CrossCoreWaitFlag(kProbsReady + slot);
      LocalTensor<T> p = p_l1_.template AllocTensor<T>();
      LoadNz(p, p_slots_[static_cast<uint64_t>(slot * t_.p_slot_elems)], t_.heads, kt, t_.m_pad);
      p_l1_.EnQue(p);
      p = p_l1_.template DeQue<T>();
      LoadZz(a, p, 0, key_blocks);
      p_l1_.FreeTensor(p);
      a_l0_.EnQue(a);
    }
    a = a_l0_.template DeQue<T>();
    for (int64_t c = 0; c < chunks; ++c) {
      const int64_t n0 = c * nc;
      LocalTensor<T> b = b_l0_.template DeQue<T>();
      LocalTensor<float> acc = c_l0_.template AllocTensor<float>();
      AscendC::MmadParams mp;
      mp.m = MmadRows();
      mp.n = static_cast<uint16_t>(nc);
      mp.k = static_cast<uint16_t>(kt);
      mp.cmatrixInitVal = true;
      AscendC::Mmad(acc, a, b, mp);
      b_l0_.FreeTensor(b);
      if (c + ahead < chunks) LoadValue(kv, (c + ahead) * nc);
      c_l0_.EnQue(acc);
      acc = c_l0_.template DeQue<float>();
      AscendC::FixpipeParamsV220 fp;
      fp.nSize = static_cast<uint16_t>(nc);
      fp.mSize = static_cast<uint16_t>(t_.heads);
      fp.srcStride = static_cast<uint16_t>(t_.m_pad);
      fp.dstStride = static_cast<uint32_t>(t_.head_dim);
      fp.reluEn = false;
      const GlobalTensor<float> dst = direct_unit >= 0
                                          ? partials_[static_cast<uint64_t>(direct_unit * t_.partial_floats + n0)]
                                          : o_slots_[static_cast<uint64_t>(slot * t_.o_slot_floats + n0)];
      AscendC::Fixpipe(dst, acc, fp);
      c_l0_.FreeTensor(acc);
    }
    a_l0_.FreeTensor(a);
    AscendC::CrossCoreSetFlag<2, PIPE_FIX>(kOutReady + slot);
  }

  // Rows [r0, r0 + n) of each AIV's heads of the P slot (P rows [r0, r0 + n) and [hpa + r0,
  // hpa + r0 + n), n and r0 multiples of 16) GM -(Nd2Nz)-> an L1 NZ tile of 2n rows queued in
  // `que`, then its 2n / 16 row blocks -> their places in the Zz L0A tile `a` of all m_pad rows.
  template <class Que>
  __aicore__ inline void LoadProbRows(const LocalTensor<T>& a, Que& que, int32_t slot, int64_t n, int64_t r0,
                                      int64_t key_blocks) {
    const int64_t kt = t_.tile_keys, hpa = t_.heads_per_aiv, blocks = 2 * n / kFractal;
    const uint16_t c = static_cast<uint16_t>(kt);
    LocalTensor<T> p = que.template AllocTensor<T>();
    for (int64_t h = 0; h < 2; ++h) {
      AscendC::DataCopy(p[static_cast<uint32_t>(h * n * kFractal)],
                        p_slots_[static_cast<uint64_t>(slot * t_.p_slot_elems + (h * hpa + r0) * kt)],
                        AscendC::Nd2NzParams(1, static_cast<uint16_t>(n), c, 0, c, static_cast<uint16_t>(2 * n), 1, 0));
    }
    que.EnQue(p);
    p = que.template DeQue<T>();
    for (int64_t j = 0; j < blocks; ++j) {
      const int64_t h = j / (n / kFractal), row = h * hpa + r0 + (j % (n / kFractal)) * kFractal;
      AscendC::LoadData2DParams ld;
      ld.startIndex = static_cast<uint16_t>(j);
      ld.repeatTimes = static_cast<uint8_t>(key_blocks);
      ld.srcStride = static_cast<uint16_t>(blocks);
      ld.sid = 0;
      ld.dstGap = 0;
      ld.ifTranspose = false;
      ld.addrMode = 0;
      AscendC::LoadData(a[static_cast<uint32_t>(row / kFractal * key_blocks * kFractal * kFractal)], p, ld);
    }
    que.FreeTensor(p);
  }

  // V [keys, columns n0 .. n0 + n_chunk) into an L0B buffer, queued in b_l0_: fractal (key block
  // kb, column block cb) of the L1 tile (NZ: cb * key_blocks + kb), transposed, goes to fractal
  // kb * col_blocks + cb of L0B: the Zn layout of V itself. One LoadData per column block (its
  // key_blocks fractals are consecutive in L1; dstGap spreads them col_blocks apart) or per key
  // block (its col_blocks fractals key_blocks apart in L1, consecutive in L0B), whichever needs
  // fewer instructions: each LoadData costs its issue and start on MTE1.
  __aicore__ inline void LoadValue(const LocalTensor<T>& kv, int64_t n0) {
    const int64_t key_blocks = t_.tile_keys / kFractal, nc = t_.n_chunk;
    LocalTensor<T> b = b_l0_.template AllocTensor<T>();
    const int64_t col_block = (t_.value_col + n0) / kFractal, col_blocks = nc / kFractal;
    const bool by_column = col_blocks < key_blocks;
    for (int64_t i = 0; i < (by_column ? col_blocks : key_blocks); ++i) {
      AscendC::LoadData2DParams ld;
      ld.startIndex = static_cast<uint16_t>(by_column ? (col_block + i) * key_blocks : col_block * key_blocks + i);
      ld.repeatTimes = static_cast<uint8_t>(by_column ? key_blocks : col_blocks);
      ld.srcStride = static_cast<uint16_t>(by_column ? 1 : key_blocks);
      ld.sid = 0;
      ld.dstGap = static_cast<uint16_t>(by_column ? col_blocks - 1 : 0);
      ld.ifTranspose = true;
      ld.addrMode = 0;
      AscendC::LoadData(b[static_cast<uint32_t>(by_column ? i * kFractal * kFractal : i * nc * kFractal)], kv, ld);
    }
    b_l0_.EnQue(b);
  }

  AscendC::TPipe pipe_;
  AscendC::TQue<AscendC::TPosition::A1, 1> q_l1_, p_l1_, pe_l1_;  // pe_l1_: P's early rows (EarlyHeads)
  AscendC::TQue<AscendC::TPosition::B1, 1> kv_l1_;
  AscendC::TQue<AscendC::TPosition::A2, 1> a_l0_;
  AscendC::TQue<AscendC::TPosition::B2, kValueChunksAhead> b_l0_;  // V chunks queued ahead of P
  AscendC::TQue<AscendC::TPosition::CO1, 1> c_l0_;
  GlobalTensor<T> query_, query_rope_, p_slots_;
  GlobalTensor<float> s_slots_, o_slots_, partials_;
  Rows rows_;
  Gather<T> gather_;
  SparseFlashAttentionTiling t_;
  int64_t early_ = 0;       // EarlyHeads: P rows per AIV of the first hand-off (0: one hand-off)
  int64_t preloaded_ = -1;  // the row whose q tile is queued in q_l1_ and no row has taken yet
  int64_t held_ = -1;       // the row whose q tile q_held_ is (dequeued, kept for its next split)
  LocalTensor<T> q_held_;
  bool gathered_ = false;   // the next unit's first kv tile is queued in kv_l1_
  LocalTensor<T> prev_;     // the kv tile of the last Q.K^T, whose P.V is pending
  bool pending_ = false;
  int64_t prev_direct_ = -1;  // its unit when its P.V goes straight into the partial (ValueTile)
};

}  // namespace sparse_flash_attention
