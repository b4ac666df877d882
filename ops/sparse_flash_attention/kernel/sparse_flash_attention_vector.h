// The AIV side of sparse_flash_attention: the two AIVs of a group split each row's heads (AIV 0
// heads [0, heads_per_aiv), AIV 1 the rest) and keep, per own head, the running max m and sum l
// (float32) and the output accumulator acc [D] (float32) in UB. Per row: the number of selected
// positions |P| from the row's first n indices (UB copies, scalar walk); no position: zeros.
// Per tile (the AIC's hand-offs, kernel/sparse_flash_attention_handshake.h):
//   softmax    S (float32, GM slot) * scale; per head the tile max -> m' = max(m, max), alpha =
//              exp(m - m'); e = exp(s - m') (0 on the tile's padding); l = l * alpha + sum(e), l
//              kept per head as 8 lanes (a level-0 Add tree folds each head's e to 8 columns:
//              no per-head ReduceSum) and summed once at the row's end;
//              P = e rounded to the input dtype -> GM P slot (software-pipelined over head
//              chunks: the next chunk's max while the scalar unit does this chunk's statistics);
//   accumulate after the AIC's P.V of the tile: acc = acc * alpha + O_t.
// At the row's end: out = acc / l rounded to the input dtype once; softmax_max = m,
// softmax_sum = l. A split row (splits > 1) leaves acc, m and l of its split in GM instead, for
// kernel/sparse_flash_attention_combine.h. The accumulate of tile t runs after the softmax of tile t + 1 (the AIC's P.V
// of tile t overlaps it). Every hand-off between pipes is explicit (queue events,
// SetFlag/WaitFlag with FetchEventID ids, PipeBarrier<PIPE_V> between dependent vector ops).
#pragma once
#include "kernel/sparse_flash_attention_handshake.h"
#include "kernel/sparse_flash_attention_rows.h"

