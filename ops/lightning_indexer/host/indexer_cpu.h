// The CPU driver of the lightning indexers (lightning_indexer, lightning_indexer_quant): the work
// split, the key gathering, the visibility rule, the running top-k and the merge, shared; only
// the scoring of a tile of keys differs, and is the Scorer's.
//
// Work items are (batch, key head, block of query rows, chunk of keys). An item has its Scorer
// prepare its query rows once, then walks its keys in tiles of plan.key_tile, gathered through
// block_table for PA_BSND (the next tile's rows are found ahead, for the Scorer to prefetch),
// and every query row of the item scores the tile. Scores go to a running top-k per row
// (host/top_k.h). A final pass merges the items of each split row.
//
// A Scorer (one per worker chunk, made by make_scorer()) has
//   void begin_item(int64_t first_row, int64_t rows, int64_t head)   flat query row, row count, key head
//   void begin_tile(const char* const* keys, int64_t n, const char* const* next, int64_t next_n)
//   void score(int64_t r, const char* const* keys, int64_t count, float* scores)   count <= n keys of the tile
// keys[j] points at key j's row of the item's key head (key.data + (row * N2 + head) * D * itemsize).
#pragma once
#include <algorithm>
#include <cstring>
#include <limits>
#include <vector>

#include "ascend_ops/parallel.hpp"
#include "ascend_ops/tensor.hpp"
#include "host/lightning_indexer.h"
#include "host/top_k.h"

namespace aop::lightning_indexer {
namespace cpu {

struct Batch {
  int64_t q_begin;  // first query row (flat row index of query / weights / outputs)
  int64_t q_len;    // act_s1
  int64_t k_begin;  // first key row (BSND / TND), 0 for PA_BSND
  int64_t k_len;    // act_s2 (compressed rows when cmp_ratio > 1)
  int64_t residual; // cmp_residual_k[b] (0 when absent)
};

inline std::vector<Batch> batches(const Args& a, const Dims& d) {
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

// The physical key row (index into key's leading dims flattened: block * block_size + offset for
// PA_BSND) of logical key j of batch `batch`; j must be visible (its block id was checked).
inline int64_t key_row(const Args& a, const Dims& d, const Batch& x, int64_t batch, int64_t j) {
  if (a.layout_key != Layout::kPA_BSND) return x.k_begin + j;
  return read_index(*a.block_table, batch * d.max_blocks + j / d.block_size) * d.block_size + j % d.block_size;
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

// validate() and check_data() have passed; writes both outputs.
template <class MakeScorer>
void run_indexer(const Args& a, const Dims& d, const CpuPlan& plan, MakeScorer make_scorer) {
  const std::vector<Batch> bs = batches(a, d);
  const int64_t K = a.sparse_count, N2 = d.heads_k, D = d.head_dim;
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

  const int64_t elem = static_cast<int64_t>(aop_dtype_size(a.key.dtype));
  const char* k_base = static_cast<const char*>(a.key.data);
  const int64_t bt_stride = d.max_blocks;
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
    auto scorer = make_scorer();
    std::vector<float> scores(static_cast<size_t>(KT));
    std::vector<Cand> buffers;
    std::vector<RunningTopK> tops;
    std::vector<const char*> rows_ptr(static_cast<size_t>(KT)), next_ptr(static_cast<size_t>(KT));
    for (int64_t it = begin; it < end; ++it) {
      const Item& item = items[it];
      const Group& grp = groups[item.group];
      const Batch& x = bs[grp.batch];
      const int64_t rows = grp.row_end - grp.row_begin;
      scorer.begin_item(x.q_begin + grp.row_begin, rows, grp.head);
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
        scorer.begin_tile(rows_ptr.data(), n, next_ptr.data(), next_n);
        for (int64_t r = 0; r < rows; ++r) {
          const int64_t limit = std::min(visible_limit(a, x, grp.row_begin + r), item.key_end);
          if (limit <= t0) continue;
          const int64_t count = std::min(n, limit - t0);
          scorer.score(r, rows_ptr.data(), count, scores.data());
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

}  // namespace cpu
}  // namespace aop::lightning_indexer
