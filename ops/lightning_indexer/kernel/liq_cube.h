// The AIC side of lightning_indexer_quant (the int8-cube route of
// ops/lightning_indexer/bench/quant_study: the head reduction on the cube, as Huawei's arch22
// kernel). Per unit (one query row: a work item, or one key split of it; with halves two splits
// of one row, their blocks alternately, as the float op's Cube):
//   q [N1, D] int8 -(Nd2Nz, rows past N1 copies of row 0)-> L1 -(LoadData: the NZ of q is the ZN
//   of q^T)-> L0B, once; wq [N1] float16 (kernel/liq_weights.h) 16 times -> L1 -> L0A (Zz), once.
//   Per key tile (tile_keys keys of a block, one GM run): keys -(Nd2Nz, a 16-key row block per ND
//   matrix = Zz; a full tile as pairs of keys, two keys per Nd2Nz row: the Zz of its keys in
//   paired order, kernel/liq_pairs.h)-> L1 -> L0A; stage 1: int8 Mmad k . q^T into int32 L0C [keys, n1_pad]; Fixpipe
//   DEQF16 (scale 2^-10) with reluPre into L1 as NZ, which is the ZN layout of the next B;
//   stage 2: LoadData -> L0B, float16 Mmad wq . a^T (m = 16, float32 accumulation) into the
//   tile's columns of the block's L0C [16, block_keys]; after the block's last tile one Fixpipe of
//   row 0 -> the block's GM slot (one GM write per block: a write's latency would hold the FIX
//   pipe's in-order completion, and so stage 1's next L1 output, once per tile).
// The slot (one float32 row of block_pad per block) is published to the group's AIVs, which
// multiply by the key scales, mask, sort and merge (kernel/lightning_indexer_vector.h with
// kernel/liq_key_scale.h). Software pipelined: key tiles are loaded three ahead (four L1
// buffers), tile n + 1's stage 1 is issued before tile n's stage 2, so the in-order M pipe does
// not wait on the FIX -> MTE1 round trip; the two L1 buffers of stage 1's output take turns
// (FIX_MTE1 / MTE1_FIX flags, ids 0 and 1). L0A key tiles and the L0C tiles of both stages are
// double buffered. No auto-sync exists on the
// AIC: every hand-off between its pipes is a queue event or an explicit flag.
// Check phase: the AIC loads the unit's query (its row follows from the tiling) before it reads
// any length, waits for its AIVs' wq rows (WqReady: written before their check phase), computes
// its first key blocks while the AIVs check the inputs (a check-free prefix: up to slots / 2
// blocks, each in a slot of its own, so no slot is reused before it is published: 1 block with 2
// slots, 2 with halves' 4), and awaits the verdict (CubeVerdict) before it publishes them, in
// order. The verdict is awaited at the end of the prefix's last block: the scalar unit stops
// there, but the key loads already issued keep MTE2 busy. Before the verdict every GM row read is
// kept inside its tensor.
#pragma once
#include "kernel/liq_pairs.h"
#include "kernel/liq_tiling.h"
#include "kernel/liq_weights.h"
#include "kernel/lightning_indexer_check.h"
#include "kernel/lightning_indexer_handshake.h"
#include "kernel/lightning_indexer_work.h"

