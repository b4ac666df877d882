// The CPU backend: a fused, blocked kernel that never materialises the [S1, N1, S2] product.
//
// Work items are (batch, key head, block of query rows, chunk of keys). An item converts its
// query rows and weights to float32 once, then walks its keys in tiles of plan.key_tile:
// each tile is gathered (through block_table for PA_BSND), converted to float32 and
// transposed once, and every query row of the item scores it with a register-blocked
// micro-kernel (float32 accumulation, ReLU and the head-weighted sum fused). Scores go to a
// running top-k per row: a candidate buffer of 2K entries filtered by the current K-th best
// score and pruned by partial selection when full. A final pass merges the items of each row.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "ascend_ops/cache.hpp"
#include "ascend_ops/error.hpp"
#include "ascend_ops/parallel.hpp"
#include "ascend_ops/tensor.hpp"
#include "host/cpu_kernel.h"
#include "host/lightning_indexer.h"

namespace aop::lightning_indexer {
namespace {

// ---- element conversion ------------------------------------------------------------------
inline float from_bits(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

inline float bf16_to_float(uint16_t h) { return from_bits(static_cast<uint32_t>(h) << 16); }

inline float fp16_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  const uint32_t mant = h & 0x3ffu;
  if (exp == 0x1f) return from_bits(sign | 0x7f800000u | (mant << 13));           // inf / nan
  if (exp != 0) return from_bits(sign | ((exp + 112) << 23) | (mant << 13));      // normal
  if (mant == 0) return from_bits(sign);                                           // zero
  const float sub = static_cast<float>(mant) * (1.0f / 16777216.0f);              // subnormal: mant * 2^-24
  return sign ? -sub : sub;
}

// n elements of dtype at src -> float32 at dst[i * dst_stride].
inline void to_float(aop_dtype dtype, const void* src, int64_t n, float* dst, int64_t dst_stride) {
  switch (dtype) {
    case AOP_DTYPE_FLOAT32: {
      const float* s = static_cast<const float*>(src);
      for (int64_t i = 0; i < n; ++i) dst[i * dst_stride] = s[i];
      return;
    }
    case AOP_DTYPE_BFLOAT16: {
      const uint16_t* s = static_cast<const uint16_t*>(src);
      for (int64_t i = 0; i < n; ++i) dst[i * dst_stride] = bf16_to_float(s[i]);
      return;
    }
    default: {
      const uint16_t* s = static_cast<const uint16_t*>(src);
      for (int64_t i = 0; i < n; ++i) dst[i * dst_stride] = fp16_to_float(s[i]);
      return;
    }
  }
}

// Key rows rows[j] (D elements each, j < n) -> kt[d * KT + j] in float32; columns n..KT-1 zero.
template <typename Convert>
inline void transpose_rows(const char* const* rows, int64_t n, int64_t D, float* kt, int64_t KT, Convert convert) {
  for (int64_t d = 0; d < D; ++d) {
    float* out = kt + d * KT;
    int64_t j = 0;
    for (; j < n; ++j) out[j] = convert(rows[j], d);
    for (; j < KT; ++j) out[j] = 0.0f;
  }
}

inline void transpose_to_float(aop_dtype dtype, const char* const* rows, int64_t n, int64_t D, float* kt,
                               int64_t KT) {
  switch (dtype) {
    case AOP_DTYPE_FLOAT32:
      transpose_rows(rows, n, D, kt, KT, [](const char* r, int64_t d) { return reinterpret_cast<const float*>(r)[d]; });
      return;
    case AOP_DTYPE_BFLOAT16:
      transpose_rows(rows, n, D, kt, KT,
                     [](const char* r, int64_t d) { return bf16_to_float(reinterpret_cast<const uint16_t*>(r)[d]); });
      return;
    default:
      transpose_rows(rows, n, D, kt, KT,
                     [](const char* r, int64_t d) { return fp16_to_float(reinterpret_cast<const uint16_t*>(r)[d]); });
      return;
  }
}

// ---- running top-k -----------------------------------------------------------------------
struct Cand {
  float score;
  int32_t index;
};

// The spec's order: larger score first, ties to the smaller index.
inline bool better(const Cand& a, const Cand& b) {
  return a.score > b.score || (a.score == b.score && a.index < b.index);
}

// Keys arrive in increasing index order, so once the buffer has been pruned a new key can
// only enter with a score strictly above the current K-th best. NaN scores never enter.
class RunningTopK {
 public:
  void reset(Cand* buffer, int64_t k) {
    buf_ = buffer;
    k_ = k;
    n_ = 0;
    pruned_ = false;
    threshold_ = -std::numeric_limits<float>::infinity();
  }
  float threshold() const { return pruned_ ? threshold_ : std::numeric_limits<float>::quiet_NaN(); }