namespace sparse_flash_attention {

constexpr int32_t kBlockFloats = 8;    // floats of one 32-byte block
constexpr int32_t kRepeatFloats = 64;  // floats of one 256-byte vector repeat
constexpr int32_t kMaxInBuffers = 6;   // S / O chunk buffers at most (tiling.in_buffers)

// Scratch floats of ReduceMax / ReduceSum over n floats: one value per 64-float repeat and
// the second level's, rounded up (ReduceMax.md); never less than one repeat.
__aicore__ inline int64_t WorkFloats(int64_t n) { return RoundUp(n, 64) + 64; }

template <typename T>
class Vector {
 public:
  __aicore__ inline void Init(GM_ADDR sparse_indices, GM_ADDR lengths_q, GM_ADDR lengths_kv, GM_ADDR attention_out,
                              GM_ADDR softmax_max, GM_ADDR softmax_sum, GM_ADDR workspace,
                              const SparseFlashAttentionTiling& tiling) {
    t_ = tiling;
    const int64_t group = AscendC::GetBlockIdx() / AscendC::GetTaskRatio();
    rows_.Init(t_, lengths_q, lengths_kv, group);
    rows_.SetEntries(workspace);
    GM_ADDR slots = workspace + t_.slots_offset;
    if (t_.splits > 1) partials_.SetGlobalBuffer((__gm__ float*)(workspace + t_.partials_offset));
    const int64_t sub = AscendC::GetSubBlockIdx();
    h0_ = Min(sub * t_.heads_per_aiv, t_.heads);
    hn_ = Min(h0_ + t_.heads_per_aiv, t_.heads) - h0_;
    early_ = EarlyHeads(t_);
    indices_.SetGlobalBuffer((__gm__ int32_t*)sparse_indices);
    out_.SetGlobalBuffer((__gm__ T*)attention_out);
    if (t_.has_lse) {
      max_.SetGlobalBuffer((__gm__ float*)softmax_max);
      sum_.SetGlobalBuffer((__gm__ float*)softmax_sum);
    }
    GM_ADDR mine = slots + group * t_.workspace_per_aic;
    s_slots_.SetGlobalBuffer((__gm__ float*)mine);
    o_slots_.SetGlobalBuffer((__gm__ float*)mine + 2 * t_.s_slot_floats);
    p_slots_.SetGlobalBuffer((__gm__ T*)((__gm__ float*)mine + 2 * t_.s_slot_floats + 2 * t_.o_slot_floats));

    const uint32_t kt = static_cast<uint32_t>(t_.tile_keys), d = static_cast<uint32_t>(t_.head_dim);
    const uint32_t sh = static_cast<uint32_t>(t_.softmax_heads), oh = static_cast<uint32_t>(t_.out_heads);
    const uint32_t hp = static_cast<uint32_t>(RoundUp(t_.heads_per_aiv, kBlockFloats));
    // S chunks (softmax) and O chunks (accumulate) share one queue: a tile's softmax frees every
    // S buffer before an accumulate takes one, and the reverse
    const uint32_t in_bytes = sh * kt > oh * d ? sh * kt * sizeof(float) : oh * d * sizeof(float);
    pipe_.InitBuffer(in_, static_cast<uint32_t>(t_.in_buffers), in_bytes);
    pipe_.InitBuffer(p_out_, 2, sh * kt * sizeof(T));
    pipe_.InitBuffer(y_out_, 2, oh * d * sizeof(T));
    pipe_.InitBuffer(acc_buf_, static_cast<uint32_t>(t_.heads_per_aiv) * d * sizeof(float));
    pipe_.InitBuffer(max_buf_, 2 * hp * sizeof(float));  // two units' m, l (stats_)
    pipe_.InitBuffer(sum_buf_, 2 * hp * sizeof(float));
    pipe_.InitBuffer(lanes_buf_, hp * kBlockFloats * sizeof(float));
    pipe_.InitBuffer(alpha_buf_, 2 * hp * sizeof(float));
    pipe_.InitBuffer(zero_buf_, hp * sizeof(float));
    pipe_.InitBuffer(diff_buf_, static_cast<uint32_t>(RoundUp(sh, kBlockFloats)) * sizeof(float));
    pipe_.InitBuffer(red_buf_, 2 * static_cast<uint32_t>(RoundUp(2 * sh, kBlockFloats)) * sizeof(float));
    pipe_.InitBuffer(work_buf_, static_cast<uint32_t>(WorkFloats(kt)) * sizeof(float));
    pipe_.InitBuffer(mask_buf_, kt * sizeof(float));
    pipe_.InitBuffer(blocks_buf_, sh * kBlockFloats * sizeof(float));
    pipe_.InitBuffer(diff_blocks_buf_, sh * kBlockFloats * sizeof(float));
    pipe_.InitBuffer(alpha_blocks_buf_, sh * kBlockFloats * sizeof(float));
    in_floats_ = static_cast<int64_t>(in_bytes / sizeof(float));
    pipe_.InitBuffer(minus_inf_buf_, hp * sizeof(float));
    AscendC::Duplicate(zero_buf_.Get<float>(), 0.0f, static_cast<int32_t>(hp));
    AscendC::Duplicate(minus_inf_buf_.Get<float>(), -__builtin_huge_valf(), static_cast<int32_t>(hp));
    Sync<AscendC::HardEvent::V_MTE3>();
    Sync<AscendC::HardEvent::MTE3_MTE2>();  // the check phase's slot copies read this UB (Count's DMA)
  }

  // The group's tiles as one stream across its units (as the AIC runs them): the softmax of tile
  // n, then the accumulate of tile n - 1, also when tile n is the next unit's first: a unit's last
  // accumulate and its output / partial write (Finish) follow the next unit's first softmax, so
  // the AIC has that unit's first P while it computes the last P.V. A unit's m and l stay in
  // their half of max / sum (stats_: halves by unit parity) while the next unit's grow.
  __aicore__ inline void Process() {
    int64_t tile = 0;  // the group's tiles so far: the hand-off slots (as the AIC counts them)
    Unit done{};       // the unit whose last accumulate and write are pending
    Row x{};
    int64_t u = rows_.Begin(), total = NextUnit(u, x);
    while (u < rows_.End()) {
      stats_ = 1 - stats_;  // the other half than the pending unit's
      BeginRow();
      const int64_t tiles = CeilDiv(total, t_.tile_keys);
      Row nx{};
      int64_t nu = u + 1, next_total = 0;
      for (int64_t i = 0; i < tiles; ++i) {
        // the next unit's count while the AIC computes S of this unit's last tile
        if (i == tiles - 1) next_total = NextUnit(nu, nx);
        Softmax(tile + i, Min(t_.tile_keys, total - i * t_.tile_keys));
        if (i > 0) {
          Accumulate(tile + i - 1, i == 1);
        } else {
          Finish(done);
        }
      }
      if (hn_ > 0) FinishSums();  // before the last accumulate: the scalar unit need not wait for it
      // a split row's unit of one tile: the AIC writes its P.V into the partial acc itself
      done = Unit{true, t_.splits > 1 && tiles == 1, tiles == 1, x.unit, x.q, tile + tiles - 1, stats_};
      tile += tiles;
      u = nu;
      x = nx;
      total = next_total;
    }
    Finish(done);
    pipe_.Destroy();  // its UB goes to the combine (splits > 1)
  }