namespace lightning_indexer {

class LiqCube {
 public:
  __aicore__ inline void Init(GM_ADDR query, GM_ADDR key, GM_ADDR lengths_q, GM_ADDR lengths_k, GM_ADDR block_table,
                              GM_ADDR check_lines, GM_ADDR slots, GM_ADDR wq, const LiqTiling& tiling) {
    t_ = tiling;
    n1_pad_ = tiling.n1_pad;
    verdict_.Init(check_lines, t_.block_dim);
    const int64_t group = AscendC::GetBlockIdx();
    work_.Init(t_, lengths_q, lengths_k, nullptr, group);
    table_.Init(block_table, t_.table_bytes);
    q_total_ = QueryRowsTotal(t_);
    key_total_ = KeyRowsTotal(t_);
    query_.SetGlobalBuffer((__gm__ int8_t*)query, q_total_ * t_.heads * t_.head_dim);
    key_.SetGlobalBuffer((__gm__ int8_t*)key, KeySpanElements(t_, key_total_));
    wq_row0_ = RowsOfGroup(t_, group).begin;  // the group's wq region starts with this row
    wq_.SetGlobalBuffer((__gm__ half*)wq + group * tiling.wq_group_rows * t_.heads, tiling.wq_group_rows * t_.heads);
    slots_.SetGlobalBuffer((__gm__ float*)slots + group * t_.workspace_per_aic, t_.workspace_per_aic);
    const uint32_t d = static_cast<uint32_t>(t_.head_dim), tile = static_cast<uint32_t>(t_.tile_keys);
    const uint32_t np = static_cast<uint32_t>(n1_pad_);
    pipe_.InitBuffer(q_l1_, 1, np * d);
    pipe_.InitBuffer(w_l1_, 1, kFractalRows * np * sizeof(half));
    pipe_.InitBuffer(k_l1_, kKeysAhead + 1, tile * d);
    pipe_.InitBuffer(a_l1_, 2 * tile * np * sizeof(half));
    pipe_.InitBuffer(q_l0_, np * d);
    pipe_.InitBuffer(w_l0_, kFractalRows * np * sizeof(half));
    pipe_.InitBuffer(k_l0_, 2, tile * d);
    pipe_.InitBuffer(a_l0_, 2, tile * np * sizeof(half));
    pipe_.InitBuffer(c1_, 2, tile * np * sizeof(int32_t));
    pipe_.InitBuffer(c2_, 2, kFractalRows * static_cast<uint32_t>(t_.block_keys) * sizeof(float));  // a block's row
    a_all_ = a_l1_.Get<half>();
    q0_ = q_l0_.Get<int8_t>();
    w0_ = w_l0_.Get<half>();
  }

  __aicore__ inline void Process() {
    handshake_.Init(t_.slots);
    const int64_t step = work_.Step();
    for (int64_t u = work_.Begin(); u < work_.End(); u += step) {
      IssueQuery(u / t_.splits);  // the row follows from the tiling: its DMA before the lengths' scalar reads
      const Item x = work_.GetUnit(u);
      const Item y = step == 2 ? work_.GetUnit(u + 1) : x;
      if (x.k1 <= x.k0) {
        DiscardQuery();
      } else if (!ProcessItem(x, y, step == 2, u / t_.splits)) {
        break;
      }
    }
    wq_ready_.Wait();  // consumes the flag also when this AIC had no unit
    verdict_.Ok();     // and the verdict
    for (int32_t b = 0; b < 2; ++b) {  // the last stage 2 reads of each L1 buffer
      if (mte1_pending_[b]) AscendC::WaitFlag<AscendC::HardEvent::MTE1_FIX>(b);
    }
    handshake_.Drain();
  }

 private:
  // Where a tile of the unit's hand-offs is: hand-off h (its unit, k0 = the block's first key),
  // the block's keys nb and the tile's offset in the block.
  struct Tile {
    Item it;
    int64_t h, nb, off, n;
  };

  __aicore__ inline Tile TileAt(const Item& x, const Item& y, int64_t by, int64_t h, int64_t off) const {
    Tile p;
    p.it = work_.Hand(x, y, by, h);
    p.h = h;
    p.nb = Min(t_.block_keys, p.it.k1 - p.it.k0);
    p.off = off;
    p.n = Min(t_.tile_keys, p.nb - off);
    return p;
  }

  __aicore__ inline bool Next(const Item& x, const Item& y, int64_t by, int64_t handoffs, Tile& p) const {
    int64_t h = p.h, off = p.off + t_.tile_keys;
    if (off >= p.nb) {
      ++h;
      off = 0;
    }
    if (h >= handoffs) return false;
    p = TileAt(x, y, by, h, off);
    return true;
  }

