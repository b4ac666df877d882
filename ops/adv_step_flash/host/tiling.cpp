// Launch tiling of the AscendC kernel: sequences split evenly over the vector cores, staged
// through UB in chunks two input and two output buffers allow.
#include <algorithm>

#include "ascend_ops/cache.hpp"
#include "ascend_ops/hash.hpp"
#include "ascend_ops/kernel_launch.hpp"
#include "ascend_ops/tensor.hpp"
#include "host/adv_step_flash.h"

namespace aop::adv_step_flash {
namespace {

constexpr int64_t kChunkAlign = 8;      // 8 int32 = 32 bytes: sections stay 32-byte aligned
constexpr int64_t kMaxChunk = 1024;     // a core never needs more per step

int32_t bytes(const aop_tensor& t) { return static_cast<int32_t>(aop_dtype_size(t.dtype)); }

AdvStepFlashTiling compute(const Args& a, const aop_platform& platform) {
  const TensorView tables(a.block_tables);
  AdvStepFlashTiling t{};
  t.num_seqs = a.num_seqs;
  t.num_queries = a.num_queries;
  t.block_size = a.block_size;
  t.max_blocks = tables.dim(1);
  t.table_row_stride = tables.dim(0) > 1 ? tables.stride(0) : tables.dim(1);
  t.token_bytes = bytes(a.input_tokens);
  t.sampled_bytes = bytes(a.sampled_token_ids);
  t.position_bytes = bytes(a.input_positions);
  t.seq_len_bytes = bytes(a.seq_lens);
  t.slot_bytes = bytes(a.slot_mapping);
  t.table_bytes = bytes(a.block_tables);

  t.block_dim = static_cast<int32_t>(launch::cores_for_units(a.num_seqs, platform.aiv_cores));
  t.seqs_per_core = static_cast<int32_t>(a.num_seqs / t.block_dim);
  t.cores_with_extra = static_cast<int32_t>(a.num_seqs % t.block_dim);

  const int64_t per_seq = int64_t{kAsfBufferNum} * (kAsfInSections + kAsfOutSections) * kAsfSectionElemBytes;
  const int64_t check_ub = t.block_dim * kAsfCheckWords * 8;  // the kernel's check slots
  const int64_t ub_chunk =
      std::max<int64_t>(kChunkAlign, (platform.ub_bytes - check_ub) / per_seq / kChunkAlign * kChunkAlign);
  const int64_t need = (t.seqs_per_core + (t.cores_with_extra > 0 ? 1 : 0) + kChunkAlign - 1) / kChunkAlign * kChunkAlign;
  t.chunk_seqs = static_cast<int32_t>(std::min({std::max(need, kChunkAlign), ub_chunk, kMaxChunk}));
  return t;
}

}  // namespace

AdvStepFlashTiling tiling(const Args& a, const aop_platform& platform) {
  KeyBuilder key("adv_step_flash");
  key.add_int(a.num_seqs)
      .add_int(a.num_queries)
      .add_int(a.block_size)
      .add_tensor(TensorView(a.input_tokens))
      .add_tensor(TensorView(a.sampled_token_ids))
      .add_tensor(TensorView(a.input_positions))
      .add_tensor(TensorView(a.seq_lens))
      .add_tensor(TensorView(a.slot_mapping))
      .add_tensor(TensorView(a.block_tables))
      .add_platform(platform);
  return tiling_cache().get_or_compute_pod<AdvStepFlashTiling>(key, [&] { return compute(a, platform); });
}

}  // namespace aop::adv_step_flash
