// lightning_indexer AscendC kernel: for every query row, the top-K visible keys by
//   score[r, j] = sum_h weights[r, h] * ReLU(dot(query[r, h, :], key[j, :]))
// Work items are (batch, group of rows_per_group query rows), split evenly over the cores. An
// item keeps its q tile [rows * N1, D] in L0A and walks the keys it can see (up to the causal
// limit of its last row) in tiles of tile_keys, each a contiguous GM run (PA_BSND: part of one
// cache block found through block_table):
//   matrix path  GM -(Nd2Nz)-> L1 -(LoadData)-> L0B, Mmad into L0C (fp16/bf16 in, fp32
//                accumulate), Fixpipe L0C -> the core's GM workspace [rows * N1, tile_pad]
//   vector path  per row: workspace -> UB, ReLU, multiply by weights[r, h] and sum over the
//                heads, keys past the row's limit set to -inf, Sort the tile's (score, index)
//                pairs, and MrgSort them into the row's running top-k (k_pad pairs in UB) when
//                the tile's best beats the current K-th score.
// Ties: Sort and MrgSort keep equal scores in input order (lower position, lower list first),
// tile indices ascend and the running list (smaller indices) is the first list, so ties go to
// the smaller index. Rows with fewer than K visible keys, rows past act_s1 and rows of no batch
// get -1 / -inf tails. Compiles with CANN's compiler on NPU and with g++ against the emulator.
#include "kernel_operator.h"
#include "kernel/lightning_indexer_tiling.h"