 private:
  // A unit whose softmax is done: its last tile's accumulate and its write follow.
  struct Unit {
    bool pending;
    bool direct;  // a split row's unit of one tile: the AIC wrote its P.V into the partial
    bool first;   // its last tile is its first
    int64_t u, q, last;
    int32_t stats;  // its half of max / sum
  };

  // The first unit from u on with positions (x: its row, u: its number; returns its |P|), or
  // u = rows_.End(). Units without positions on the way are done here: zeros or an empty partial.
  __aicore__ inline int64_t NextUnit(int64_t& u, Row& x) {
    for (; u < rows_.End(); ++u) {
      x = rows_.GetUnit(u);
      const int64_t total = x.e1 > x.e0 ? Count(x) : 0;
      if (total > 0) return total;
      if (t_.splits > 1) {
        WritePartialStats(minus_inf_buf_.Get<float>(), zero_buf_.Get<float>(), x.unit);  // empty: weight 0
      } else {
        ZeroRow(x.q);
      }
    }
    return 0;
  }

  // The last accumulate of unit d and its partial (splits > 1) or output row.
  __aicore__ inline void Finish(Unit& d) {
    if (!d.pending) return;
    d.pending = false;
    if (d.direct) {
      AscendC::CrossCoreWaitFlag(kOutReady + SlotOf(d.last));  // the partial acc is in GM
    } else {
      Accumulate(d.last, d.first);
    }
    if (t_.splits > 1) {
      WritePartial(d.u, d.direct, d.stats);
    } else {
      EndRow(d.q, d.stats);
    }
  }

  template <AscendC::HardEvent kEvent>
  __aicore__ inline void Sync() {
    const int32_t id = static_cast<int32_t>(pipe_.FetchEventID(kEvent));
    AscendC::SetFlag<kEvent>(id);
    AscendC::WaitFlag<kEvent>(id);
  }

  // |P| of unit x: the positions its entries [e0, e1) select (the contract's loop). The index
  // chunks go through one buffer of the S / O queue, free between tiles (no chunk is queued).
  __aicore__ inline int64_t Count(const Row& x) {
    LocalTensor<float> buf = in_.AllocTensor<float>();
    const int64_t total = CountIn(x, buf.ReinterpretCast<int32_t>());
    in_.EnQue(buf);
    buf = in_.DeQue<float>();
    in_.FreeTensor(buf);
    return total;
  }

  __aicore__ inline int64_t CountIn(const Row& x, const AscendC::LocalTensor<int32_t>& ub) {
    const int64_t sbs = t_.sparse_block_size, chunk = Min(static_cast<int64_t>(t_.index_chunk), in_floats_);
    int64_t total = 0;
    for (int64_t i = x.e0; i < x.e1; i += chunk) {
      const int64_t count = Min(x.e1 - i, chunk);
      Sync<AscendC::HardEvent::S_MTE2>();  // the previous chunk was read
      AscendC::DataCopyExtParams params{1, static_cast<uint32_t>(count * 4), 0, 0, 0};
      AscendC::DataCopyPadExtParams<int32_t> pad{false, 0, 0, 0};
      AscendC::DataCopyPad(ub, indices_[static_cast<uint64_t>(x.q * t_.topk + i)], params, pad);
      Sync<AscendC::HardEvent::MTE2_S>();
      for (int64_t j = 0; j < count; ++j) {
        const int64_t v = static_cast<int64_t>(ub.GetValue(static_cast<uint32_t>(j)));
        if (v < 0) return total;  // -1 ends the row
        const int64_t lo = v * sbs;
        if (lo < x.thr) total += Min(lo + sbs, x.thr) - lo;
      }
    }
    return total;
  }

  // (acc needs no zeros: the row's first accumulate copies its O_t into it)
  __aicore__ inline void BeginRow() {
    if (hn_ == 0) return;
    Sync<AscendC::HardEvent::MTE3_V>();  // the last row's lse copies read max / sum
    AscendC::Duplicate(Maxes(stats_), -__builtin_huge_valf(), static_cast<int32_t>(hn_));
    AscendC::Duplicate(lanes_buf_.Get<float>(), 0.0f, static_cast<int32_t>(hn_ * kBlockFloats));
    AscendC::PipeBarrier<PIPE_V>();
    Sync<AscendC::HardEvent::V_S>();  // the scalar unit updates max / sum
  }

