// sparse_flash_attention, described once: its arguments and outputs (ascend_ops/op_params.hpp),
// from which common derives the front doors, and its launch (ascend_ops/kernel_launch.hpp),
// mapped to this op's host interface (host/sparse_flash_attention.h) and kernel
// (kernel/sparse_flash_attention_launch.h).
#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "ascend_ops/kernel_launch.hpp"
#include "ascend_ops/op_params.hpp"
#include "ascend_ops/tensor.hpp"
#include "host/sparse_flash_attention.h"
#include "kernel/sparse_flash_attention_launch.h"

namespace aop::sparse_flash_attention {

struct Op {
  using Args = sparse_flash_attention::Args;
  struct Prepared {
    Args args;
    Dims dims;
  };
  using Tiling = SparseFlashAttentionTiling;
  static constexpr const char* kName = "sparse_flash_attention";
  static constexpr const char* kPackage = "ascend-op-sparse-flash-attention";
  static constexpr const char* kDoc = R"doc(MLA-absorbed attention of every query row over the key positions its indices select.

For a row r of batch b with the positions P it selects (the first n entries of its indices, up
to the first -1, each entry x a block [x * sbs, x * sbs + sbs) cut to the row's window, entries
beyond the window skipped)::

    s_j = scale_value * (query[r, h] . Kn(P[j]) + query_rope[r, h] . Kr(P[j]))
    attention_out[r, h] = sum_j softmax(s)_j * V(P[j])

with float32 logits, softmax and accumulation; probabilities rounded to the input dtype before
the product with V; the output rounded once.

Parameters
----------
query : [B, S1, N1, D] (layout_query "BSND") or [T1, N1, D] ("TND"); float16, bfloat16
    (float32 on CPU). Contiguous.
key, value : [num_blocks, block_size, 1, D] ("PA_BSND"), [B, S2, 1, D] ("BSND") or
    [T2, 1, D] ("TND"); the dtype of query. value is normally key itself (read once then).
    PA_BSND caches may be views with a larger block stride (the last three dims contiguous).
sparse_indices : int32 [B, S1, 1, K] or [T1, 1, K]: logical positions (sparse_block_size 1)
    or logical blocks of sparse_block_size positions, -1 ending a row.
scale_value : float, applied as float32.
block_table : [B, max_blocks] int32, PA_BSND only.
actual_seq_lengths_query : [B]. BSND: act_q per batch (default S1). TND (required):
    cumulative ends of the batches' rows.
actual_seq_lengths_kv : [B]. PA_BSND (required) and BSND (default S2): act_kv per batch.
    TND (required): cumulative ends.
query_rope, key_rope : the rope columns (Dr) of query and key, laid out as they are; required.
sparse_block_size : positions per index entry (sbs >= 1).
layout_query, layout_kv : see above; layout_kv BSND / TND need the same layout_query.
sparse_mode : 0 (window act_kv) or 3 (causal, aligned to the end: act_kv - act_q + r + 1).
pre_tokens, next_tokens : only the default 2**63 - 1.
attention_mode : only 2 (MLA-absorbed).
return_softmax_lse : also return softmax_max and softmax_sum (lse = max + ln(sum)).

Returns
-------
(attention_out, softmax_max, softmax_sum)
    attention_out: the shape and dtype of query; zero for rows with no selected position and
    rows outside every batch. softmax_max / softmax_sum: float32 [B, 1, S1, N1] or
    [1, T1, N1] (0 for such rows), or None unless return_softmax_lse.

The emu backend (and the NPU) take float16 / bfloat16, D = 512, Dr = 64, N1 a power of two
<= 128, block_size a multiple of 16 <= 1024, sparse_block_size a power of two <= 128
dividing block_size, int32 lengths and block table.

Raises
------
TypeError, ValueError, IndexError naming the argument, the expected and the actual value.
)doc";

