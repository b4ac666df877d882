// The CPU backend: a fused, blocked kernel that never materialises the [S1, N1, S2] product.
//
// Work items are (batch, key head, block of query rows, chunk of keys). An item prepares its
// query rows and weights once, then walks its keys in tiles of plan.key_tile, gathered through
// block_table for PA_BSND (the next tile is prefetched), and every query row of the item scores
// the tile with a register-blocked micro-kernel (float32 accumulation, ReLU and the
// head-weighted sum fused): bfloat16 keys on a CPU with AVX512_BF16 are read where they lie by
// the key-major kernel (host/score_keys.cpp); otherwise the tile is converted to float32 and
// transposed once for score_row (host/score_row.cpp). Scores go to a running top-k per row
// (host/top_k.h). A final pass merges the items of each split row.
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
#include "host/score_keys.h"
#include "host/top_k.h"

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

// Query row q [G][D] (bfloat16 bits, D even) -> qp [D / 2][Gp] pairs for score_keys; pad heads 0.
inline void pack_query_pairs(const uint16_t* q, int64_t G, int64_t D, int64_t Gp, uint32_t* qp) {
  for (int64_t c = 0; c < D / 2; ++c) {
    uint32_t* out = qp + c * Gp;
    for (int64_t h = 0; h < G; ++h) {
      out[h] = static_cast<uint32_t>(q[h * D + 2 * c]) | (static_cast<uint32_t>(q[h * D + 2 * c + 1]) << 16);
    }
    for (int64_t h = G; h < Gp; ++h) out[h] = 0;
  }
}

// ---- geometry ----------------------------------------------------------------------------
struct Batch {
  int64_t q_begin;  // first query row (flat row index of query / weights / outputs)
  int64_t q_len;    // act_s1
  int64_t k_begin;  // first key row (BSND / TND), 0 for PA_BSND
  int64_t k_len;    // act_s2 (compressed rows when cmp_ratio > 1)
  int64_t residual; // cmp_residual_k[b] (0 when absent)
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
    x.residual = a.cmp_residual_k ? read_index(*a.cmp_residual_k, b) : 0;
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
inline int64_t visible_limit(const Args& a, const Batch& b, int64_t r) {
  return LiVisibleKeys(a.sparse_mode, b.q_len, b.k_len, r, a.cmp_ratio, b.residual);
}

struct Group {  // one (batch, key head, block of rows); its items are [first_item, first_item + items)
  int64_t batch, head, row_begin, row_end;
  int64_t first_item, items;
};

struct Item {
  int64_t group;
  int64_t key_begin, key_end;
  int64_t cand_offset;  // into the candidate store ((row_end - row_begin) * K entries); -1: not split
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

  // Groups and items. Only groups split into several items keep candidate lists for a merge;
  // a group of one item writes its rows' outputs itself.
  std::vector<Group> groups;
  std::vector<Item> items;
  std::vector<int64_t> split_groups;
  int64_t cand_total = 0;
  for (int64_t b = 0; b < d.batch; ++b) {
    const Batch& x = bs[b];
    for (int64_t g = 0; g < N2; ++g) {
      for (int64_t r0 = 0; r0 < x.q_len; r0 += plan.row_block) {
        const int64_t r1 = std::min(x.q_len, r0 + plan.row_block);
        const int64_t extent = visible_limit(a, x, r1 - 1);  // the last row sees the most
        Group grp{b, g, r0, r1, static_cast<int64_t>(items.size()), 0};
        for (int64_t k0 = 0; k0 < extent; k0 += plan.key_chunk) {
          items.push_back(Item{static_cast<int64_t>(groups.size()), k0, std::min(extent, k0 + plan.key_chunk), -1});
          ++grp.items;
        }
        if (grp.items > 1) {
          split_groups.push_back(static_cast<int64_t>(groups.size()));
          for (int64_t i = 0; i < grp.items; ++i) {
            items[grp.first_item + i].cand_offset = cand_total;
            cand_total += (r1 - r0) * K;
          }
        }
        groups.push_back(grp);
      }
    }
  }
  std::vector<Cand> cands(static_cast<size_t>(cand_total));
  std::vector<int32_t> cand_count(static_cast<size_t>(cand_total / std::max<int64_t>(K, 1)), 0);