  // Unit x, or (pair) units x and y, two splits of one query row: `row`, the item (one row per
  // item: the item is the flat query row, x.q_begin + x.r0 once the lengths are checked). False
  // when the verdict is an error (nothing of the unit was published).
  __aicore__ inline bool ProcessItem(const Item& x, const Item& y, bool pair, int64_t row) {
    LoadQuery();
    const int64_t bx = work_.Blocks(x), by = pair ? work_.Blocks(y) : 0, handoffs = bx + by;
    Tile cur = TileAt(x, y, by, 0, 0);
    // The key loads run kKeysAhead tiles ahead of stage 1 (`issue`: the next tile to load).
    issue_ = cur;
    issuing_ = true;
    for (int32_t i = 0; i < kKeysAhead; ++i) IssueNext(x, y, by, handoffs);
    Tile next = cur;
    bool more = Next(x, y, by, handoffs, next);
    // wq's DMA before the fourth key tile's (it would queue behind it; stage 1 of the first tile
    // waits for that tile's keys anyway), its move to L0A after stage 1's (MTE1 is in order)
    wq_ready_.Wait();
    IssueWeights(row);
    Stage1(cur);
    IssueNext(x, y, by, handoffs);
    LoadWeights();
    int32_t slot = 0;
    while (true) {
      Tile after = next;
      const bool more_after = more && Next(x, y, by, handoffs, after);
      if (more) {
        Stage1(next);
        IssueNext(x, y, by, handoffs);
      }
      if (cur.off == 0) slot = handshake_.Acquire();
      Stage2(cur, slot);
      if (cur.off + cur.n >= cur.nb) {
        // Before the verdict the block stays unpublished while the next block of the unit can
        // take a free slot (the check-free prefix: up to `slots` blocks); then the verdict, then
        // every pending block in order.
        pending_[pending_count_++] = slot;
        if (!verdict_.Known() && more && handshake_.Free() && pending_count_ < t_.slots / 2) {
          // the verdict later: the next block computes meanwhile
        } else if (!verdict_.Ok()) {  // nothing published: unwind the pipeline (tile `next`, the loaded keys)
          if (more) AscendC::WaitFlag<AscendC::HardEvent::FIX_MTE1>(static_cast<int32_t>((tiles_ - 1) % 2));
          for (; keys_loading_ > 0; --keys_loading_) {
            LocalTensor<int8_t> issued = k_l1_.DeQue<int8_t>();
            k_l1_.FreeTensor(issued);
          }
          return false;
        } else {
          for (int32_t i = 0; i < pending_count_; ++i) handshake_.Publish(pending_[i]);
          pending_count_ = 0;
        }
      }
      if (!more) break;
      cur = next;
      next = after;
      more = more_after;
    }
    return true;
  }

  // q [N1, D] of the row -> L1 NZ of n1_pad rows (rows past N1 copies of the first ones, so every
  // column of stage 1 is finite) -> L0B (q_l0_), for the unit.
  __aicore__ inline void IssueQuery(int64_t row) {
    const uint16_t d = static_cast<uint16_t>(t_.head_dim), n1 = static_cast<uint16_t>(t_.heads);
    const uint16_t np = static_cast<uint16_t>(n1_pad_);
    LocalTensor<int8_t> q1 = q_l1_.AllocTensor<int8_t>();
    const GlobalTensor<int8_t> src = query_[row * t_.heads * t_.head_dim];
    AscendC::DataCopy(q1, src, AscendC::Nd2NzParams(1, n1, d, 0, d, np, 1, 0));
    for (uint16_t filled = n1; filled < np;) {
      const uint16_t c = np - filled < n1 ? np - filled : n1;
      AscendC::DataCopy(q1[static_cast<uint32_t>(filled) * kC0Int8], src, AscendC::Nd2NzParams(1, c, d, 0, d, np, 1, 0));
      filled += c;
    }
    q_l1_.EnQue(q1);
  }