  // scores[i] is key first + i.
  void push(const float* scores, int64_t count, int64_t first) {
    if (!pruned_) {
      for (int64_t i = 0; i < count; ++i) {
        if (scores[i] == scores[i]) add(scores[i], first + i);
      }
      return;
    }
    for (int64_t i = 0; i < count; ++i) {
      if (scores[i] > threshold_) add(scores[i], first + i);
    }
  }

  // Sorts the kept candidates; returns how many (<= k).
  int64_t finish() {
    if (n_ > k_) prune();
    std::sort(buf_, buf_ + n_, better);
    return n_;
  }

 private:
  void add(float score, int64_t index) {
    buf_[n_++] = Cand{score, static_cast<int32_t>(index)};
    if (n_ == 2 * k_) prune();
  }
  void prune() {
    std::nth_element(buf_, buf_ + (k_ - 1), buf_ + n_, better);
    n_ = k_;
    threshold_ = buf_[k_ - 1].score;
    pruned_ = true;
  }

  Cand* buf_ = nullptr;
  int64_t k_ = 0;
  int64_t n_ = 0;
  bool pruned_ = false;
  float threshold_ = 0;
};

// ---- geometry ----------------------------------------------------------------------------
int64_t read_index(const aop_tensor& t, int64_t i) {
  return t.dtype == AOP_DTYPE_INT64 ? static_cast<const int64_t*>(t.data)[i]
                                    : static_cast<const int32_t*>(t.data)[i];
}

struct Batch {
  int64_t q_begin;  // first query row (flat row index of query / weights / outputs)
  int64_t q_len;    // act_s1
  int64_t k_begin;  // first key row (BSND / TND), 0 for PA_BSND
  int64_t k_len;    // act_s2
};

std::vector<Batch> batches(const Args& a, const Dims& d) {
  std::vector<Batch> out(static_cast<size_t>(d.batch));
  int64_t q_prev = 0, k_prev = 0;
  for (int64_t b = 0; b < d.batch; ++b) {
    Batch& x = out[b];
    if (a.layout_query == Layout::kTND) {
      const int64_t end = read_index(*a.actual_seq_lengths_query, b);
      x.q_begin = q_prev;
      x.q_len = end - q_prev;
      q_prev = end;
    } else {
      x.q_begin = b * d.q_rows;
      x.q_len = a.actual_seq_lengths_query ? read_index(*a.actual_seq_lengths_query, b) : d.q_rows;
    }
    switch (a.layout_key) {
      case Layout::kTND: {
        const int64_t end = read_index(*a.actual_seq_lengths_key, b);
        x.k_begin = k_prev;
        x.k_len = end - k_prev;
        k_prev = end;
        break;
      }
      case Layout::kBSND:
        x.k_begin = b * d.key_rows;
        x.k_len = a.actual_seq_lengths_key ? read_index(*a.actual_seq_lengths_key, b) : d.key_rows;
        break;
      case Layout::kPA_BSND:
        x.k_begin = 0;
        x.k_len = read_index(*a.actual_seq_lengths_key, b);
        break;
    }
  }
  return out;
}

// Keys visible to row r (0-based within its batch): [0, limit).
inline int64_t visible_limit(int64_t mode, const Batch& b, int64_t r) {
  if (mode == 0) return b.k_len;
  return std::clamp<int64_t>(b.k_len - b.q_len + r + 1, 0, b.k_len);
}

struct Group {  // one (batch, key head, block of rows); its items are [first_item, first_item + items)
  int64_t batch, head, row_begin, row_end;
  int64_t first_item, items;
};

struct Item {
  int64_t group;
  int64_t key_begin, key_end;
  int64_t cand_offset;  // into the candidate store: (row_end - row_begin) * K entries
};

}  // namespace

void run_cpu(const Args& a) {
  const Dims d = validate(a);
  if (a.query.device.type != AOP_DEVICE_CPU) {
    throw aop::Error(AOP_VALUE_ERROR, "lightning_indexer: the cpu backend needs tensors on cpu, query is on " +
                                          device_string(a.query.device));
  }
  check_data(a, d);
  const CpuPlan plan = cpu_plan(a, d);
  const std::vector<Batch> bs = batches(a, d);

  const int64_t K = a.sparse_count, N1 = d.heads_q, N2 = d.heads_k, G = N1 / N2, D = d.head_dim;
  const int64_t KT = plan.key_tile;
  int32_t* out_idx = static_cast<int32_t*>(a.sparse_indices.data);
  float* out_val = a.sparse_values ? static_cast<float*>(a.sparse_values->data) : nullptr;
  const float neg_inf = -std::numeric_limits<float>::infinity();

  // Rows no batch covers (BSND rows >= act_s1, TND rows past the last end): all -1.
  const int64_t total_rows = a.layout_query == Layout::kTND ? d.q_rows : d.batch * d.q_rows;
  std::vector<char> covered(static_cast<size_t>(total_rows), 0);
  for (const Batch& b : bs) std::fill(covered.begin() + b.q_begin, covered.begin() + b.q_begin + b.q_len, 1);
  for (int64_t row = 0; row < total_rows; ++row) {
    if (covered[row]) continue;
    std::fill(out_idx + row * N2 * K, out_idx + (row + 1) * N2 * K, -1);
    if (out_val) std::fill(out_val + row * N2 * K, out_val + (row + 1) * N2 * K, neg_inf);
  }

  // Groups and items.
  std::vector<Group> groups;
  std::vector<Item> items;
  int64_t cand_total = 0;
  for (int64_t b = 0; b < d.batch; ++b) {
    const Batch& x = bs[b];
    for (int64_t g = 0; g < N2; ++g) {
      for (int64_t r0 = 0; r0 < x.q_len; r0 += plan.row_block) {
        const int64_t r1 = std::min(x.q_len, r0 + plan.row_block);
        const int64_t extent = visible_limit(a.sparse_mode, x, r1 - 1);  // the last row sees the most
        Group grp{b, g, r0, r1, static_cast<int64_t>(items.size()), 0};
        for (int64_t k0 = 0; k0 < extent; k0 += plan.key_chunk) {
          items.push_back(Item{static_cast<int64_t>(groups.size()), k0, std::min(extent, k0 + plan.key_chunk),
                               cand_total});
          cand_total += (r1 - r0) * K;
          ++grp.items;
        }
        groups.push_back(grp);
      }
    }
  }
  std::vector<Cand> cands(static_cast<size_t>(cand_total));
  std::vector<int32_t> cand_count(static_cast<size_t>(cand_total / std::max<int64_t>(K, 1)), 0);

  const aop_dtype dtype = a.query.dtype;
  const int64_t elem = static_cast<int64_t>(aop_dtype_size(dtype));
  const char* q_base = static_cast<const char*>(a.query.data);
  const char* k_base = static_cast<const char*>(a.key.data);
  const char* w_base = static_cast<const char*>(a.weights.data);
  const int64_t bt_stride = d.max_blocks;
  const ScoreRowFn score_row = select_score_row();

  parallel_for(static_cast<int64_t>(items.size()), 1, [&](int64_t begin, int64_t end) {
    std::vector<float> qf, wf, kt(static_cast<size_t>(D * KT)), scores(static_cast<size_t>(KT));
    std::vector<Cand> buffers;
    std::vector<RunningTopK> tops;
    std::vector<const char*> rows_ptr(static_cast<size_t>(KT));
    for (int64_t it = begin; it < end; ++it) {
      const Item& item = items[it];
      const Group& grp = groups[item.group];
      const Batch& x = bs[grp.batch];
      const int64_t rows = grp.row_end - grp.row_begin;
      // Query rows [rows][G][D] and weights [rows][G] of key head g, in float32.
      qf.resize(static_cast<size_t>(rows * G * D));
      wf.resize(static_cast<size_t>(rows * G));
      for (int64_t r = 0; r < rows; ++r) {
        const int64_t row = x.q_begin + grp.row_begin + r;
        to_float(dtype, q_base + ((row * N1 + grp.head * G) * D) * elem, G * D, qf.data() + r * G * D, 1);
        to_float(a.weights.dtype, w_base + (row * N1 + grp.head * G) * aop_dtype_size(a.weights.dtype), G,
                 wf.data() + r * G, 1);
      }
      buffers.resize(static_cast<size_t>(rows * 2 * K));
      tops.resize(static_cast<size_t>(rows));
      for (int64_t r = 0; r < rows; ++r) tops[r].reset(buffers.data() + r * 2 * K, K);

      for (int64_t t0 = item.key_begin; t0 < item.key_end; t0 += KT) {
        const int64_t n = std::min(KT, item.key_end - t0);
        // Gather the tile's key rows (through block_table for PA_BSND), then convert them to
        // float32 transposed to [D][KT], d-major so the stores are contiguous; pad columns are zero.
        for (int64_t j = 0; j < n; ++j) {
          const int64_t key = t0 + j;
          int64_t slot;
          if (a.layout_key == Layout::kPA_BSND) {
            const int64_t block = read_index(*a.block_table, grp.batch * bt_stride + key / d.block_size);
            slot = block * d.block_size + key % d.block_size;
          } else {
            slot = x.k_begin + key;
          }
          rows_ptr[j] = k_base + ((slot * N2 + grp.head) * D) * elem;
        }
        transpose_to_float(dtype, rows_ptr.data(), n, D, kt.data(), KT);
        for (int64_t r = 0; r < rows; ++r) {
          const int64_t limit = std::min(visible_limit(a.sparse_mode, x, grp.row_begin + r), item.key_end);
          if (limit <= t0) continue;
          score_row(qf.data() + r * G * D, wf.data() + r * G, G, D, kt.data(), KT, scores.data());
          tops[r].push(scores.data(), std::min(n, limit - t0), t0);
        }
      }
      for (int64_t r = 0; r < rows; ++r) {
        const int64_t m = tops[r].finish();
        std::copy(buffers.data() + r * 2 * K, buffers.data() + r * 2 * K + m, cands.data() + item.cand_offset + r * K);
        cand_count[(item.cand_offset + r * K) / K] = static_cast<int32_t>(m);
      }
    }
  });

  // Merge the items of each row and write the outputs.
  parallel_for(static_cast<int64_t>(groups.size()), 1, [&](int64_t begin, int64_t end) {
    std::vector<Cand> merged;
    for (int64_t gi = begin; gi < end; ++gi) {
      const Group& grp = groups[gi];
      const Batch& x = bs[grp.batch];
      for (int64_t r = 0; r < grp.row_end - grp.row_begin; ++r) {
        const Cand* list;
        int64_t m;
        if (grp.items == 1) {
          const Item& item = items[grp.first_item];
          list = cands.data() + item.cand_offset + r * K;
          m = cand_count[(item.cand_offset + r * K) / K];
        } else {
          merged.clear();
          for (int64_t i = 0; i < grp.items; ++i) {
            const Item& item = items[grp.first_item + i];
            const Cand* c = cands.data() + item.cand_offset + r * K;
            merged.insert(merged.end(), c, c + cand_count[(item.cand_offset + r * K) / K]);
          }
          m = std::min<int64_t>(K, static_cast<int64_t>(merged.size()));
          std::partial_sort(merged.begin(), merged.begin() + m, merged.end(), better);
          list = merged.data();
        }
        const int64_t out = ((x.q_begin + grp.row_begin + r) * N2 + grp.head) * K;
        for (int64_t p = 0; p < m; ++p) out_idx[out + p] = list[p].index;
        std::fill(out_idx + out + m, out_idx + out + K, -1);
        if (out_val) {
          for (int64_t p = 0; p < m; ++p) out_val[out + p] = list[p].score;
          std::fill(out_val + out + m, out_val + out + K, neg_inf);
        }
      }
    }
  });
}

}  // namespace aop::lightning_indexer