  // Row r of group grp gets its m best candidates `list`, then -1 / -inf.
  auto write_row = [&](const Group& grp, int64_t r, const Cand* list, int64_t m) {
    const int64_t out = ((bs[grp.batch].q_begin + grp.row_begin + r) * N2 + grp.head) * K;
    for (int64_t p = 0; p < m; ++p) out_idx[out + p] = cand_index(list[p]);
    std::fill(out_idx + out + m, out_idx + out + K, -1);
    if (out_val) {
      for (int64_t p = 0; p < m; ++p) out_val[out + p] = cand_score(list[p]);
      std::fill(out_val + out + m, out_val + out + K, neg_inf);
    }
  };
  for (const Group& grp : groups) {  // no visible key (empty batch, act_s1 > act_s2): no item
    if (grp.items == 0) {
      for (int64_t r = 0; r < grp.row_end - grp.row_begin; ++r) write_row(grp, r, nullptr, 0);
    }
  }

  const aop_dtype dtype = a.query.dtype;
  const int64_t elem = static_cast<int64_t>(aop_dtype_size(dtype));
  const char* q_base = static_cast<const char*>(a.query.data);
  const char* k_base = static_cast<const char*>(a.key.data);
  const char* w_base = static_cast<const char*>(a.weights.data);
  const int64_t bt_stride = d.max_blocks;
  const ScoreRowFn score_row = select_score_row();
  // bfloat16 with an even D on a CPU with AVX512_BF16: keys are scored where they lie (no
  // conversion, no transpose); otherwise tiles are converted and transposed for score_row.
  const ScoreKeysFn score_keys =
      dtype == AOP_DTYPE_BFLOAT16 && D % 2 == 0 ? select_score_keys_bf16() : nullptr;
  const int64_t Gp = (G + kHeadLanes - 1) / kHeadLanes * kHeadLanes;

  // ptrs[j] = key row of logical keys first + j, j < n (one division per call, not per key).
  const int64_t row_stride = N2 * D * elem;
  auto key_rows = [&](const Batch& x, int64_t batch, int64_t head, int64_t first, int64_t n, const char** ptrs) {
    const char* base = k_base + head * D * elem;
    if (a.layout_key != Layout::kPA_BSND) {
      for (int64_t j = 0; j < n; ++j) ptrs[j] = base + (x.k_begin + first + j) * row_stride;
      return;
    }
    int64_t entry = first / d.block_size, offset = first % d.block_size;
    for (int64_t j = 0; j < n;) {
      const char* block = base + read_index(*a.block_table, batch * bt_stride + entry) * d.key_block_stride * elem;
      for (; offset < d.block_size && j < n; ++offset, ++j) ptrs[j] = block + offset * row_stride;
      ++entry;
      offset = 0;
    }
  };

