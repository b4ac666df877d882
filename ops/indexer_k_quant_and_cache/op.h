// indexer_k_quant_and_cache, described once: its arguments (ascend_ops/op_params.hpp), from which
// common derives the front doors, and its launch (ascend_ops/kernel_launch.hpp), mapped to this
// op's host interface (host/indexer_k_quant_and_cache.h) and kernel
// (kernel/indexer_k_quant_and_cache_launch.h).
#pragma once
#include <array>
#include <cstdint>
#include <utility>
#include <vector>

#include "ascend_ops/kernel_launch.hpp"
#include "ascend_ops/op_params.hpp"
#include "ascend_ops/tensor.hpp"
#include "host/indexer_k_quant_and_cache.h"
#include "kernel/indexer_k_quant_and_cache_launch.h"

namespace aop::indexer_k_quant_and_cache {

struct Op {
  using Args = indexer_k_quant_and_cache::Args;
  struct Prepared {
    Args args;
    Dims dims;
  };
  using Tiling = IndexerKQuantTiling;
  static constexpr const char* kName = "indexer_k_quant_and_cache";
  static constexpr const char* kPackage = "ascend-op-indexer-k-quant-and-cache";
  static constexpr const char* kDoc = R"doc(Quantize indexer keys per token group and write them into a paged cache, in place.

For every t < T' with s = slot_mapping[t] >= 0 (b = s // block_size, o = s % block_size; s < 0
is padding) and every group g of qbs = quant_block_size elements (G = D / qbs)::

    x = float32(k[t, g*qbs:(g+1)*qbs]);  amax = max |x|
    fused (uint8 k_cache):  sc = fl32(max(amax, 1e-4) / 448), with scale_fmt "ue8m0" rounded up
                            to a power of two; q = E4M3FN(clamp(fl32(x / sc), -448, 448))
    split (int8 k_cache):   sc = fl32(amax / 127) (1 for amax == 0);
                            q = clamp(round_half_even(fl32(x / sc)), -128, 127)

Parameters
----------
k : [T, D] float16, bfloat16 or float32; token rows may be strided, D contiguous.
k_cache : fused (vLLM): uint8 [num_blocks, block_size, D + 4G]; a block holds all block_size
    rows of D code bytes, then all block_size * G float32 scales (byte offsets from the block:
    o*D + d, block_size*D + 4*(o*G + g)); the block stride may exceed the block.
    split (Ascend): int8 [num_blocks, block_size, 1, D] or [num_blocks, block_size, D].
slot_mapping : [T'] int32 or int64, T' <= T; s >= num_blocks * block_size raises IndexError
    before any write.
k_scale_cache : split only: float16 or float32 [num_blocks, block_size, 1, G] or
    [num_blocks, block_size, G], the scales rounded (nearest even) to its dtype; None when fused.
quant_block_size : qbs, dividing D.
scale_fmt : None (the default) or "ue8m0" (fused only).

Returns
-------
None (k_cache and k_scale_cache are written in place).

The emu backend (and the NPU) take the split int8 layout only (Atlas A2 / A3 have no fp8),
qbs a multiple of 32 and D <= 4096.

Raises
------
TypeError, ValueError, IndexError naming the argument, the expected and the actual value; the
caches are then unchanged. A float16 scale that overflows (amax / 127 >= 65520, possible only for
bfloat16 / float32 k) is a ValueError. Duplicate slots: which token wins is not specified.
)doc";