  enum Input { kQuery = 0, kKey = 1 };  // params() indices the output shapes are read from
  // Layout's order (a MindSpore graph passes the index); the host refuses PA_BSND for the query.
  static constexpr const char* kLayouts[] = {"BSND", "TND", "PA_BSND", nullptr};
  static const std::array<desc::Param<Args>, 18>& params() {
    using desc::Access;
    using desc::Kind;
    using desc::set_field;
    constexpr Access in = Access::kRead;
    static const std::array<desc::Param<Args>, 18> p{{
        {"query", Kind::kTensor, in, false, false, nullptr, &set_field<&Args::query>},
        {"key", Kind::kTensor, in, false, false, nullptr, &set_field<&Args::key>},
        {"value", Kind::kTensor, in, false, false, nullptr, &set_field<&Args::value>},
        {"sparse_indices", Kind::kTensor, in, false, false, nullptr, &set_field<&Args::sparse_indices>},
        {"scale_value", Kind::kFloat, in, false, false, nullptr, &set_field<&Args::scale_value>},
        {"block_table", Kind::kTensor, in, true, true, "None", &set_field<&Args::block_table>},
        {"actual_seq_lengths_query", Kind::kTensor, in, true, true, "None",
         &set_field<&Args::actual_seq_lengths_query>},
        {"actual_seq_lengths_kv", Kind::kTensor, in, true, true, "None", &set_field<&Args::actual_seq_lengths_kv>},
        {"query_rope", Kind::kTensor, in, true, true, "None", &set_field<&Args::query_rope>},
        {"key_rope", Kind::kTensor, in, true, true, "None", &set_field<&Args::key_rope>},
        {"sparse_block_size", Kind::kInt, in, false, true, "1", &set_field<&Args::sparse_block_size>},
        {"layout_query", Kind::kString, in, false, true, "\"BSND\"", &set_layout_query, kLayouts},
        {"layout_kv", Kind::kString, in, false, true, "\"PA_BSND\"", &set_layout_kv, kLayouts},
        {"sparse_mode", Kind::kInt, in, false, true, "3", &set_field<&Args::sparse_mode>},
        {"pre_tokens", Kind::kInt, in, false, true, "9223372036854775807", &set_field<&Args::pre_tokens>},
        {"next_tokens", Kind::kInt, in, false, true, "9223372036854775807", &set_field<&Args::next_tokens>},
        {"attention_mode", Kind::kInt, in, false, true, "2", &set_field<&Args::attention_mode>},
        {"return_softmax_lse", Kind::kBool, in, false, true, "False", &desc::ignore<Args>},
    }};
    return p;
  }
  static const std::array<desc::Output<Args>, 3>& outputs() {
    static const std::array<desc::Output<Args>, 3> o{{
        {"attention_out", AOP_DTYPE_FLOAT32, nullptr, &desc::set_field<&Args::attention_out>, nullptr, "query"},
        {"softmax_max", AOP_DTYPE_FLOAT32, "return_softmax_lse", &desc::set_field<&Args::softmax_max>},
        {"softmax_sum", AOP_DTYPE_FLOAT32, "return_softmax_lse", &desc::set_field<&Args::softmax_sum>},
    }};
    return o;
  }
  // attention_out: the query's shape; the lse pair: [B, N2, S1, G] (BSND) or [N2, T1, G] (TND).
  static std::vector<desc::Dim> output_dims(const Args& a, size_t output) {
    using desc::Dim;
    const bool tnd = a.layout_query == Layout::kTND;
    if (output == 0) {
      if (tnd) return {Dim::of(kQuery, 0), Dim::of(kQuery, 1), Dim::of(kQuery, 2)};
      return {Dim::of(kQuery, 0), Dim::of(kQuery, 1), Dim::of(kQuery, 2), Dim::of(kQuery, 3)};
    }
    if (tnd) return {Dim::of(kKey, -2), Dim::of(kQuery, 0), Dim::of(kQuery, 1)};
    return {Dim::of(kQuery, 0), Dim::of(kKey, -2), Dim::of(kQuery, 1), Dim::of(kQuery, 2)};
  }
  static void set_layout_query(Args& a, const desc::Value& v) { a.layout_query = parse_layout(v.s, "layout_query", false); }
  static void set_layout_kv(Args& a, const desc::Value& v) { a.layout_kv = parse_layout(v.s, "layout_kv", true); }
  static void check_inputs(const Args& a) { (void)validate(a, false); }
  static void check_attributes(const Args&) {}
  static void run_cpu(const Args& a) { sparse_flash_attention::run_cpu(a); }
  static void run_npu(const Args& a, const NpuContext& ctx) { sparse_flash_attention::run_npu(a, ctx); }