  // Tile `tile` (c real positions): S -> P, the running max / sum, alpha for its accumulate.
  // Per chunk of softmax_heads heads two vector stages around the scalar unit's per-head
  // statistics: A (scale, each head's tile max) and B (alpha, s - m', exp, the mask, each head's
  // sum, P out). The chunks are software-pipelined: A of chunk k + 1 is issued before the scalar
  // unit waits for A of chunk k, so the vector unit scales and reduces the next chunk while the
  // scalar unit turns this chunk's maxima into m', alpha's argument and the subtrahend blocks
  // (the maxima of two chunks in flight: two halves of red). Two chunks are dequeued at once, so
  // in_buffers - 2 chunk copies are in flight ahead of them.
  __aicore__ inline void Softmax(int64_t tile, int64_t c) {
    const int32_t slot = SlotOf(tile);
    const int64_t kt = t_.tile_keys, sh = t_.softmax_heads;
    AscendC::CrossCoreWaitFlag(kScoresReady + slot);
    if (hn_ > 0) {
      const LocalTensor<float> mask = mask_buf_.Get<float>();
      if (c < kt) {  // the tile's padding gets probability 0
        Sync<AscendC::HardEvent::V_S>();  // the last row's masked Muls have read the mask
        for (int64_t j = 0; j < kt; ++j) mask.SetValue(static_cast<uint32_t>(j), j < c ? 1.0f : 0.0f);
        Sync<AscendC::HardEvent::S_V>();
      }
      const int64_t lead = Max(t_.in_buffers - 2, 0) * sh;  // copies in flight beyond the two dequeued
      const uint32_t half = static_cast<uint32_t>(RoundUp(2 * sh, kBlockFloats));  // one chunk's maxima in red
      int64_t loaded = 0;
      while (loaded < hn_ && loaded < sh + lead) {
        LoadScores(slot, loaded);
        loaded += sh;
      }
      LocalTensor<float> cur = in_.DeQue<float>();
      TileMax(cur, Min(sh, hn_), 0);
      for (int64_t g0 = 0, k = 0; g0 < hn_; g0 += sh, ++k) {
        const int64_t hc = Min(sh, hn_ - g0), next = g0 + sh;
        const int32_t id = static_cast<int32_t>(pipe_.FetchEventID(AscendC::HardEvent::V_S));
        AscendC::SetFlag<AscendC::HardEvent::V_S>(id);  // after A of this chunk (and B of the last)
        LocalTensor<float> nxt;
        if (next < hn_) {
          while (loaded < hn_ && loaded < next + sh + lead) {
            LoadScores(slot, loaded);
            loaded += sh;
          }
          nxt = in_.DeQue<float>();
          TileMax(nxt, Min(sh, hn_ - next), ((k + 1) % 2) * half);
        }
        AscendC::WaitFlag<AscendC::HardEvent::V_S>(id);
        NewMax(g0, hc, (k % 2) * half);
        Sync<AscendC::HardEvent::S_V>();
        Probabilities(cur, slot, g0, hc, c);
        if (g0 + hc == early_) AscendC::CrossCoreSetFlag<2, PIPE_MTE3>(kProbsEarly + slot);  // after their P copies
        cur = nxt;
      }
      Sync<AscendC::HardEvent::V_S>();  // the last chunk's alpha (read by the accumulate)
      Sync<AscendC::HardEvent::S_V>();  // the next tile's reductions rewrite red
    }
    AscendC::CrossCoreSetFlag<2, PIPE_MTE3>(kProbsReady + slot);  // after the P copies
  }

  // Stage A of a chunk of hc heads: s *= scale, each head's tile max -> red[at + 2 i].
  __aicore__ inline void TileMax(const LocalTensor<float>& s, int64_t hc, uint32_t at) {
    const LocalTensor<float> red = red_buf_.Get<float>(), work = work_buf_.Get<float>();
    AscendC::Muls(s, s, t_.scale_value, static_cast<int32_t>(hc * t_.tile_keys));
    AscendC::PipeBarrier<PIPE_V>();
    for (int64_t i = 0; i < hc; ++i) {
      AscendC::ReduceMax(red[at + static_cast<uint32_t>(2 * i)], HeadRow(s, i), work, static_cast<int32_t>(t_.tile_keys));
    }
  }