  static const std::array<desc::Param<Args>, 6>& params() {
    using desc::Access;
    using desc::Kind;
    using desc::set_field;
    static const std::array<desc::Param<Args>, 6> p{{
        {"k", Kind::kTensor, Access::kRead, false, false, nullptr, &set_field<&Args::k>},
        {"k_cache", Kind::kTensor, Access::kWrite, false, false, nullptr, &set_field<&Args::k_cache>},
        {"slot_mapping", Kind::kTensor, Access::kRead, false, false, nullptr, &set_field<&Args::slot_mapping>},
        {"k_scale_cache", Kind::kTensor, Access::kWrite, true, true, "None", &set_field<&Args::k_scale_cache>},
        {"quant_block_size", Kind::kInt, Access::kRead, false, true, "128", &set_field<&Args::quant_block_size>},
        {"scale_fmt", Kind::kString, Access::kRead, true, true, "None", &set_scale_fmt_value, kScaleFormats},
    }};
    return p;
  }
  static std::array<desc::Output<Args>, 0> outputs() { return {}; }  // writes in place, returns nothing
  static void set_scale_fmt_value(Args& a, const desc::Value& v) { set_scale_fmt(a, !v.is_none(), v.s); }
  static void check_inputs(const Args& a) { (void)validate(a); }
  static void check_attributes(const Args&) {}
  static void run_cpu(const Args& a) { indexer_k_quant_and_cache::run_cpu(a); }
  static void run_npu(const Args& a, const NpuContext& ctx) { indexer_k_quant_and_cache::run_npu(a, ctx); }

  static constexpr const char* kKernel = "indexer_k_quant_and_cache_kernel";
  // vector-only, with the SyncAll of the check phase
  static constexpr launch::KernelType kKernelType = launch::KernelType::kMixAiv1_0;

  static Prepared prepare(const Args& args) {
    const Dims d = validate(args);
    check_npu_limits(args, d);
    return {args, d};
  }
  static void check_data(const Prepared& p) { indexer_k_quant_and_cache::check_data(p.args, p.dims); }
  static Tiling tiling(const Prepared& p, const aop_platform& platform) { return kernel_tiling(p.args, p.dims, platform); }
  static bool nothing_to_launch(const Prepared&, const Tiling& t) { return t.num_tokens == 0; }
  // one check slot per core (common's check protocol), nothing else
  static size_t workspace_bytes(const Tiling& t) { return launch::check_slots_bytes(t.block_dim, kIkqCheckWords); }
  static aop::Error kernel_error(const int64_t record[kIkqCheckWords]) {
    return indexer_k_quant_and_cache::kernel_error(record);
  }

  static std::array<launch::GmTensor, 4> gm_tensors(const Prepared& p) {
    using launch::GmRole;
    const Args& a = p.args;
    return {launch::gm(a.k, "k", GmRole::kInput), launch::gm(a.k_cache, "k_cache", GmRole::kOutput),
            launch::gm(a.slot_mapping, "slot_mapping", GmRole::kInput),
            launch::gm(a.k_scale_cache, "k_scale_cache", GmRole::kOutput)};
  }
  // The tiling as `_core.kernel_tiling` shows it.
  static std::vector<std::pair<const char*, int64_t>> tiling_fields(const Tiling& t) {
    return {{"num_tokens", t.num_tokens},
            {"head_dim", t.head_dim},
            {"quant_block", t.quant_block},
            {"groups", t.groups},
            {"k_token_stride", t.k_token_stride},
            {"num_blocks", t.num_blocks},
            {"block_size", t.block_size},
            {"num_slots", t.num_slots},
            {"cache_block_stride", t.cache_block_stride},
            {"scale_block_stride", t.scale_block_stride},
            {"k_dtype", t.k_dtype},
            {"scale_bytes", t.scale_bytes},
            {"slot_bytes", t.slot_bytes},
            {"block_dim", t.block_dim},
            {"tokens_per_core", t.tokens_per_core},
            {"cores_with_extra", t.cores_with_extra},
            {"check_scales", t.check_scales},
            {"resident_tokens", t.resident_tokens},
            {"scale_row_bytes", t.scale_row_bytes},
            {"batch_tokens", t.batch_tokens}};
  }
  static auto npu_launch() { return &indexer_k_quant_and_cache_launch; }
#ifdef AOP_WITH_EMU
  static auto emu_kernel() { return &indexer_k_quant_and_cache_kernel; }
#endif
};

}  // namespace aop::indexer_k_quant_and_cache