  static constexpr const char* kKernel = "sparse_flash_attention_kernel";
  // block_dim AICs, two AIVs each; as KERNEL_TASK_TYPE_DEFAULT in the kernel
  static constexpr launch::KernelType kKernelType = launch::KernelType::kMixAic1_2;

  static Prepared prepare(const Args& args) {
    const Dims d = validate(args);
    check_npu_limits(args, d);
    return {args, d};
  }
  static void check_data(const Prepared& p) { sparse_flash_attention::check_data(p.args, p.dims); }
  static Tiling tiling(const Prepared& p, const aop_platform& platform) { return kernel_tiling(p.args, p.dims, platform); }
  static bool nothing_to_launch(const Prepared& p, const Tiling&) { return TensorView(p.args.attention_out).numel() == 0; }
  static size_t workspace_bytes(const Tiling& t) { return kernel_workspace_bytes(t); }
  static aop::Error kernel_error(const int64_t record[kSfaCheckWords]) {
    return sparse_flash_attention::kernel_error(record);
  }

  static std::array<launch::GmTensor, 12> gm_tensors(const Prepared& p) {
    using launch::GmRole;
    const Args& a = p.args;
    return {launch::gm(a.query, "query", GmRole::kInput),
            launch::gm(a.key, "key", GmRole::kInput),
            launch::gm(a.value, "value", GmRole::kInput),
            launch::gm(a.sparse_indices, "sparse_indices", GmRole::kInput),
            launch::gm(a.block_table, "block_table", GmRole::kInput),
            launch::gm(a.actual_seq_lengths_query, "actual_seq_lengths_query", GmRole::kInput),
            launch::gm(a.actual_seq_lengths_kv, "actual_seq_lengths_kv", GmRole::kInput),
            launch::gm(a.query_rope, "query_rope", GmRole::kInput),
            launch::gm(a.key_rope, "key_rope", GmRole::kInput),
            launch::gm(a.attention_out, "attention_out", GmRole::kOutput),
            launch::gm(a.softmax_max, "softmax_max", GmRole::kOutput),
            launch::gm(a.softmax_sum, "softmax_sum", GmRole::kOutput)};
  }
  // The tiling as `_core.kernel_tiling` shows it (the kernel's work split adds its fields).
  static std::vector<std::pair<const char*, int64_t>> tiling_fields(const Tiling& t) {
    return {{"block_dim", t.block_dim},
            {"splits", t.splits},
            {"units_per_core", t.units_per_core},
            {"cores_with_extra", t.cores_with_extra},
            {"row_tiles", t.row_tiles},
            {"combine_heads", t.combine_heads},
            {"combine_buffers", t.combine_buffers},
            {"m_pad", t.m_pad},
            {"heads_per_aiv", t.heads_per_aiv},
            {"tile_keys", t.tile_keys},
            {"kv_width", t.kv_width},
            {"value_col", t.value_col},
            {"value_is_key", t.value_is_key},
            {"k_chunk", t.k_chunk},
            {"n_chunk", t.n_chunk},
            {"softmax_heads", t.softmax_heads},
            {"out_heads", t.out_heads},
            {"in_buffers", t.in_buffers},
            {"index_chunk", t.index_chunk},
            {"s_slot_floats", t.s_slot_floats},
            {"p_slot_elems", t.p_slot_elems},
            {"o_slot_floats", t.o_slot_floats},
            {"workspace_per_aic", t.workspace_per_aic},
            {"slots_offset", t.slots_offset},
            {"partial_floats", t.partial_floats},
            {"partials_offset", t.partials_offset},
            {"entries_offset", t.entries_offset},
            {"workspace_bytes", static_cast<int64_t>(kernel_workspace_bytes(t))},
            {"ub_bytes", kernel_ub_bytes(t)}};
  }
  static auto npu_launch() { return &sparse_flash_attention_launch; }
#ifdef AOP_WITH_EMU
  static auto emu_kernel() { return &sparse_flash_attention_kernel; }
#endif
};

}  // namespace aop::sparse_flash_attention