  // Scalar: own heads [g0, g0 + hc): m' = max(m, tile max at red[at + 2 i]); diff = m - m' (-inf
  // on the row's first tile: alpha 0); each head's m' and diff as 32-byte blocks of 8 copies.
  __aicore__ inline void NewMax(int64_t g0, int64_t hc, uint32_t at) {
    const LocalTensor<float> red = red_buf_.Get<float>(), diff = diff_buf_.Get<float>();
    const LocalTensor<float> maxes = Maxes(stats_), blocks = blocks_buf_.Get<float>();
    const LocalTensor<float> diff_blocks = diff_blocks_buf_.Get<float>();
    for (int64_t i = 0; i < hc; ++i) {
      const uint32_t g = static_cast<uint32_t>(g0 + i);
      const float old = maxes.GetValue(g), tile_max = red.GetValue(at + static_cast<uint32_t>(2 * i));
      const float now = tile_max > old ? tile_max : old;
      maxes.SetValue(g, now);
      diff.SetValue(static_cast<uint32_t>(i), old - now);
      for (uint32_t k = 0; k < kBlockFloats; ++k) {
        blocks.SetValue(static_cast<uint32_t>(i * kBlockFloats) + k, now);
        diff_blocks.SetValue(static_cast<uint32_t>(i * kBlockFloats) + k, old - now);
      }
    }
  }

  // Stage B of the chunk at own heads [g0, g0 + hc): alpha = exp(diff); e = exp(s - m') (0 on
  // the padding); P = e rounded -> the P slot; each head's 8 sum lanes = lanes * alpha + e
  // folded to 8 columns.
  __aicore__ inline void Probabilities(LocalTensor<float>& s, int32_t slot, int64_t g0, int64_t hc, int64_t c) {
    const int64_t kt = t_.tile_keys;
    const LocalTensor<float> diff = diff_buf_.Get<float>(), blocks = blocks_buf_.Get<float>();
    const LocalTensor<float> alpha = AlphaOf(slot), mask = mask_buf_.Get<float>();
    const LocalTensor<float> alpha_blocks = alpha_blocks_buf_.Get<float>();
    AscendC::Exp(alpha[static_cast<uint32_t>(g0)], diff, static_cast<int32_t>(hc));
    AscendC::Exp(alpha_blocks, diff_blocks_buf_.Get<float>(), static_cast<int32_t>(hc * kBlockFloats));
    PerHead(s, blocks, hc, true);  // s - m', each head's m' as a block of 8 copies
    AscendC::PipeBarrier<PIPE_V>();
    AscendC::Exp(s, s, static_cast<int32_t>(hc * kt));
    AscendC::PipeBarrier<PIPE_V>();
    if (c < kt) {
      PerHead(s, mask, hc, false);
      AscendC::PipeBarrier<PIPE_V>();
    }
    LocalTensor<T> p = p_out_.AllocTensor<T>();
    AscendC::Cast(p, s, AscendC::RoundMode::CAST_RINT, static_cast<int32_t>(hc * kt));
    p_out_.EnQue(p);
    AscendC::PipeBarrier<PIPE_V>();  // the fold rewrites what the Cast read
    FoldToLanes(s, hc);
    AddLanes(s, alpha_blocks, g0, hc);
    in_.FreeTensor(s);
    p = p_out_.DeQue<T>();
    AscendC::DataCopy(p_slots_[static_cast<uint64_t>(slot * t_.p_slot_elems + (h0_ + g0) * kt)], p,
                      static_cast<uint32_t>(hc * kt));
    p_out_.FreeTensor(p);
  }

  // Each of the hc head rows of s (tile_keys floats apart) summed down to its first 8 columns
  // in place by level-0 Adds over all the rows: columns [h, w) fold onto [0, w - h), h a multiple
  // of 8 (32-byte aligned operands).
  __aicore__ inline void FoldToLanes(const LocalTensor<float>& s, int64_t hc) {
    const uint8_t row_blocks = static_cast<uint8_t>(t_.tile_keys / kBlockFloats);
    const AscendC::BinaryRepeatParams params(1, 1, 1, row_blocks, row_blocks, row_blocks);
    for (int64_t w = t_.tile_keys; w > kBlockFloats;) {
      const int64_t h = RoundUp(CeilDiv(w, 2), kBlockFloats);
      for (int64_t c = 0; c < w - h; c += kRepeatFloats) {
        const uint64_t mask = static_cast<uint64_t>(Min(kRepeatFloats, w - h - c));
        AscendC::Add(s[static_cast<uint32_t>(c)], s[static_cast<uint32_t>(c)], s[static_cast<uint32_t>(h + c)], mask,
                     static_cast<uint8_t>(hc), params);
      }
      AscendC::PipeBarrier<PIPE_V>();
      w = h;
    }
  }

