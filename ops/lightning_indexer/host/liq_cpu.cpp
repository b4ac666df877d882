// The CPU backend: lightning_indexer's driver (host/indexer_cpu.h: work split, key gathering,
// visibility, running top-k, merge) with an int8 Scorer: exact int32 dots (host/liq_dots.cpp),
// then in float32 ks(j) * sum_h (weights * qs)[h] * ReLU(dot[h, j]) (the spec's score, the
// scales being >= 0).
#include <algorithm>
#include <vector>

#include "ascend_ops/error.hpp"
#include "ascend_ops/tensor.hpp"
#include "host/convert.h"
#include "host/indexer_cpu.h"
#include "host/liq.h"
#include "host/liq_dots.h"

namespace aop::lightning_indexer_quant {
namespace {

using lightning_indexer::to_float;

class QuantScorer {
 public:
  QuantScorer(const Args& a, const Dims& d, int64_t KT)
      : a_(a), kernel_(dot_kernel()), G_(d.heads_q / d.heads_k), N1_(d.heads_q), N2_(d.heads_k), D_(d.head_dim),
        Gp_((G_ + kHeadLanes - 1) / kHeadLanes * kHeadLanes), words_(packed_words(Gp_, D_)),
        block_size_(d.block_size), block_stride_(a.layout_key == Layout::kPA_BSND ? d.key_block_stride : 0),
        ks_(static_cast<size_t>(KT)) {}

  // Each row's query packed for the dot kernel, its bias and wq = weights * qs in float32
  // (pad heads 0).
  void begin_item(int64_t first_row, int64_t rows, int64_t head) {
    head_ = head;
    packed_.resize(static_cast<size_t>(rows * words_));
    bias_.resize(static_cast<size_t>(rows * Gp_));
    wq_.assign(static_cast<size_t>(rows * Gp_), 0.0f);
    std::vector<float> w(static_cast<size_t>(G_)), qs(static_cast<size_t>(G_));
    const int8_t* q = static_cast<const int8_t*>(a_.query.data);
    const size_t w_elem = aop_dtype_size(a_.weights.dtype), s_elem = aop_dtype_size(a_.query_dequant_scale.dtype);
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t at = (first_row + r) * N1_ + head * G_;  // first head of the group, flat
      kernel_.pack(q + at * D_, G_, D_, Gp_, packed_.data() + r * words_, bias_.data() + r * Gp_);
      to_float(a_.weights.dtype, static_cast<const char*>(a_.weights.data) + at * w_elem, G_, w.data(), 1);
      to_float(a_.query_dequant_scale.dtype, static_cast<const char*>(a_.query_dequant_scale.data) + at * s_elem, G_,
               qs.data(), 1);
      for (int64_t h = 0; h < G_; ++h) wq_[r * Gp_ + h] = w[h] * qs[h];
    }
  }

  // The tile's key scales (key row of keys[j] -> key_dequant_scale[row, head]); the next
  // tile's rows are prefetched.
  void begin_tile(const char* const* keys, int64_t n, const char* const* next, int64_t next_n) {
    const char* base = static_cast<const char*>(a_.key.data) + head_ * D_;
    const char* scales = static_cast<const char*>(a_.key_dequant_scale.data);
    const aop_dtype sdt = a_.key_dequant_scale.dtype;
    const int64_t s_elem = static_cast<int64_t>(aop_dtype_size(sdt));
    const int64_t stride = N2_ * D_;
    int64_t row = -1;
    for (int64_t j = 0; j < n; ++j) {
      // the next row of the same block or BSND / TND slab, else a division (a new block, which
      // a strided PA key places key_block_stride elements from the last; the scales are packed)
      if (j > 0 && keys[j] == keys[j - 1] + stride) {
        ++row;
      } else if (block_stride_ > 0) {
        const int64_t at = keys[j] - base;
        row = at / block_stride_ * block_size_ + at % block_stride_ / stride;
      } else {
        row = (keys[j] - base) / stride;
      }
      to_float(sdt, scales + (row * N2_ + head_) * s_elem, 1, ks_.data() + j, 1);
    }
    for (int64_t j = 0; j < next_n; ++j) {
      for (int64_t off = 0; off < D_; off += 64) __builtin_prefetch(next[j] + off, 0, 3);
    }
  }

  void score(int64_t r, const char* const* keys, int64_t count, float* scores) {
    kernel_.score(packed_.data() + r * words_, bias_.data() + r * Gp_, wq_.data() + r * Gp_, G_, Gp_, D_,
                  reinterpret_cast<const int8_t* const*>(keys), ks_.data(), count, scores);
  }

 private:
  const Args& a_;
  const DotKernel& kernel_;
  const int64_t G_, N1_, N2_, D_, Gp_, words_;
  const int64_t block_size_, block_stride_;  // PA_BSND: rows per block, elements between blocks
  int64_t head_ = 0;
  std::vector<int32_t> packed_, bias_;
  std::vector<float> wq_, ks_;
};

}  // namespace

const char* cpu_isa() { return dot_kernel().isa; }

void run_cpu(const Args& a) {
  const Dims d = validate(a);
  if (a.query.device.type != AOP_DEVICE_CPU) {
    throw aop::Error(AOP_VALUE_ERROR, std::string(kOp) + ": the cpu backend needs tensors on cpu, query is on " +
                                          device_string(a.query.device));
  }
  check_data(a, d);
  const lightning_indexer::Args g = geometry(a);
  const lightning_indexer::CpuPlan plan = cpu_plan(a, d);
  lightning_indexer::cpu::run_indexer(g, d, plan, [&] { return QuantScorer(a, d, plan.key_tile); });
}

lightning_indexer::CpuPlan cpu_plan(const Args& a, const Dims& d) { return lightning_indexer::cpu_plan(geometry(a), d); }

}  // namespace aop::lightning_indexer_quant
