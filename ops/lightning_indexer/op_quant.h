// lightning_indexer_quant, described once: its arguments and outputs (ascend_ops/op_params.hpp),
// from which common derives the front doors, and its launch (ascend_ops/kernel_launch.hpp), mapped
// to this op's host interface (host/liq.h) and kernel (lightning_indexer's
// kernel/lightning_indexer_quant_kernel.cpp, kernel/liq_launch.h).
#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "ascend_ops/kernel_launch.hpp"
#include "ascend_ops/op_params.hpp"
#include "ascend_ops/platform.h"
#include "host/liq.h"
#include "indexer_op.h"
#include "kernel/liq_launch.h"

namespace aop::lightning_indexer_quant {

struct Op : lightning_indexer::IndexerOp<Op, Args> {
  using Tiling = LiqTiling;
  static constexpr const char* kName = "lightning_indexer_quant";
  static constexpr const char* kPackage = "ascend-op-lightning-indexer";
  static constexpr const char* kDoc = R"doc(Indices of the top ``sparse_count`` visible keys of every query row, from int8 queries and keys.

``score[r, j] = sum_h weights[r, h] * ReLU(qs[r, h] * ks[j, g] * dot(query[r, h, :], key[j, g, :]))``
with the int8 dot exact in int32, over the query heads h of key head g (N1 / N2 of them):
lightning_indexer on the dequantised tensors qs * query and ks * key.

Parameters
----------
query : [B, S1, N1, D] (layout_query "BSND") or [T1, N1, D] ("TND"); int8. Contiguous.
key : [num_blocks, block_size, N2, D] ("PA_BSND"), [B, S2, N2, D] ("BSND") or
    [T2, N2, D] ("TND"); int8. Contiguous. N2 divides N1.
weights : [B, S1, N1] or [T1, N1]; float16, bfloat16 or float32.
query_dequant_scale : the shape of weights (one per query token and head); float16 or float32.
    Finite and >= 0 on every row of a batch.
key_dequant_scale : the shape of key without D (one per key token and key head; PA_BSND also
    [num_blocks, block_size, N2, 1], indexer_k_quant_and_cache's scale cache); float16 or
    float32. Finite and >= 0 for every visible key.
actual_seq_lengths_query, actual_seq_lengths_key, block_table : as lightning_indexer.
query_quant_mode, key_quant_mode : 0 (per token and head, symmetric), the only mode.
layout_query, layout_key : see above.
sparse_count : 1 <= K <= 8192 (2048 on NPU).
sparse_mode : 0 (every key j < act_s2 visible) or 3 (causal, aligned to the end:
    j <= act_s2 - act_s1 + p for query row p).
return_value : also return the scores.

Returns
-------
(sparse_indices, sparse_values)
    int32 [B, S1, N2, K] or [T1, N2, K]: the visible keys by descending score, ties to the
    smaller index, -1 where fewer than K keys are visible. sparse_values: float32 scores of the
    same shape, -inf at -1, or None unless return_value.

The emu backend (and the NPU) take float16 weights and scales, N2 = 1, D = 128, N1 <= 64,
block_size a multiple of 16 <= 1024, sparse_count <= 2048 and |weights * qs| within float16.

Raises
------
TypeError, ValueError, IndexError naming the argument, the expected and the actual value.
)doc";