namespace {

using AscendC::GlobalTensor;
using AscendC::LocalTensor;
using AscendC::TPosition;
using namespace AscendC;  // pipe_t (PIPE_ALL, ...) is global with CANN, in AscendC here

constexpr int32_t kFractalRows = 16;  // rows of one L1 / L0 fractal
constexpr int32_t kSortGroup = 32;    // Sort / Extract work on groups of 32 pairs
constexpr uint32_t kMaxExtract = 255 * kSortGroup;  // Extract: repeatTime <= 255 (A2 docs)
constexpr int32_t kMaxMergeList = 4064;  // MrgSort takes lists of at most 4095 pairs (A2 docs)

__aicore__ inline int64_t Min(int64_t a, int64_t b) { return a < b ? a : b; }
__aicore__ inline int64_t Max(int64_t a, int64_t b) { return a > b ? a : b; }
__aicore__ inline int64_t RoundUp(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

// An int32 / int64 GM index tensor read one entry at a time (lengths, block table).
class IndexTensor {
 public:
  __aicore__ inline void Init(GM_ADDR data, int32_t bytes) {
    bytes_ = bytes;
    if (bytes == 8) i64_.SetGlobalBuffer((__gm__ int64_t*)data);
    if (bytes == 4) i32_.SetGlobalBuffer((__gm__ int32_t*)data);
  }
  __aicore__ inline bool Present() const { return bytes_ != 0; }
  __aicore__ inline int64_t Get(int64_t i) const {
    return bytes_ == 8 ? i64_.GetValue(i) : static_cast<int64_t>(i32_.GetValue(i));
  }

 private:
  GlobalTensor<int64_t> i64_;
  GlobalTensor<int32_t> i32_;
  int32_t bytes_ = 0;
};

// T: query / key type (half, bfloat16_t); W: weights type (T or float).
template <typename T, typename W>
class LightningIndexerKernel {
 public:
  __aicore__ inline void Init(GM_ADDR query, GM_ADDR key, GM_ADDR weights, GM_ADDR lengths_q, GM_ADDR lengths_k,
                              GM_ADDR block_table, GM_ADDR sparse_indices, GM_ADDR sparse_values, GM_ADDR workspace,
                              const LightningIndexerTiling& tiling) {
    t_ = tiling;
    const int64_t core = AscendC::GetBlockIdx();
    item_begin_ = core * t_.items_per_core + Min(core, t_.cores_with_extra);
    item_end_ = item_begin_ + t_.items_per_core + (core < t_.cores_with_extra ? 1 : 0);

    q_total_ = t_.layout_query == 1 ? t_.q_rows : t_.batch * t_.q_rows;
    const int64_t key_total = t_.layout_key == 0 ? t_.batch * t_.key_rows : t_.key_rows;
    query_.SetGlobalBuffer((__gm__ T*)query, q_total_ * t_.heads * t_.head_dim);
    key_.SetGlobalBuffer((__gm__ T*)key, key_total * t_.head_dim);
    weights_.SetGlobalBuffer((__gm__ W*)weights, q_total_ * t_.heads);
    lengths_q_.Init(lengths_q, t_.lengths_q);
    lengths_k_.Init(lengths_k, t_.lengths_k);
    table_.Init(block_table, t_.table_bytes);
    indices_.SetGlobalBuffer((__gm__ int32_t*)sparse_indices, q_total_ * t_.sparse_count);
    if (t_.has_values) values_.SetGlobalBuffer((__gm__ float*)sparse_values, q_total_ * t_.sparse_count);
    workspace_.SetGlobalBuffer((__gm__ float*)workspace + core * t_.workspace_per_core, t_.workspace_per_core);

    const uint32_t d = static_cast<uint32_t>(t_.head_dim), tp = static_cast<uint32_t>(t_.tile_pad);
    const uint32_t rows = static_cast<uint32_t>(t_.rows_per_group), n1 = static_cast<uint32_t>(t_.heads);
    const uint32_t kp = static_cast<uint32_t>(t_.k_pad);
    pipe_.InitBuffer(q_l1_, 1, t_.m_pad * d * sizeof(T));
    pipe_.InitBuffer(k_l1_, 1, t_.tile_keys * d * sizeof(T));
    pipe_.InitBuffer(q_l0_, 1, t_.m_pad * d * sizeof(T));
    pipe_.InitBuffer(k_l0_, 1, t_.tile_keys * d * sizeof(T));
    pipe_.InitBuffer(c_l0_, 1, t_.m_pad * t_.tile_keys * sizeof(float));
    pipe_.InitBuffer(scores_buf_, n1 * tp * sizeof(float));
    pipe_.InitBuffer(acc_buf_, tp * sizeof(float));
    pipe_.InitBuffer(iota_buf_, tp * sizeof(int32_t));
    pipe_.InitBuffer(idx_buf_, tp * sizeof(int32_t));
    pipe_.InitBuffer(sorted_buf_, tp * 8);
    pipe_.InitBuffer(sort_tmp_buf_, tp * 8);
    pipe_.InitBuffer(merge_buf_, (kp + tp) * 8);
    pipe_.InitBuffer(topk_buf_, rows * kp * 8);
    pipe_.InitBuffer(w_raw_buf_, RoundUp(rows * n1 * sizeof(W), 32));
    pipe_.InitBuffer(w_buf_, RoundUp(rows * n1 * sizeof(float), 32));

    LocalTensor<int32_t> iota = iota_buf_.Get<int32_t>();
    for (uint32_t i = 0; i < tp; ++i) iota.SetValue(i, static_cast<int32_t>(i));
  }

  __aicore__ inline void Process() {
    for (int64_t item = item_begin_; item < item_end_; ++item) ProcessItem(item);
  }

 private:
  struct Batch {
    int64_t index;    // b
    int64_t q_begin;  // first flat query row of the batch's slab
    int64_t slab;     // rows of the slab (BSND: S1; TND: act_s1, or the padding rows)
    int64_t act_s1;
    int64_t k_begin;  // first key row (BSND / TND), 0 for PA_BSND
    int64_t act_s2;
  };

  __aicore__ inline Batch Geometry(int64_t b) const {
    Batch x{};
    x.index = b;
    if (t_.layout_query == 1) {  // TND: cumulative ends; batch B is the padding past the last end
      x.q_begin = b > 0 ? lengths_q_.Get(b - 1) : 0;
      if (b == t_.batch) {
        x.slab = t_.q_rows - x.q_begin;
        return x;  // act_s1 = act_s2 = 0
      }
      x.act_s1 = lengths_q_.Get(b) - x.q_begin;
      x.slab = x.act_s1;
    } else {
      x.q_begin = b * t_.q_rows;
      x.slab = t_.q_rows;
      x.act_s1 = lengths_q_.Present() ? lengths_q_.Get(b) : t_.q_rows;
    }
    if (t_.layout_key == 1) {
      x.k_begin = b > 0 ? lengths_k_.Get(b - 1) : 0;
      x.act_s2 = lengths_k_.Get(b) - x.k_begin;
    } else if (t_.layout_key == 0) {
      x.k_begin = b * t_.key_rows;
      x.act_s2 = lengths_k_.Present() ? lengths_k_.Get(b) : t_.key_rows;
    } else {
      x.k_begin = 0;
      x.act_s2 = lengths_k_.Get(b);
    }
    return x;
  }

  // Keys visible to row r of the batch: [0, limit).
  __aicore__ inline int64_t Limit(const Batch& x, int64_t r) const {
    if (t_.sparse_mode == 0) return x.act_s2;
    return Min(Max(x.act_s2 - x.act_s1 + r + 1, 0), x.act_s2);
  }

  __aicore__ inline void ProcessItem(int64_t item) {
    const int64_t b = item / t_.groups_per_batch;
    const int64_t r0 = (item % t_.groups_per_batch) * t_.rows_per_group;
    const Batch x = Geometry(b);
    if (r0 >= x.slab) return;
    const int64_t slab_end = Min(r0 + t_.rows_per_group, x.slab);
    const int64_t real_end = Min(slab_end, x.act_s1);
    if (real_end > r0) {
      if (Limit(x, real_end - 1) > 0) {
        ComputeRows(x, r0, real_end - r0);
      } else {
        for (int64_t r = r0; r < real_end; ++r) FillRow(x.q_begin + r);
      }
    }
    for (int64_t r = Max(r0, real_end); r < slab_end; ++r) FillRow(x.q_begin + r);
  }

  // rows (> 0) real query rows from r0; the last one sees at least one key.
  __aicore__ inline void ComputeRows(const Batch& x, int64_t r0, int64_t rows) {
    const int64_t n1 = t_.heads, d = t_.head_dim, kp = t_.k_pad;
    const int64_t m = rows * n1, m_pad = RoundUp(m, kFractalRows);
    const int64_t first_q = (x.q_begin + r0) * n1;  // first query row of the q tile, in [*, D] rows

    // q tile: GM -> L1 (NZ) -> L0A (ZZ), kept for every key tile of the item.
    LocalTensor<T> q_l1 = q_l1_.template AllocTensor<T>();
    LoadNz(q_l1, query_[first_q * d], m, m_pad, q_total_ * n1 - first_q);
    q_l1_.EnQue(q_l1);
    q_l1 = q_l1_.template DeQue<T>();
    LocalTensor<T> q_l0 = q_l0_.template AllocTensor<T>();
    const int64_t d_fractals = d / kFractalRows;
    for (int64_t i = 0; i < m_pad / kFractalRows; ++i) {
      AscendC::LoadData(q_l0[i * d_fractals * kFractalRows * kFractalRows], q_l1,
                        AscendC::LoadData2DParams(static_cast<uint16_t>(i), static_cast<uint8_t>(d_fractals),
                                                  static_cast<uint16_t>(m_pad / kFractalRows), 0, 0, false, 0));
    }
    q_l1_.FreeTensor(q_l1);
    q_l0_.EnQue(q_l0);
    q_l0 = q_l0_.template DeQue<T>();

    // weights of the rows, as float32
    LocalTensor<float> w = w_buf_.Get<float>();
    LoadWeights(w, (x.q_begin + r0) * n1, static_cast<uint32_t>(m));

    // running top-k lists: k_pad (score, index) pairs per row, all -inf
    LocalTensor<float> topk = topk_buf_.Get<float>();
    AscendC::Duplicate(topk, -__builtin_huge_valf(), static_cast<int32_t>(rows * kp * 2));

    const int64_t extent = Limit(x, r0 + rows - 1);
    for (int64_t j0 = 0; j0 < extent; j0 += t_.tile_keys) {
      const int64_t n = Min(t_.tile_keys, extent - j0);
      ScoreTile(x, q_l0, j0, n, m, m_pad);
      for (int64_t r = 0; r < rows; ++r) {
        const int64_t visible = Min(Max(Limit(x, r0 + r) - j0, 0), n);
        if (visible == 0) continue;
        RowScores(w, r, visible);
        MergeTile(topk[static_cast<uint32_t>(r * kp * 2)], j0);
      }
    }
    q_l0_.FreeTensor(q_l0);
    for (int64_t r = 0; r < rows; ++r) {
      WriteRow(topk[static_cast<uint32_t>(r * kp * 2)], x.q_begin + r0 + r, Min(t_.sparse_count, Limit(x, r0 + r)));
    }
  }

  // rows [n, D] of src into an L1 NZ tile of n_pad (multiple of 16) rows; rows past n are
  // copies of loaded rows (read only where the GM run has them: `available` rows), never used.
  __aicore__ inline void LoadNz(const LocalTensor<T>& dst, const GlobalTensor<T>& src, int64_t n, int64_t n_pad,
                                int64_t available) {
    const uint16_t d = static_cast<uint16_t>(t_.head_dim);
    int64_t filled = Min(n_pad, available);
    AscendC::DataCopy(dst, src, AscendC::Nd2NzParams(1, static_cast<uint16_t>(filled), d, 0, d,
                                                     static_cast<uint16_t>(n_pad), 1, 0));
    while (filled < n_pad) {
      const int64_t c = Min(n_pad - filled, n);
      AscendC::DataCopy(dst[static_cast<uint32_t>(filled * kFractalRows)], src,
                        AscendC::Nd2NzParams(1, static_cast<uint16_t>(c), d, 0, d, static_cast<uint16_t>(n_pad), 1, 0));
      filled += c;
    }
  }

  __aicore__ inline void LoadWeights(const LocalTensor<float>& w, int64_t first, uint32_t count) {
    const AscendC::DataCopyExtParams params{1, static_cast<uint32_t>(count * sizeof(W)), 0, 0, 0};
    if constexpr (sizeof(W) == sizeof(float)) {
      AscendC::DataCopyPad(w, weights_[first], params, AscendC::DataCopyPadExtParams<float>{false, 0, 0, 0});
    } else {
      LocalTensor<W> raw = w_raw_buf_.Get<W>();
      AscendC::DataCopyPad(raw, weights_[first], params, AscendC::DataCopyPadExtParams<W>{false, 0, 0, 0});
      AscendC::Cast(w, raw, AscendC::RoundMode::CAST_NONE, count);
    }
  }

  // q . k^T of the q tile against keys [j0, j0 + n) of the batch, into the GM workspace as
  // [m, tile_pad] float32 rows.
  __aicore__ inline void ScoreTile(const Batch& x, const LocalTensor<T>& q_l0, int64_t j0, int64_t n, int64_t m,
                                   int64_t m_pad) {
    const int64_t d = t_.head_dim, n_pad = RoundUp(n, kFractalRows);
    int64_t row, available;
    if (t_.layout_key == 2) {  // PA_BSND: a tile never crosses a cache block (tile_keys | block_size)
      const int64_t block = table_.Get(x.index * t_.max_blocks + j0 / t_.block_size);
      row = block * t_.block_size + j0 % t_.block_size;
      available = t_.block_size - j0 % t_.block_size;
    } else {
      row = x.k_begin + j0;
      available = (t_.layout_key == 0 ? t_.batch * t_.key_rows : t_.key_rows) - row;
    }
    LocalTensor<T> k_l1 = k_l1_.template AllocTensor<T>();
    LoadNz(k_l1, key_[row * d], n, n_pad, available);
    k_l1_.EnQue(k_l1);
    k_l1 = k_l1_.template DeQue<T>();
    // The NZ fractals of k [n, D] are the ZN fractals of k^T, in the same order.
    LocalTensor<T> k_l0 = k_l0_.template AllocTensor<T>();
    AscendC::LoadData(k_l0, k_l1,
                      AscendC::LoadData2DParams(0, static_cast<uint8_t>((n_pad / kFractalRows) * (d / kFractalRows)), 1,
                                                0, 0, false, 0));
    k_l1_.FreeTensor(k_l1);
    k_l0_.EnQue(k_l0);
    k_l0 = k_l0_.template DeQue<T>();

    LocalTensor<float> c = c_l0_.template AllocTensor<float>();
    // m = 1 (one head, one row) would switch the cube to GEMV, which reads L0A as ND instead of
    // the Zz tile prepared here: pass m_pad (16) then. The padding rows are copies of real rows;
    // Fixpipe moves only the m real ones.
    AscendC::MmadParams mp;
    mp.m = static_cast<uint16_t>(m == 1 ? m_pad : m);
    mp.n = static_cast<uint16_t>(n);
    mp.k = static_cast<uint16_t>(d);
    AscendC::Mmad(c, q_l0, k_l0, mp);
    k_l0_.FreeTensor(k_l0);
    c_l0_.EnQue(c);
    c = c_l0_.template DeQue<float>();
    AscendC::FixpipeParamsV220 fp;
    fp.nSize = static_cast<uint16_t>(n);
    fp.mSize = static_cast<uint16_t>(m);
    fp.srcStride = static_cast<uint16_t>(m_pad);
    fp.dstStride = static_cast<uint32_t>(t_.tile_pad);
    AscendC::Fixpipe(workspace_, c, fp);
    c_l0_.FreeTensor(c);
    // The vector side reads what Fixpipe wrote.
    AscendC::SetFlag<AscendC::HardEvent::FIX_MTE2>(0);
    AscendC::WaitFlag<AscendC::HardEvent::FIX_MTE2>(0);
  }

  // acc[j] = sum_h w[r, h] * ReLU(s[r * N1 + h, j]) for the tile, -inf from `visible` on.
  __aicore__ inline void RowScores(const LocalTensor<float>& w, int64_t r, int64_t visible) {
    const int32_t tp = t_.tile_pad, n1 = static_cast<int32_t>(t_.heads);
    LocalTensor<float> s = scores_buf_.Get<float>();
    LocalTensor<float> acc = acc_buf_.Get<float>();
    AscendC::DataCopy(s, workspace_[static_cast<uint64_t>(r * n1 * tp)], static_cast<uint32_t>(n1 * tp));
    AscendC::SetFlag<AscendC::HardEvent::MTE2_V>(0);
    AscendC::WaitFlag<AscendC::HardEvent::MTE2_V>(0);
    AscendC::Relu(s, s, n1 * tp);
    for (int32_t h = 0; h < n1; ++h) {
      const float wh = w.GetValue(static_cast<uint32_t>(r * n1 + h));
      if (h == 0) {
        AscendC::Muls(acc, s, wh, tp);
      } else {
        LocalTensor<float> sh = s[static_cast<uint32_t>(h * tp)];
        AscendC::Muls(sh, sh, wh, tp);
        AscendC::Add(acc, acc, sh, tp);
      }
    }
    // keys past the row's causal limit / act_s2 (and the tile's padding): -inf
    AscendC::PipeBarrier<PIPE_ALL>();
    const int64_t head_end = Min(RoundUp(visible, 8), tp);
    for (int64_t j = visible; j < head_end; ++j) acc.SetValue(static_cast<uint32_t>(j), -__builtin_huge_valf());
    if (head_end < tp) {
      AscendC::Duplicate(acc[static_cast<uint32_t>(head_end)], -__builtin_huge_valf(), static_cast<int32_t>(tp - head_end));
    }
  }

  // Sorts the tile's (score, j0 + i) pairs and merges them into the row's running list when the
  // tile's best score beats the K-th best so far (a tie would lose: its index is larger).
  __aicore__ inline void MergeTile(const LocalTensor<float>& topk, int64_t j0) {
    const int32_t tp = t_.tile_pad, kp = static_cast<int32_t>(t_.k_pad);
    LocalTensor<float> acc = acc_buf_.Get<float>();
    LocalTensor<int32_t> idx = idx_buf_.Get<int32_t>();
    LocalTensor<float> sorted = sorted_buf_.Get<float>();
    LocalTensor<float> tmp = sort_tmp_buf_.Get<float>();
    AscendC::Adds(idx, iota_buf_.Get<int32_t>(), static_cast<int32_t>(j0), tp);
    AscendC::Sort<float, true>(sorted, acc, idx.ReinterpretCast<uint32_t>(), tmp, tp / kSortGroup);
    AscendC::PipeBarrier<PIPE_ALL>();
    const float best = sorted.GetValue(0);
    const float kth = topk.GetValue(static_cast<uint32_t>((t_.sparse_count - 1) * 2));
    if (!(best > kth)) return;
    // The running list (k_pad <= 8192) goes in as up to 3 consecutive chunks of <= 4064 pairs:
    // each chunk is sorted and the chunks are in order, so the merge keeps the list's order
    // (equal scores: lower list first) and the tile, the last list, loses ties.
    LocalTensor<float> merged = merge_buf_.Get<float>();
    uint16_t counts[4] = {0, 0, 0, 0};
    LocalTensor<float> lists[4];
    int32_t n_lists = 0;
    for (int32_t at = 0; at < kp; at += kMaxMergeList) {
      counts[n_lists] = static_cast<uint16_t>(kp - at < kMaxMergeList ? kp - at : kMaxMergeList);
      lists[n_lists++] = topk[static_cast<uint32_t>(at * 2)];
    }
    counts[n_lists] = static_cast<uint16_t>(tp);
    lists[n_lists++] = sorted;
    const uint16_t valid = n_lists == 2 ? 0b11 : n_lists == 3 ? 0b111 : 0b1111;
    uint32_t sorted_num[4] = {0, 0, 0, 0};
    AscendC::MrgSort<float>(merged, AscendC::MrgSortSrcList<float>(lists[0], lists[1], lists[2], lists[3]), counts,
                            sorted_num, valid, 1);
    AscendC::DataCopy(topk, merged, static_cast<uint32_t>(kp * 2));
  }

  // The first `count` pairs of the row's list, then -1 / -inf, to the outputs.
  __aicore__ inline void WriteRow(const LocalTensor<float>& topk, int64_t row, int64_t count) {
    const uint32_t kp = static_cast<uint32_t>(t_.k_pad);
    LocalTensor<float> values = merge_buf_.Get<float>();
    LocalTensor<int32_t> indices = values[kp].template ReinterpretCast<int32_t>();
    // Extract takes at most 255 repeats of 32 pairs: k_pad up to 8192 needs two calls.
    for (uint32_t at = 0; at < kp; at += kMaxExtract) {
      const uint32_t pairs = kp - at < kMaxExtract ? kp - at : kMaxExtract;
      AscendC::Extract(values[at], indices[at].ReinterpretCast<uint32_t>(), topk[at * 2],
                       static_cast<int32_t>(pairs / kSortGroup));
    }
    AscendC::PipeBarrier<PIPE_ALL>();
    const int64_t head_end = Min(RoundUp(count, 8), kp);
    for (int64_t j = count; j < head_end; ++j) indices.SetValue(static_cast<uint32_t>(j), -1);
    if (head_end < static_cast<int64_t>(kp)) {
      AscendC::Duplicate(indices[static_cast<uint32_t>(head_end)], -1, static_cast<int32_t>(kp - head_end));
    }
    CopyOut(values, indices, row);
  }

  __aicore__ inline void FillRow(int64_t row) {
    const uint32_t kp = static_cast<uint32_t>(t_.k_pad);
    LocalTensor<float> values = merge_buf_.Get<float>();
    LocalTensor<int32_t> indices = values[kp].template ReinterpretCast<int32_t>();
    AscendC::Duplicate(values, -__builtin_huge_valf(), static_cast<int32_t>(kp));
    AscendC::Duplicate(indices, -1, static_cast<int32_t>(kp));
    CopyOut(values, indices, row);
  }

  __aicore__ inline void CopyOut(const LocalTensor<float>& values, const LocalTensor<int32_t>& indices, int64_t row) {
    AscendC::SetFlag<AscendC::HardEvent::V_MTE3>(0);
    AscendC::WaitFlag<AscendC::HardEvent::V_MTE3>(0);
    const AscendC::DataCopyExtParams params{1, static_cast<uint32_t>(t_.sparse_count * 4), 0, 0, 0};
    AscendC::DataCopyPad(indices_[static_cast<uint64_t>(row * t_.sparse_count)], indices, params);
    if (t_.has_values) AscendC::DataCopyPad(values_[static_cast<uint64_t>(row * t_.sparse_count)], values, params);
    AscendC::SetFlag<AscendC::HardEvent::MTE3_V>(0);
    AscendC::WaitFlag<AscendC::HardEvent::MTE3_V>(0);
  }

  AscendC::TPipe pipe_;
  AscendC::TQue<TPosition::A1, 1> q_l1_;
  AscendC::TQue<TPosition::B1, 1> k_l1_;
  AscendC::TQue<TPosition::A2, 1> q_l0_;
  AscendC::TQue<TPosition::B2, 1> k_l0_;
  AscendC::TQue<TPosition::CO1, 1> c_l0_;
  AscendC::TBuf<TPosition::VECCALC> scores_buf_, acc_buf_, iota_buf_, idx_buf_, sorted_buf_, sort_tmp_buf_,
      merge_buf_, topk_buf_, w_raw_buf_, w_buf_;
  GlobalTensor<T> query_, key_;
  GlobalTensor<W> weights_;
  GlobalTensor<int32_t> indices_;
  GlobalTensor<float> values_, workspace_;
  IndexTensor lengths_q_, lengths_k_, table_;
  LightningIndexerTiling t_;
  int64_t q_total_ = 0;
  int64_t item_begin_ = 0;
  int64_t item_end_ = 0;
};

template <typename T, typename W>
__aicore__ inline void Run(GM_ADDR query, GM_ADDR key, GM_ADDR weights, GM_ADDR lengths_q, GM_ADDR lengths_k,
                           GM_ADDR block_table, GM_ADDR sparse_indices, GM_ADDR sparse_values, GM_ADDR workspace,
                           const LightningIndexerTiling& tiling) {
  LightningIndexerKernel<T, W> op;
  op.Init(query, key, weights, lengths_q, lengths_k, block_table, sparse_indices, sparse_values, workspace, tiling);
  op.Process();
}

}  // namespace

// query:          [B, S1, N1, D] | [T1, N1, D]                      float16 / bfloat16
// key:            [num_blocks, block_size, 1, D] | [B, S2, 1, D] | [T2, 1, D]   query's dtype
// weights:        [B, S1, N1] | [T1, N1]                            query's dtype or float32
// lengths_q/k:    [B] int32 / int64 (may be absent: nullptr)        block_table: [B, max_blocks]
// sparse_indices: [B, S1, 1, K] | [T1, 1, K] int32                  sparse_values: same, float32 (or nullptr)
// workspace:      [block_dim, m_pad * tile_pad] float32             tiling: LightningIndexerTiling
extern "C" __global__ __aicore__ void lightning_indexer_kernel(GM_ADDR query, GM_ADDR key, GM_ADDR weights,
                                                               GM_ADDR lengths_q, GM_ADDR lengths_k,
                                                               GM_ADDR block_table, GM_ADDR sparse_indices,
                                                               GM_ADDR sparse_values, GM_ADDR workspace,
                                                               GM_ADDR tiling_gm) {
  const LightningIndexerTiling tiling = *reinterpret_cast<__gm__ LightningIndexerTiling*>(tiling_gm);
  if (tiling.dtype == 1) {
    if (tiling.weights_float) {
      Run<bfloat16_t, float>(query, key, weights, lengths_q, lengths_k, block_table, sparse_indices, sparse_values,
                             workspace, tiling);
    } else {
      Run<bfloat16_t, bfloat16_t>(query, key, weights, lengths_q, lengths_k, block_table, sparse_indices,
                                  sparse_values, workspace, tiling);
    }
  } else {
    if (tiling.weights_float) {
      Run<half, float>(query, key, weights, lengths_q, lengths_k, block_table, sparse_indices, sparse_values,
                       workspace, tiling);
    } else {
      Run<half, half>(query, key, weights, lengths_q, lengths_k, block_table, sparse_indices, sparse_values,
                      workspace, tiling);
    }
  }
}

// The host-side <<<>>> launch, in the kernel's translation unit as CANN's ascendc_library
// needs it (its host stub for the kernel is generated from this file). CPU builds define
// ASCENDC_CPU_DEBUG, as CANN's CPU-debug build does: the emulator and the real-header check
// (ascendc-api-check) call or compile the kernel function alone.
#ifndef ASCENDC_CPU_DEBUG
#include "kernel/lightning_indexer_launch.h"

extern "C" void lightning_indexer_launch(uint32_t block_dim, void* stream, uint8_t* query, uint8_t* key,
                                         uint8_t* weights, uint8_t* lengths_q, uint8_t* lengths_k,
                                         uint8_t* block_table, uint8_t* sparse_indices, uint8_t* sparse_values,
                                         uint8_t* workspace, uint8_t* tiling) {
  lightning_indexer_kernel<<<block_dim, nullptr, stream>>>(query, key, weights, lengths_q, lengths_k, block_table,
                                                           sparse_indices, sparse_values, workspace, tiling);
}
#endif  // ASCENDC_CPU_DEBUG