  // A unit without keys: its issued query is not used.
  __aicore__ inline void DiscardQuery() {
    LocalTensor<int8_t> q1 = q_l1_.DeQue<int8_t>();
    q_l1_.FreeTensor(q1);
  }

  // The issued query -> L0B (q_l0_), for the unit.
  __aicore__ inline void LoadQuery() {
    const uint16_t d = static_cast<uint16_t>(t_.head_dim), np = static_cast<uint16_t>(n1_pad_);
    LocalTensor<int8_t> q1 = q_l1_.DeQue<int8_t>();
    if (units_++ > 0) Sync<AscendC::HardEvent::M_MTE1>();  // the last unit's Mmads have read q^T and wq
    AscendC::LoadData2DParams ld;  // NZ of q [n1_pad, D] = ZN of q^T, in order
    ld.startIndex = 0;
    ld.repeatTimes = static_cast<uint8_t>((np / kFractalRows) * (d / kC0Int8));
    ld.srcStride = 1;
    ld.sid = 0;
    ld.dstGap = 0;
    ld.ifTranspose = false;
    ld.addrMode = 0;
    AscendC::LoadData(q0_, q1, ld);
    q_l1_.FreeTensor(q1);
    Sync<AscendC::HardEvent::MTE1_M>();
  }

  // wq [N1] of the row as all 16 rows of A [16, n1_pad] (columns past N1 zero: Nd2Nz fills a
  // partial 32-byte block with zeros) -> L1.
  __aicore__ inline void IssueWeights(int64_t row) {
    const uint16_t n1 = static_cast<uint16_t>(t_.heads);
    LocalTensor<half> w1 = w_l1_.AllocTensor<half>();
    // 16 ND matrices of one row, all the same GM row (stride 0), row i of the NZ at i * 16 elements
    AscendC::DataCopy(w1, wq_[(row - wq_row0_) * t_.heads],
                      AscendC::Nd2NzParams(kFractalRows, 1, n1, 0, n1, kFractalRows, 1, kFractalRows));
    w_l1_.EnQue(w1);
  }

  // The issued wq -> L0A (w_l0_), for the unit's stage 2.
  __aicore__ inline void LoadWeights() {
    const uint16_t np = static_cast<uint16_t>(n1_pad_);
    LocalTensor<half> w1 = w_l1_.DeQue<half>();
    AscendC::LoadData2DParams ld;  // one 16-row block: its NZ fractals are the Zz ones
    ld.startIndex = 0;
    ld.repeatTimes = static_cast<uint8_t>(np / kFractalRows);
    ld.srcStride = 1;
    ld.sid = 0;
    ld.dstGap = 0;
    ld.ifTranspose = false;
    ld.addrMode = 0;
    AscendC::LoadData(w0_, w1, ld);
    w_l1_.FreeTensor(w1);
    Sync<AscendC::HardEvent::MTE1_M>();
  }

  // src pipe -> dst pipe inside the AIC, with an event id from the pipe's pool.
  template <AscendC::HardEvent kEvent>
  __aicore__ inline void Sync() {
    const int32_t id = static_cast<int32_t>(pipe_.FetchEventID(kEvent));
    AscendC::SetFlag<kEvent>(id);
    AscendC::WaitFlag<kEvent>(id);
  }

  // Loads the keys of tile issue_ (if any is left) and moves issue_ on.
  __aicore__ inline void IssueNext(const Item& x, const Item& y, int64_t by, int64_t handoffs) {
    if (!issuing_) return;
    IssueKeys(issue_);
    ++keys_loading_;
    issuing_ = Next(x, y, by, handoffs, issue_);
  }