  // lanes of own heads [g0, g0 + hc) = lanes * alpha (8 copies per head) + the chunk's folded rows.
  __aicore__ inline void AddLanes(const LocalTensor<float>& s, const LocalTensor<float>& alpha_blocks, int64_t g0,
                                  int64_t hc) {
    const LocalTensor<float> lanes = lanes_buf_.Get<float>()[static_cast<uint32_t>(g0 * kBlockFloats)];
    AscendC::Mul(lanes, lanes, alpha_blocks, static_cast<int32_t>(hc * kBlockFloats));
    AscendC::PipeBarrier<PIPE_V>();
    const uint8_t row_blocks = static_cast<uint8_t>(t_.tile_keys / kBlockFloats);
    AscendC::Add(lanes, lanes, s, kBlockFloats, static_cast<uint8_t>(hc),
                 AscendC::BinaryRepeatParams(1, 1, 1, 1, 1, row_blocks));
  }

  // Scalar, at the row's end: l = the sum of each own head's 8 lanes.
  __aicore__ inline void FinishSums() {
    Sync<AscendC::HardEvent::V_S>();  // the last tile's lanes
    const LocalTensor<float> lanes = lanes_buf_.Get<float>(), sums = Sums(stats_);
    for (int64_t g = 0; g < hn_; ++g) {
      float l = 0.0f;
      for (int64_t k = 0; k < kBlockFloats; ++k) l += lanes.GetValue(static_cast<uint32_t>(g * kBlockFloats + k));
      sums.SetValue(static_cast<uint32_t>(g), l);
    }
    Sync<AscendC::HardEvent::S_V>();  // EndRow's vector reads follow
  }

  // acc = acc * alpha + O_t of tile `tile`, once the AIC's P.V of it is in the O slot; on the
  // row's first tile (alpha = 0) acc = O_t: one copy of all own heads into acc, no vector work.
  __aicore__ inline void Accumulate(int64_t tile, bool first) {
    const int32_t slot = SlotOf(tile);
    AscendC::CrossCoreWaitFlag(kOutReady + slot);
    if (hn_ == 0) return;
    const int64_t d = t_.head_dim;
    const LocalTensor<float> acc = acc_buf_.Get<float>(), alpha = AlphaOf(slot);
    if (first) {
      // Through the scalar unit: no V_MTE2 / MTE2_V id taken from the pool the input queue's
      // buffers draw on (QUE_MAX_EVENT = 8).
      Sync<AscendC::HardEvent::V_S>();        // the last row's vector reads of acc
      Sync<AscendC::HardEvent::MTE3_MTE2>();  // and its copy out (a partial)
      Sync<AscendC::HardEvent::S_MTE2>();
      AscendC::DataCopy(acc, o_slots_[static_cast<uint64_t>(slot * t_.o_slot_floats + h0_ * d)],
                        static_cast<uint32_t>(hn_ * d));
      Sync<AscendC::HardEvent::MTE2_S>();
      Sync<AscendC::HardEvent::S_V>();
      Sync<AscendC::HardEvent::MTE2_MTE3>();
      return;
    }
    const int64_t ahead = (t_.in_buffers - 1) * t_.out_heads;  // copies in flight ahead of the one worked on
    for (int64_t g = 0; g < ahead && g < hn_; g += t_.out_heads) LoadOut(slot, g);
    for (int64_t g0 = 0; g0 < hn_; g0 += t_.out_heads) {
      const int64_t hc = Min(t_.out_heads, hn_ - g0);
      if (g0 + ahead < hn_) LoadOut(slot, g0 + ahead);
      LocalTensor<float> o = in_.DeQue<float>();
      for (int64_t i = 0; i < hc; ++i) {  // alpha = 1 (the head's max did not move): nothing to rescale
        const uint32_t at = static_cast<uint32_t>((g0 + i) * d);
        const float a = alpha.GetValue(static_cast<uint32_t>(g0 + i));
        if (a != 1.0f) AscendC::Muls(acc[at], acc[at], a, static_cast<int32_t>(d));
      }
      AscendC::PipeBarrier<PIPE_V>();
      AscendC::Add(acc[static_cast<uint32_t>(g0 * d)], acc[static_cast<uint32_t>(g0 * d)], o,
                   static_cast<int32_t>(hc * d));
      AscendC::PipeBarrier<PIPE_V>();
      in_.FreeTensor(o);
    }
  }

