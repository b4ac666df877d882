// The CPU backend: validate, compute and check every advancing row, then write the four
// outputs. Each row's values are computed once (one block-table read per row) into a
// per-thread buffer that is reused across calls, so a call allocates nothing once the buffer
// has grown to the batch size; the writes then run as four plain loops with the dtype hoisted.
// Decode batches run inline on the calling thread: the whole step costs less than waking a
// worker. Only very large batches use common's worker pool for the writes.
#include <vector>

#include "ascend_ops/parallel.hpp"
#include "ascend_ops/tensor.hpp"
#include "host/adv_step_flash.h"
#include "host/step.h"

namespace aop::adv_step_flash {
namespace {

// Below this many rows per thread, waking workers costs more than the rows.
constexpr int64_t kRowsPerThread = 1 << 16;

// out[i] = value(i) for i in [begin, end), in the output's dtype.
template <class F>
void fill(const aop_tensor& out, int64_t begin, int64_t end, F value) {
  if (out.dtype == AOP_DTYPE_INT64) {
    int64_t* p = static_cast<int64_t*>(out.data);
    for (int64_t i = begin; i < end; ++i) p[i] = value(i);
  } else {
    int32_t* p = static_cast<int32_t*>(out.data);
    for (int64_t i = begin; i < end; ++i) p[i] = static_cast<int32_t>(value(i));
  }
}

void write_rows(const Args& a, const detail::Row* rows, int64_t begin, int64_t end) {
  const int64_t q_end = end < a.num_queries ? end : a.num_queries;
  if (begin < q_end) {  // advancing rows: values checked and computed already
    fill(a.input_tokens, begin, q_end, [rows](int64_t i) { return rows[i].token; });
    fill(a.input_positions, begin, q_end, [rows](int64_t i) { return rows[i].position; });
    fill(a.seq_lens, begin, q_end, [rows](int64_t i) { return rows[i].position + 1; });
    fill(a.slot_mapping, begin, q_end, [rows](int64_t i) { return rows[i].slot; });
  }
  const int64_t p_begin = begin > a.num_queries ? begin : a.num_queries;
  if (p_begin < end) {  // padding rows of a captured graph: seq_lens is left as it is
    fill(a.input_tokens, p_begin, end, [](int64_t) { return int64_t{0}; });
    fill(a.input_positions, p_begin, end, [](int64_t) { return int64_t{0}; });
    fill(a.slot_mapping, p_begin, end, [](int64_t) { return int64_t{-1}; });
  }
}

}  // namespace

void run_cpu(const Args& a) {
  validate(a);
  if (a.input_tokens.device.type != AOP_DEVICE_CPU) {
    throw aop::Error(AOP_VALUE_ERROR, std::string(detail::kOp) +
                                          ": the cpu backend needs tensors on cpu, input_tokens is on " +
                                          device_string(a.input_tokens.device));
  }
  // Every row is computed and checked before the first write (compute_row throws).
  thread_local std::vector<detail::Row> rows;
  if (rows.size() < static_cast<size_t>(a.num_queries)) rows.resize(static_cast<size_t>(a.num_queries));
  for (int64_t i = 0; i < a.num_queries; ++i) rows[static_cast<size_t>(i)] = detail::compute_row(a, i);
  const detail::Row* computed = rows.data();
  if (a.num_seqs <= kRowsPerThread) {
    write_rows(a, computed, 0, a.num_seqs);
    return;
  }
  parallel_for(a.num_seqs, kRowsPerThread,
               [&](int64_t begin, int64_t end) { write_rows(a, computed, begin, end); });
}

}  // namespace aop::adv_step_flash