  // Keys [k0 + off, + n) of the tile -> L1 in Zz (16-key row blocks, each D / 32 fractals), queued
  // in k_l1_. Rows past n up to the next 16 are copies of the first ones (every row of stage 1 is
  // finite); rows past the tensor's end (only with bad lengths) are never read.
  __aicore__ inline void IssueKeys(const Tile& p) {
    const int64_t d = t_.head_dim, j0 = p.it.k0 + p.off;
    int64_t at, available;  // at: the tile's first element in key
    if (t_.layout_key == 2) {  // PA_BSND: a tile never crosses a cache block (tile_keys | block_size)
      const int64_t entry = j0 / t_.block_size;
      int64_t block = entry >= 0 && entry < t_.max_blocks ? table_.Get(p.it.batch * t_.max_blocks + entry) : -1;
      if (block < 0 || block >= key_total_ / t_.block_size) block = 0;
      at = block * t_.key_block_stride + (j0 % t_.block_size) * d;
      available = t_.block_size - j0 % t_.block_size;
    } else {
      int64_t r = p.it.k_begin + j0;
      if (r < 0 || r >= key_total_) r = 0;
      at = r * d;
      available = key_total_ - r;
    }
    const int64_t filled = Min(p.n, available), n_pad = RoundUp(p.n, kFractalRows);
    const uint16_t dd = static_cast<uint16_t>(d);
    LocalTensor<int8_t> k1 = k_l1_.AllocTensor<int8_t>();
    const GlobalTensor<int8_t> src = key_[at];
    const int64_t full = filled / kFractalRows, rem = filled % kFractalRows;
    if (PairedTile(t_, p.n) && filled == p.n) {
      IssuePairedKeys(k1, src, p.n);
    } else if (full > 0) {
      AscendC::DataCopy(k1, src,
                        AscendC::Nd2NzParams(static_cast<uint16_t>(full), kFractalRows, dd,
                                             static_cast<uint16_t>(kFractalRows * d), dd, kFractalRows, 1,
                                             static_cast<uint16_t>(kFractalRows * d)));
    }
    if (rem > 0) {
      AscendC::DataCopy(k1[static_cast<uint32_t>(full * kFractalRows * d)], src[full * kFractalRows * d],
                        AscendC::Nd2NzParams(1, static_cast<uint16_t>(rem), dd, 0, dd, kFractalRows, 1, 0));
    }
    for (int64_t r = filled; r < n_pad;) {  // padding rows: copies of the tile's first rows
      const int64_t in_block = r % kFractalRows;
      const int64_t c = Min(kFractalRows - in_block, Min(filled, n_pad - r));
      AscendC::DataCopy(k1[static_cast<uint32_t>((r - in_block) * d + in_block * kC0Int8)], src,
                        AscendC::Nd2NzParams(1, static_cast<uint16_t>(c), dd, 0, dd, kFractalRows, 1, 0));
      r += c;
    }
    k_l1_.EnQue(k1);
  }

  // A full tile as pairs of keys (kernel/liq_pairs.h): pair j of a 32-key group g, keys
  // 32g + 2j + s (s = 0, 1), goes to row j of row block 2g + s, so the L1 tile is the Zz of the
  // keys in paired order. One Nd2Nz per half group (pairs 0-7 -> rows 0-7, pairs 8-15 -> 8-15).
  __aicore__ inline void IssuePairedKeys(const LocalTensor<int8_t>& k1, const GlobalTensor<int8_t>& src, int64_t n) {
    const int64_t d = t_.head_dim;
    const uint16_t groups = static_cast<uint16_t>(n / kPairGroup), row = static_cast<uint16_t>(2 * d);
    const uint16_t group_bytes = static_cast<uint16_t>(kPairGroup * d);  // a group in GM and in L1
    for (int64_t half = 0; half < 2; ++half) {
      AscendC::DataCopy(k1[static_cast<uint32_t>(half * kFractalRows / 2 * kC0Int8)], src[half * kFractalRows * d],
                        AscendC::Nd2NzParams(groups, kFractalRows / 2, row, group_bytes, row, kFractalRows, 1,
                                             group_bytes));
    }
  }

