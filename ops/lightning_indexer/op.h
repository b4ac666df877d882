// lightning_indexer, described once: its arguments and outputs (ascend_ops/op_params.hpp), from
// which common derives the front doors, and its launch (ascend_ops/kernel_launch.hpp), mapped to
// this op's host interface (host/lightning_indexer.h) and kernel (kernel/lightning_indexer_launch.h).
#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "ascend_ops/kernel_launch.hpp"
#include "ascend_ops/op_params.hpp"
#include "host/lightning_indexer.h"
#include "indexer_op.h"
#include "kernel/lightning_indexer_launch.h"

namespace aop::lightning_indexer {

struct Op : IndexerOp<Op, Args> {
  using Tiling = LightningIndexerTiling;
  static constexpr const char* kName = "lightning_indexer";
  static constexpr const char* kPackage = "ascend-op-lightning-indexer";
  // The docstring of every front door (the generated Python functions add their own notes).
  static constexpr const char* kDoc = R"doc(Indices of the top ``sparse_count`` visible keys of every query row.

``score[r, j] = sum_h weights[r, h] * ReLU(dot(query[r, h, :], key[j, g, :]))`` with float32
accumulation, over the query heads h of key head g (N1 / N2 of them; N2 = 1 on NPU).

Parameters
----------
query : [B, S1, N1, D] (layout_query "BSND") or [T1, N1, D] ("TND"); float16, bfloat16
    (float32 on CPU). Contiguous.
key : [num_blocks, block_size, N2, D] ("PA_BSND"), [B, S2, N2, D] ("BSND") or
    [T2, N2, D] ("TND"); the dtype of query. Contiguous, except that a PA_BSND key's blocks
    may lie any stride(0) >= block_size * N2 * D apart, each block packed (the K half of a
    [num_blocks, 2, block_size, N2, D] cache, a view of a larger pool). N2 divides N1.
weights : [B, S1, N1] or [T1, N1], or either with a trailing 1 ([B, S1, N1, 1] /
    [T1, N1, 1], as vllm-ascend and ms_custom_ops pass them); the dtype of query or float32.
actual_seq_lengths_query : [B] int32 / int64. BSND: each batch's act_s1 (default S1).
    TND (required): cumulative ends of the batches' rows.
actual_seq_lengths_key : [B] int32 / int64. PA_BSND (required) and BSND (default S2): each
    batch's act_s2. TND (required): cumulative ends.
block_table : [B, max_blocks] int32 / int64, PA_BSND only: logical key j of batch b is
    key[block_table[b][j // block_size], j % block_size].
cmp_residual_k : [B] int32 / int64, only with cmp_ratio > 1 (required under sparse_mode 3):
    each batch's original (uncompressed) key length mod cmp_ratio, in [0, cmp_ratio).
layout_query, layout_key : see above.
sparse_count : 1 <= K <= 8192.
sparse_mode : 0 (every key j < act_s2 visible) or 3 (causal, aligned to the end:
    j <= act_s2 - act_s1 + p for query row p; with cmp_ratio r > 1,
    j < floor((act_s2 * r + cmp_residual_k[b] - act_s1 + p + 1) / r)).
cmp_ratio : 1 <= r <= 128 (default 1): keys are compressed rows of r tokens each (DeepSeek-V4's
    compressed indexer keys); act_s2 and the returned indices count compressed rows.
    sparse_mode 0 ignores it.
return_value : also return the scores.

Returns
-------
(sparse_indices, sparse_values)
    int32 [B, S1, N2, K] or [T1, N2, K]: the visible keys by descending score, ties to the
    smaller index, -1 where fewer than K keys are visible (and on rows beyond act_s1 / with
    no visible key). sparse_values: float32 scores of the same shape, -inf at -1, or None
    unless return_value.

The emu backend (and the NPU) take float16 / bfloat16, N2 = 1, D = 128, N1 <= 64 and
block_size a multiple of 16 <= 1024.

Raises
------
TypeError, ValueError, IndexError naming the argument, the expected and the actual value.
)doc";

  static const std::array<desc::Param<Args>, 13>& params() {
    using desc::Access;
    using desc::Kind;
    constexpr Access in = Access::kRead;
    static const std::array<desc::Param<Args>, 13> p{{
        {"query", Kind::kTensor, in, false, false, nullptr, &desc::set_field<&Args::query>},
        {"key", Kind::kTensor, in, false, false, nullptr, &desc::set_field<&Args::key>},
        {"weights", Kind::kTensor, in, false, false, nullptr, &desc::set_field<&Args::weights>},
        {"actual_seq_lengths_query", Kind::kTensor, in, true, true, "None",
         &desc::set_field<&Args::actual_seq_lengths_query>},
        {"actual_seq_lengths_key", Kind::kTensor, in, true, true, "None",
         &desc::set_field<&Args::actual_seq_lengths_key>},
        {"block_table", Kind::kTensor, in, true, true, "None", &desc::set_field<&Args::block_table>},
        {"cmp_residual_k", Kind::kTensor, in, true, true, "None", &desc::set_field<&Args::cmp_residual_k>},
        {"layout_query", Kind::kString, in, false, true, "\"BSND\"", &set_layout_query, kLayouts},
        {"layout_key", Kind::kString, in, false, true, "\"PA_BSND\"", &set_layout_key, kLayouts},
        {"sparse_count", Kind::kInt, in, false, true, "2048", &desc::set_field<&Args::sparse_count>},
        {"sparse_mode", Kind::kInt, in, false, true, "3", &desc::set_field<&Args::sparse_mode>},
        {"cmp_ratio", Kind::kInt, in, false, true, "1", &desc::set_field<&Args::cmp_ratio>},
        {"return_value", Kind::kBool, in, false, true, "False", &desc::ignore<Args>},
    }};
    return p;
  }
  // [B, S1, N2, K] (BSND query) or [T1, N2, K] (TND): top-k key positions and their scores.
  static const std::array<desc::Output<Args>, 2>& outputs() {
    static const std::array<desc::Output<Args>, 2> o{{
        {"sparse_indices", AOP_DTYPE_INT32, nullptr, &desc::set_field<&Args::sparse_indices>, "out_indices"},
        {"sparse_values", AOP_DTYPE_FLOAT32, "return_value", &desc::set_field<&Args::sparse_values>, "out_values"},
    }};
    return o;
  }
  static void run_cpu(const Args& a) { lightning_indexer::run_cpu(a); }
  static void run_npu(const Args& a, const NpuContext& ctx) { lightning_indexer::run_npu(a, ctx); }

  static constexpr const char* kKernel = "lightning_indexer_kernel";
  static void check_data(const Prepared& p) { lightning_indexer::check_data(p.args, p.dims); }
  // The check slots and verdict lines, then the score slots and partial lists.
  static size_t workspace_bytes(const Tiling& t) { return kernel_workspace_bytes(t); }
  static aop::Error kernel_error(const int64_t record[kLiCheckWords]) { return lightning_indexer::kernel_error(record); }

  static std::array<launch::GmTensor, 9> gm_tensors(const Prepared& p) {
    using launch::GmRole;
    const Args& a = p.args;
    return {launch::gm(a.query, "query", GmRole::kInput),
            launch::gm(a.key, "key", GmRole::kInput),
            launch::gm(a.weights, "weights", GmRole::kInput),
            launch::gm(a.actual_seq_lengths_query, "actual_seq_lengths_query", GmRole::kInput),
            launch::gm(a.actual_seq_lengths_key, "actual_seq_lengths_key", GmRole::kInput),
            launch::gm(a.block_table, "block_table", GmRole::kInput),
            launch::gm(a.cmp_residual_k, "cmp_residual_k", GmRole::kInput),
            launch::gm(a.sparse_indices, "sparse_indices", GmRole::kOutput),
            launch::gm(a.sparse_values, "sparse_values", GmRole::kOutput)};
  }
  // The tiling as `_core.kernel_tiling` shows it, with the UB bytes the kernel allocates.
  static Fields tiling_fields(const Tiling& t) {
    return with_work_split({{"rows_per_group", t.rows_per_group},
                            {"m_pad", t.m_pad},
                            {"tile_keys", t.tile_keys},
                            {"rows_per_aiv", t.rows_per_aiv},
                            {"block_keys", t.block_keys},
                            {"key_block_stride", t.key_block_stride},
                            {"block_pad", t.block_pad},
                            {"fix_keys", t.fix_keys},
                            {"c_buffers", t.c_buffers},
                            {"head_chunk", t.head_chunk},
                            {"k_pad", t.k_pad},
                            {"groups_per_batch", t.groups_per_batch},
                            {"ub_bytes", kernel_ub_bytes(t)}},
                           t);
  }
  static auto npu_launch() { return &lightning_indexer_launch; }
#ifdef AOP_WITH_EMU
  static auto emu_kernel() { return &lightning_indexer_kernel; }
#endif
};

}  // namespace aop::lightning_indexer