  static const std::array<desc::Param<Args>, 15>& params() {
    using desc::Access;
    using desc::Kind;
    constexpr Access in = Access::kRead;
    static const std::array<desc::Param<Args>, 15> p{{
        {"query", Kind::kTensor, in, false, false, nullptr, &desc::set_field<&Args::query>},
        {"key", Kind::kTensor, in, false, false, nullptr, &desc::set_field<&Args::key>},
        {"weights", Kind::kTensor, in, false, false, nullptr, &desc::set_field<&Args::weights>},
        {"query_dequant_scale", Kind::kTensor, in, false, false, nullptr,
         &desc::set_field<&Args::query_dequant_scale>},
        {"key_dequant_scale", Kind::kTensor, in, false, false, nullptr, &desc::set_field<&Args::key_dequant_scale>},
        {"actual_seq_lengths_query", Kind::kTensor, in, true, true, "None",
         &desc::set_field<&Args::actual_seq_lengths_query>},
        {"actual_seq_lengths_key", Kind::kTensor, in, true, true, "None",
         &desc::set_field<&Args::actual_seq_lengths_key>},
        {"block_table", Kind::kTensor, in, true, true, "None", &desc::set_field<&Args::block_table>},
        {"query_quant_mode", Kind::kInt, in, false, true, "0", &desc::set_field<&Args::query_quant_mode>},
        {"key_quant_mode", Kind::kInt, in, false, true, "0", &desc::set_field<&Args::key_quant_mode>},
        {"layout_query", Kind::kString, in, false, true, "\"BSND\"", &set_layout_query, kLayouts},
        {"layout_key", Kind::kString, in, false, true, "\"PA_BSND\"", &set_layout_key, kLayouts},
        {"sparse_count", Kind::kInt, in, false, true, "2048", &desc::set_field<&Args::sparse_count>},
        {"sparse_mode", Kind::kInt, in, false, true, "3", &desc::set_field<&Args::sparse_mode>},
        {"return_value", Kind::kBool, in, false, true, "False", &desc::ignore<Args>},
    }};
    return p;
  }
  static const std::array<desc::Output<Args>, 2>& outputs() {
    static const std::array<desc::Output<Args>, 2> o{{
        {"sparse_indices", AOP_DTYPE_INT32, nullptr, &desc::set_field<&Args::sparse_indices>},
        {"sparse_values", AOP_DTYPE_FLOAT32, "return_value", &desc::set_field<&Args::sparse_values>},
    }};
    return o;
  }
  static void run_cpu(const Args& a) { lightning_indexer_quant::run_cpu(a); }
  static void run_npu(const Args& a, const NpuContext& ctx) { lightning_indexer_quant::run_npu(a, ctx); }

  static constexpr const char* kKernel = "lightning_indexer_quant_kernel";
  static void check_data(const Prepared& p) { check_data_kernel(p.args, p.dims); }
  // lightning_indexer's check slots, verdict lines, score slots and partial lists, then wq.
  static size_t workspace_bytes(const Tiling& t) { return kernel_workspace_bytes(t); }
  static aop::Error kernel_error(const int64_t record[kLiCheckWords]) {
    return lightning_indexer_quant::kernel_error(record);
  }

  static std::array<launch::GmTensor, 10> gm_tensors(const Prepared& p) {
    using launch::GmRole;
    const Args& a = p.args;
    return {launch::gm(a.query, "query", GmRole::kInput),
            launch::gm(a.key, "key", GmRole::kInput),
            launch::gm(a.weights, "weights", GmRole::kInput),
            launch::gm(a.query_dequant_scale, "query_dequant_scale", GmRole::kInput),
            launch::gm(a.key_dequant_scale, "key_dequant_scale", GmRole::kInput),
            launch::gm(a.actual_seq_lengths_query, "actual_seq_lengths_query", GmRole::kInput),
            launch::gm(a.actual_seq_lengths_key, "actual_seq_lengths_key", GmRole::kInput),
            launch::gm(a.block_table, "block_table", GmRole::kInput),
            launch::gm(a.sparse_indices, "sparse_indices", GmRole::kOutput),
            launch::gm(a.sparse_values, "sparse_values", GmRole::kOutput)};
  }
  // The tiling as `_core.kernel_tiling` shows it, with the UB bytes the kernel allocates.
  static Fields tiling_fields(const Tiling& t) {
    return with_work_split({{"tile_keys", t.tile_keys},
                            {"block_keys", t.block_keys},
                            {"block_pad", t.block_pad},
                            {"key_block_stride", t.key_block_stride},
                            {"n1_pad", t.n1_pad},
                            {"k_pad", t.k_pad},
                            {"wq_offset", t.wq_offset},
                            {"wq_group_rows", t.wq_group_rows},
                            {"wq_chunk_rows", t.wq_chunk_rows},
                            {"ub_bytes", kernel_ub_bytes(t)}},
                           t);
  }
  static auto npu_launch() { return &lightning_indexer_quant_launch; }
#ifdef AOP_WITH_EMU
  static auto emu_kernel() { return &lightning_indexer_quant_kernel; }
#endif
};

}  // namespace aop::lightning_indexer_quant