  // out = acc / l in the input dtype; softmax_max / softmax_sum = m / l.
  __aicore__ inline void EndRow(int64_t q, int32_t stats) {
    if (hn_ == 0) return;
    const int64_t d = t_.head_dim;
    const LocalTensor<float> acc = acc_buf_.Get<float>(), sums = Sums(stats);
    for (int64_t g0 = 0; g0 < hn_; g0 += t_.out_heads) {
      const int64_t hc = Min(t_.out_heads, hn_ - g0);
      for (int64_t i = 0; i < hc; ++i) {
        const uint32_t at = static_cast<uint32_t>((g0 + i) * d);
        const float inv = 1.0f / sums.GetValue(static_cast<uint32_t>(g0 + i));
        AscendC::Muls(acc[at], acc[at], inv, static_cast<int32_t>(d));
      }
      AscendC::PipeBarrier<PIPE_V>();
      LocalTensor<T> y = y_out_.AllocTensor<T>();
      AscendC::Cast(y, acc[static_cast<uint32_t>(g0 * d)], AscendC::RoundMode::CAST_RINT, static_cast<int32_t>(hc * d));
      y_out_.EnQue(y);
      y = y_out_.DeQue<T>();
      AscendC::DataCopy(out_[static_cast<uint64_t>((q * t_.heads + h0_ + g0) * d)], y, static_cast<uint32_t>(hc * d));
      y_out_.FreeTensor(y);
    }
    if (t_.has_lse) {
      Sync<AscendC::HardEvent::S_MTE3>();  // max / sum were written by the scalar unit
      WriteLse(Maxes(stats), sums, q);
    }
  }

  // splits > 1: the unit's unnormalised partial: acc [own heads, D] (direct: the AIC wrote it),
  // m and l of its own heads.
  __aicore__ inline void WritePartial(int64_t u, bool direct, int32_t stats) {
    if (hn_ == 0) return;
    Sync<AscendC::HardEvent::V_MTE3>();  // the last accumulate
    if (!direct) AscendC::DataCopy(partials_[static_cast<uint64_t>(u * t_.partial_floats + h0_ * t_.head_dim)], acc_buf_.Get<float>(),
                      static_cast<uint32_t>(hn_ * t_.head_dim));
    Sync<AscendC::HardEvent::S_MTE3>();  // max / sum were written by the scalar unit
    WritePartialStats(Maxes(stats), Sums(stats), u);
  }

  __aicore__ inline void WritePartialStats(const LocalTensor<float>& m, const LocalTensor<float>& l, int64_t u) {
    if (hn_ == 0) return;
    AscendC::DataCopyExtParams params{1, static_cast<uint32_t>(hn_ * sizeof(float)), 0, 0, 0};
    const uint64_t at = static_cast<uint64_t>(u * t_.partial_floats + t_.heads * t_.head_dim + h0_);
    AscendC::DataCopyPad(partials_[at], m, params);
    AscendC::DataCopyPad(partials_[at + static_cast<uint64_t>(RoundUp(t_.heads, kBlockFloats))], l, params);
  }

  // A row without positions, or outside every batch: zeros (and zero lse).
  __aicore__ inline void ZeroRow(int64_t q) {
    if (hn_ == 0) return;
    const int64_t d = t_.head_dim;
    for (int64_t g0 = 0; g0 < hn_; g0 += t_.out_heads) {
      const int64_t hc = Min(t_.out_heads, hn_ - g0);
      LocalTensor<T> y = y_out_.AllocTensor<T>();
      AscendC::Duplicate(y.template ReinterpretCast<int16_t>(), static_cast<int16_t>(0), static_cast<int32_t>(hc * d));
      y_out_.EnQue(y);
      y = y_out_.DeQue<T>();
      AscendC::DataCopy(out_[static_cast<uint64_t>((q * t_.heads + h0_ + g0) * d)], y, static_cast<uint32_t>(hc * d));
      y_out_.FreeTensor(y);
    }
    if (t_.has_lse) WriteLse(zero_buf_.Get<float>(), zero_buf_.Get<float>(), q);
  }

  __aicore__ inline void WriteLse(const LocalTensor<float>& m, const LocalTensor<float>& l, int64_t q) {
    AscendC::DataCopyExtParams params{1, static_cast<uint32_t>(hn_ * sizeof(float)), 0, 0, 0};
    const uint64_t at = static_cast<uint64_t>(q * t_.heads + h0_);
    AscendC::DataCopyPad(max_[at], m, params);
    AscendC::DataCopyPad(sum_[at], l, params);
  }

  // Own heads [g0, g0 + softmax_heads) of S slot `slot` -> UB, queued in in_.
  __aicore__ inline void LoadScores(int32_t slot, int64_t g0) {
    const int64_t kt = t_.tile_keys, hc = Min(t_.softmax_heads, hn_ - g0);
    LocalTensor<float> s = in_.AllocTensor<float>();
    AscendC::DataCopy(s, s_slots_[static_cast<uint64_t>(slot * t_.s_slot_floats + (h0_ + g0) * kt)],
                      static_cast<uint32_t>(hc * kt));
    in_.EnQue(s);
  }

