// The CPU backend: a fused, blocked kernel that never materialises the [S1, N1, S2] product.
//
// The work split, key gathering, top-k and merge are the indexers' shared driver
// (host/indexer_cpu.h); this file's Scorer scores a tile with a register-blocked micro-kernel
// (float32 accumulation, ReLU and the head-weighted sum fused): bfloat16 keys on a CPU with
// AVX512_BF16 are read where they lie by the key-major kernel (host/score_keys.cpp); otherwise
// the tile is converted to float32 and transposed once for score_row (host/score_row.cpp).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "ascend_ops/cache.hpp"
#include "ascend_ops/error.hpp"
#include "ascend_ops/parallel.hpp"
#include "ascend_ops/tensor.hpp"
#include "host/convert.h"
#include "host/cpu_kernel.h"
#include "host/indexer_cpu.h"
#include "host/lightning_indexer.h"
#include "host/score_keys.h"
#include "host/top_k.h"

namespace aop::lightning_indexer {
namespace {

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

// ---- the float Scorer of the shared driver ---------------------------------------------
class FloatScorer {
 public:
  FloatScorer(const Args& a, const Dims& d, int64_t KT, ScoreRowFn score_row, ScoreKeysFn score_keys)
      : a_(a), G_(d.heads_q / d.heads_k), D_(d.head_dim), N1_(d.heads_q), KT_(KT), score_row_(score_row),
        score_keys_(score_keys), Gp_((G_ + kHeadLanes - 1) / kHeadLanes * kHeadLanes) {
    if (!score_keys_) kt_.resize(static_cast<size_t>(D_ * KT_));
  }

  // Query rows [rows][G][D] and weights [rows][G] of key head g, in float32 (score_keys: query
  // pairs [rows][D / 2][Gp] and weights [rows][Gp], pad heads zero).
  void begin_item(int64_t first_row, int64_t rows, int64_t head) {
    const aop_dtype dtype = a_.query.dtype;
    const int64_t elem = static_cast<int64_t>(aop_dtype_size(dtype));
    const char* q_base = static_cast<const char*>(a_.query.data);
    const char* w_base = static_cast<const char*>(a_.weights.data);
    const int64_t G = G_, D = D_;
    const int64_t wstride = score_keys_ ? Gp_ : G;
    qf_.resize(score_keys_ ? 0 : static_cast<size_t>(rows * G * D));
    qp_.resize(score_keys_ ? static_cast<size_t>(rows * (D / 2) * Gp_) : 0);
    wf_.assign(static_cast<size_t>(rows * wstride), 0.0f);
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t row = first_row + r;
      const char* q_row = q_base + ((row * N1_ + head * G) * D) * elem;
      if (score_keys_) {
        pack_query_pairs(reinterpret_cast<const uint16_t*>(q_row), G, D, Gp_, qp_.data() + r * (D / 2) * Gp_);
      } else {
        to_float(dtype, q_row, G * D, qf_.data() + r * G * D, 1);
      }
      to_float(a_.weights.dtype, w_base + (row * N1_ + head * G) * aop_dtype_size(a_.weights.dtype), G,
               wf_.data() + r * wstride, 1);
    }
  }

  void begin_tile(const char* const* keys, int64_t n, const char* const* next, int64_t next_n) {
    next_ = next;
    to_prefetch_ = next_n;  // score_keys prefetches them while it scores the first row
    if (score_keys_) return;
    const int64_t bytes = D_ * static_cast<int64_t>(aop_dtype_size(a_.key.dtype));
    for (int64_t j = 0; j < next_n; ++j) {
      for (int64_t off = 0; off < bytes; off += 64) __builtin_prefetch(next[j] + off, 0, 3);
    }
    // score_row's path: convert to float32 transposed to [D][KT], d-major so the stores are
    // contiguous; pad columns are zero.
    transpose_to_float(a_.key.dtype, keys, n, D_, kt_.data(), KT_);
  }

  void score(int64_t r, const char* const* keys, int64_t count, float* scores) {
    if (score_keys_) {
      score_keys_(qp_.data() + r * (D_ / 2) * Gp_, wf_.data() + r * Gp_, Gp_, D_, keys, count, scores, next_,
                  to_prefetch_);
      to_prefetch_ = 0;
    } else {
      score_row_(qf_.data() + r * G_ * D_, wf_.data() + r * G_, G_, D_, kt_.data(), KT_, scores);
    }
  }

 private:
  const Args& a_;
  const int64_t G_, D_, N1_, KT_;
  const ScoreRowFn score_row_;
  const ScoreKeysFn score_keys_;
  const int64_t Gp_;
  std::vector<float> qf_, wf_, kt_;
  std::vector<uint32_t> qp_;
  const char* const* next_ = nullptr;
  int64_t to_prefetch_ = 0;
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
  const ScoreRowFn score_row = select_score_row();
  // bfloat16 with an even D on a CPU with AVX512_BF16: keys are scored where they lie (no
  // conversion, no transpose); otherwise tiles are converted and transposed for score_row.
  const ScoreKeysFn score_keys =
      a.query.dtype == AOP_DTYPE_BFLOAT16 && d.head_dim % 2 == 0 ? select_score_keys_bf16() : nullptr;
  cpu::run_indexer(a, d, plan, [&] { return FloatScorer(a, d, plan.key_tile, score_row, score_keys); });
}

}  // namespace aop::lightning_indexer
