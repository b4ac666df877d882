// Every layout reduced to per-batch row and key ranges, and the contract's window rules: which
// entries of a row's indices are read and which positions they reach.
#pragma once
#include <cstdint>
#include <vector>

#include "host/sparse_flash_attention.h"

namespace aop::sparse_flash_attention {

struct Batch {
  int64_t q_begin;   // the batch's first row among the flat query rows (B * S1 or T1 of them)
  int64_t q_len;     // act_q
  int64_t kv_begin;  // TND: the batch's first key row; else 0
  int64_t kv_len;    // act_kv
};

// The batches of validated args whose lengths check_data accepted.
std::vector<Batch> batches(const Args& args, const Dims& dims);

using seq::read_index;

// Positions below the threshold are visible to row r of a batch: act_kv (sparse_mode 0), or
// act_kv - act_q + r + 1 (sparse_mode 3, causal aligned to the end; may be <= 0).
inline int64_t visible_threshold(int64_t sparse_mode, const Batch& b, int64_t r) {
  return sparse_mode == 0 ? b.kv_len : b.kv_len - b.q_len + r + 1;
}

// n: the entries of a row's indices that are ever read, min(K, ceil(thr / sbs)), 0 for thr <= 0.
inline int64_t entries_read(int64_t threshold, int64_t topk, int64_t sparse_block_size) {
  if (threshold <= 0) return 0;
  const int64_t blocks = (threshold + sparse_block_size - 1) / sparse_block_size;
  return blocks < topk ? blocks : topk;
}

}  // namespace aop::sparse_flash_attention