  parallel_for(static_cast<int64_t>(items.size()), 1, [&](int64_t begin, int64_t end) {
    std::vector<float> qf, wf, kt(score_keys ? 0 : static_cast<size_t>(D * KT)), scores(static_cast<size_t>(KT));
    std::vector<uint32_t> qp;
    std::vector<Cand> buffers;
    std::vector<RunningTopK> tops;
    std::vector<const char*> rows_ptr(static_cast<size_t>(KT)), next_ptr(static_cast<size_t>(KT));
    for (int64_t it = begin; it < end; ++it) {
      const Item& item = items[it];
      const Group& grp = groups[item.group];
      const Batch& x = bs[grp.batch];
      const int64_t rows = grp.row_end - grp.row_begin;
      // Query rows [rows][G][D] and weights [rows][G] of key head g, in float32 (score_keys:
      // query pairs [rows][D / 2][Gp] and weights [rows][Gp], pad heads zero).
      const int64_t wstride = score_keys ? Gp : G;
      qf.resize(score_keys ? 0 : static_cast<size_t>(rows * G * D));
      qp.resize(score_keys ? static_cast<size_t>(rows * (D / 2) * Gp) : 0);
      wf.assign(static_cast<size_t>(rows * wstride), 0.0f);
      for (int64_t r = 0; r < rows; ++r) {
        const int64_t row = x.q_begin + grp.row_begin + r;
        const char* q_row = q_base + ((row * N1 + grp.head * G) * D) * elem;
        if (score_keys) {
          pack_query_pairs(reinterpret_cast<const uint16_t*>(q_row), G, D, Gp, qp.data() + r * (D / 2) * Gp);
        } else {
          to_float(dtype, q_row, G * D, qf.data() + r * G * D, 1);
        }
        to_float(a.weights.dtype, w_base + (row * N1 + grp.head * G) * aop_dtype_size(a.weights.dtype), G,
                 wf.data() + r * wstride, 1);
      }
      buffers.resize(static_cast<size_t>(rows * 2 * K));
      tops.resize(static_cast<size_t>(rows));
      for (int64_t r = 0; r < rows; ++r) tops[r].reset(buffers.data() + r * 2 * K, K);

      for (int64_t t0 = item.key_begin; t0 < item.key_end; t0 += KT) {
        const int64_t n = std::min(KT, item.key_end - t0);
        // The tile's key rows (through block_table for PA_BSND) and the next tile's, to be
        // prefetched while this one is scored: cache blocks lie anywhere in memory, out of the
        // hardware prefetcher's reach.
        if (t0 == item.key_begin) {
          key_rows(x, grp.batch, grp.head, t0, n, rows_ptr.data());
        } else {
          rows_ptr.swap(next_ptr);  // found for the previous tile's prefetch
        }
        const int64_t next_n = std::max<int64_t>(0, std::min(KT, item.key_end - t0 - KT));
        key_rows(x, grp.batch, grp.head, t0 + KT, next_n, next_ptr.data());
        int64_t to_prefetch = next_n;  // score_keys prefetches them while it scores the first row
        if (!score_keys) {
          for (int64_t j = 0; j < next_n; ++j) {
            for (int64_t off = 0; off < D * elem; off += 64) __builtin_prefetch(next_ptr[j] + off, 0, 3);
          }
        }
        // score_row's path: convert to float32 transposed to [D][KT], d-major so the stores
        // are contiguous; pad columns are zero.
        if (!score_keys) transpose_to_float(dtype, rows_ptr.data(), n, D, kt.data(), KT);
        for (int64_t r = 0; r < rows; ++r) {
          const int64_t limit = std::min(visible_limit(a, x, grp.row_begin + r), item.key_end);
          if (limit <= t0) continue;
          const int64_t count = std::min(n, limit - t0);
          if (score_keys) {
            score_keys(qp.data() + r * (D / 2) * Gp, wf.data() + r * Gp, Gp, D, rows_ptr.data(), count,
                       scores.data(), next_ptr.data(), to_prefetch);
            to_prefetch = 0;
          } else {
            score_row(qf.data() + r * G * D, wf.data() + r * G, G, D, kt.data(), KT, scores.data());
          }
          tops[r].push(scores.data(), count, t0);
        }
      }
      for (int64_t r = 0; r < rows; ++r) {
        const int64_t m = tops[r].finish();
        const Cand* best = buffers.data() + r * 2 * K;
        if (grp.items == 1) {
          write_row(grp, r, best, m);
        } else {
          std::copy(best, best + m, cands.data() + item.cand_offset + r * K);
          cand_count[(item.cand_offset + r * K) / K] = static_cast<int32_t>(m);
        }
      }
    }
  });

  // Merge the items of each row of the split groups and write their outputs.
  if (split_groups.empty()) return;
  parallel_for(static_cast<int64_t>(split_groups.size()), 1, [&](int64_t begin, int64_t end) {
    std::vector<Cand> merged, spare;
    for (int64_t si = begin; si < end; ++si) {
      const Group& grp = groups[split_groups[si]];
      for (int64_t r = 0; r < grp.row_end - grp.row_begin; ++r) {
        // Each item's list is sorted: merge them in turn (a strict order: no ties between items).
        merged.clear();
        for (int64_t i = 0; i < grp.items; ++i) {
          const Item& item = items[grp.first_item + i];
          const Cand* c = cands.data() + item.cand_offset + r * K;
          const int64_t cm = cand_count[(item.cand_offset + r * K) / K];
          spare.resize(merged.size() + static_cast<size_t>(cm));
          std::merge(merged.begin(), merged.end(), c, c + cm, spare.begin());
          spare.resize(std::min<size_t>(spare.size(), static_cast<size_t>(K)));
          merged.swap(spare);
        }
        write_row(grp, r, merged.data(), static_cast<int64_t>(merged.size()));
      }
    }
  });
}

}  // namespace aop::lightning_indexer