  // Own heads [g0, g0 + out_heads) of O slot `slot` -> UB, queued in in_.
  __aicore__ inline void LoadOut(int32_t slot, int64_t g0) {
    const int64_t d = t_.head_dim, hc = Min(t_.out_heads, hn_ - g0);
    LocalTensor<float> o = in_.AllocTensor<float>();
    AscendC::DataCopy(o, o_slots_[static_cast<uint64_t>(slot * t_.o_slot_floats + (h0_ + g0) * d)],
                      static_cast<uint32_t>(hc * d));
    in_.EnQue(o);
  }

  // Each of the hc head rows of s (tile_keys floats apart) with a row operand, 64 columns per
  // level-0 instruction over all the rows: subtract = true: s[h, :] -= blocks[h] (a 32-byte block
  // of 8 copies per head, read with block stride 0); false: s[h, :] *= row (the same row for every
  // head, repeat stride 0).
  __aicore__ inline void PerHead(const LocalTensor<float>& s, const LocalTensor<float>& operand, int64_t hc,
                                 bool subtract) {
    const int64_t kt = t_.tile_keys;
    const uint8_t row_blocks = static_cast<uint8_t>(kt / kBlockFloats);
    const AscendC::BinaryRepeatParams params(1, 1, subtract ? 0 : 1, row_blocks, row_blocks, subtract ? 1 : 0);
    for (int64_t k = 0; k < kt; k += kRepeatFloats) {
      const uint64_t mask = static_cast<uint64_t>(Min(kRepeatFloats, kt - k));
      const uint32_t at = static_cast<uint32_t>(k);
      if (subtract) {
        AscendC::Sub(s[at], s[at], operand, mask, static_cast<uint8_t>(hc), params);
      } else {
        AscendC::Mul(s[at], s[at], operand[at], mask, static_cast<uint8_t>(hc), params);
      }
    }
  }

  // red: [maxima of chunk k even | maxima of chunk k odd], RoundUp(2 sh, 8) floats each
  __aicore__ inline LocalTensor<float> HeadRow(const LocalTensor<float>& s, int64_t i) const {
    return s[static_cast<uint32_t>(i * t_.tile_keys)];
  }
  // Half `stats` of max / sum: one unit's m / l
  __aicore__ inline LocalTensor<float> Maxes(int32_t stats) {
    return max_buf_.Get<float>()[static_cast<uint32_t>(stats * RoundUp(t_.heads_per_aiv, kBlockFloats))];
  }
  __aicore__ inline LocalTensor<float> Sums(int32_t stats) {
    return sum_buf_.Get<float>()[static_cast<uint32_t>(stats * RoundUp(t_.heads_per_aiv, kBlockFloats))];
  }
  __aicore__ inline LocalTensor<float> AlphaOf(int32_t slot) {
    return alpha_buf_.Get<float>()[static_cast<uint32_t>(slot * RoundUp(t_.heads_per_aiv, kBlockFloats))];
  }

  AscendC::TPipe pipe_;
  // S or O chunks, depth kMaxInBuffers: in_buffers - 1 O chunks queued ahead of the one worked on,
  // in_buffers - 2 S chunks ahead of the two the pipelined softmax works on
  AscendC::TQue<AscendC::TPosition::VECIN, kMaxInBuffers> in_;
  AscendC::TQue<AscendC::TPosition::VECOUT, 1> p_out_, y_out_;
  AscendC::TBuf<AscendC::TPosition::VECCALC> acc_buf_, max_buf_, sum_buf_, alpha_buf_, zero_buf_, minus_inf_buf_, diff_buf_, red_buf_,
      work_buf_, mask_buf_, blocks_buf_, diff_blocks_buf_, alpha_blocks_buf_, lanes_buf_;
  GlobalTensor<int32_t> indices_;
  GlobalTensor<T> out_, p_slots_;
  GlobalTensor<float> max_, sum_, s_slots_, o_slots_, partials_;
  Rows rows_;
  SparseFlashAttentionTiling t_;
  int64_t h0_ = 0;  // first own head
  int64_t hn_ = 0;  // own heads
  int64_t early_ = 0;  // own heads of P's first hand-off (EarlyHeads; 0: one hand-off)
  int64_t in_floats_ = 0;  // floats of one S / O queue buffer
  int32_t stats_ = 0;      // the half of max / sum the current unit grows
};

}  // namespace sparse_flash_attention