  // Tile p: keys -> L0A, k . q^T (int8, int32 accumulation) -> Fixpipe DEQF16 2^-10 + ReLU -> the
  // tile's L1 buffer (NZ [n_pad keys, n1_pad]).
  __aicore__ inline void Stage1(const Tile& p) {
    const int64_t d = t_.head_dim, n_pad = RoundUp(p.n, kFractalRows);
    const int32_t b = static_cast<int32_t>(tiles_ % 2);
    LocalTensor<int8_t> k1 = k_l1_.DeQue<int8_t>();
    --keys_loading_;
    LocalTensor<int8_t> k0 = k_l0_.AllocTensor<int8_t>();
    AscendC::LoadData2DParams ld;  // the L1 tile is already Zz
    ld.startIndex = 0;
    ld.repeatTimes = static_cast<uint8_t>((n_pad / kFractalRows) * (d / kC0Int8));
    ld.srcStride = 1;
    ld.sid = 0;
    ld.dstGap = 0;
    ld.ifTranspose = false;
    ld.addrMode = 0;
    AscendC::LoadData(k0, k1, ld);
    k_l1_.FreeTensor(k1);
    k_l0_.EnQue(k0);
    k0 = k_l0_.DeQue<int8_t>();
    LocalTensor<int32_t> c1 = c1_.AllocTensor<int32_t>();
    AscendC::MmadParams mp;
    mp.m = static_cast<uint16_t>(n_pad);  // >= 16: never GEMV
    mp.n = static_cast<uint16_t>(n1_pad_);
    mp.k = static_cast<uint16_t>(d);
    AscendC::Mmad(c1, k0, q0_, mp);
    k_l0_.FreeTensor(k0);
    c1_.EnQue(c1);
    c1 = c1_.DeQue<int32_t>();
    if (mte1_pending_[b]) {  // tile n - 2's stage 2 has loaded the buffer
      AscendC::WaitFlag<AscendC::HardEvent::MTE1_FIX>(b);
      mte1_pending_[b] = false;
    }
    using namespace AscendC;  // QuantMode_t is global with CANN, in AscendC in the emulator
    FixpipeParamsV220 fp(static_cast<uint16_t>(n1_pad_), static_cast<uint16_t>(n_pad), static_cast<uint16_t>(n_pad),
                         static_cast<uint32_t>(n_pad), true, QuantMode_t::DEQF16, kDeqScale, 1, 0, 0, 0);
    AscendC::Fixpipe<half, int32_t, AscendC::CFG_NZ>(a_all_[static_cast<uint32_t>(b) * t_.tile_keys * n1_pad_], c1,
                                                      fp);
    c1_.FreeTensor(c1);
    AscendC::SetFlag<AscendC::HardEvent::FIX_MTE1>(b);
    ++tiles_;
  }

  // Tile p: its L1 buffer -> L0B, wq . a^T (float16, float32 accumulation) -> Fixpipe row 0 -> the
  // slot's columns [off, off + n).
  __aicore__ inline void Stage2(const Tile& p, int32_t slot) {
    const int64_t n_pad = RoundUp(p.n, kFractalRows);
    const int32_t b = static_cast<int32_t>(stage2_ % 2);
    ++stage2_;
    AscendC::WaitFlag<AscendC::HardEvent::FIX_MTE1>(b);
    LocalTensor<half> a0 = a_l0_.AllocTensor<half>();
    AscendC::LoadData2DParams ld;  // NZ [n_pad keys, n1_pad] = ZN of a^T [n1_pad, keys], in order
    ld.startIndex = 0;
    ld.repeatTimes = static_cast<uint8_t>((n1_pad_ / kFractalRows) * (n_pad / kFractalRows));
    ld.srcStride = 1;
    ld.sid = 0;
    ld.dstGap = 0;
    ld.ifTranspose = false;
    ld.addrMode = 0;
    AscendC::LoadData(a0, a_all_[static_cast<uint32_t>(b) * t_.tile_keys * n1_pad_], ld);
    AscendC::SetFlag<AscendC::HardEvent::MTE1_FIX>(b);
    mte1_pending_[b] = true;
    a_l0_.EnQue(a0);
    a0 = a_l0_.DeQue<half>();
    if (p.off == 0) c2_block_ = c2_.AllocTensor<float>();
    AscendC::MmadParams mp;
    mp.m = kFractalRows;
    mp.n = static_cast<uint16_t>(n_pad);
    mp.k = static_cast<uint16_t>(n1_pad_);
    // the tile's columns of the block's [16, block_keys] NZ: fractal off / 16 (16 x 16 floats each)
    AscendC::Mmad(c2_block_[static_cast<uint32_t>(p.off * kFractalRows)], w0_, a0, mp);
    a_l0_.FreeTensor(a0);
    if (p.off + p.n < p.nb) return;  // the block's row goes out once, after its last tile
    c2_.EnQue(c2_block_);
    LocalTensor<float> c2 = c2_.DeQue<float>();
    AscendC::FixpipeParamsV220 fp;
    fp.nSize = static_cast<uint16_t>(p.nb);
    fp.mSize = 1;
    fp.srcStride = kFractalRows;
    fp.dstStride = static_cast<uint32_t>(t_.block_pad);
    fp.reluEn = false;
    AscendC::Fixpipe(slots_[static_cast<uint64_t>(slot) * t_.slot_floats], c2, fp);
    c2_.FreeTensor(c2);
  }

  static constexpr int32_t kKeysAhead = 3;  // key tiles loading while stage 1 runs: hides the DMA latency
  static constexpr int64_t kC0Int8 = 32;             // int8 elements of one 32-byte fractal row
  static constexpr int64_t kDeqScale = 0x3a800000;   // 2^-10 as float32 bits: keeps |dot| <= 2^21 in float16

  AscendC::TPipe pipe_;
  AscendC::TQue<AscendC::TPosition::B1, 1> q_l1_;
  AscendC::TQue<AscendC::TPosition::A1, 1> w_l1_;
  AscendC::TQue<AscendC::TPosition::A1, kKeysAhead + 1> k_l1_;  // the tiles loading and the one in use
  AscendC::TBuf<AscendC::TPosition::C1> a_l1_;     // stage 1's output, two tiles (explicit FIX <-> MTE1 flags)
  AscendC::TBuf<AscendC::TPosition::B2> q_l0_;  // q^T and wq stay for a unit: buffers, explicit MTE1 <-> M flags
  AscendC::TBuf<AscendC::TPosition::A2> w_l0_;
  AscendC::TQue<AscendC::TPosition::A2, 2> k_l0_;
  AscendC::TQue<AscendC::TPosition::B2, 2> a_l0_;
  AscendC::TQue<AscendC::TPosition::CO1, 2> c1_, c2_;
  LocalTensor<half> a_all_;
  LocalTensor<float> c2_block_;  // stage 2's output of the current block (c2_), its tiles' columns
  LocalTensor<int8_t> q0_;  // the unit's q^T (B of stage 1), in q_l0_
  LocalTensor<half> w0_;    // the unit's wq rows (A of stage 2), in w_l0_
  GlobalTensor<int8_t> query_, key_;
  GlobalTensor<half> wq_;
  GlobalTensor<float> slots_;
  IndexTensor table_;
  Work work_;
  CubeHandshake handshake_;
  CubeVerdict verdict_;
  WqReady wq_ready_;
  LightningIndexerTiling t_;
  int64_t n1_pad_ = 16;
  int64_t q_total_ = 0;
  int64_t key_total_ = 0;
  int64_t wq_row0_ = 0;  // the first query row of the group's wq region
  int64_t units_ = 0;    // units started
  Tile issue_;               // the next key tile to load
  bool issuing_ = false;     // issue_ is a tile of the unit
  int32_t keys_loading_ = 0;  // key tiles loaded (queued) and not yet used
  int64_t tiles_ = 0;   // stage 1 runs (every unit): which L1 buffer is next
  int64_t stage2_ = 0;  // stage 2 runs
  bool mte1_pending_[2] = {false, false};
  int32_t pending_[kMaxSlots] = {0, 0, 0, 0};  // slots of computed blocks not yet published (before the verdict)
  int32_t pending_count_ = 0;
};

}  // namespace lightning_indexer
