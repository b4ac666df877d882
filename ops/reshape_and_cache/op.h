// reshape_and_cache, described once: its arguments (ascend_ops/op_params.hpp), from which common
// derives the front doors, and its launch (ascend_ops/kernel_launch.hpp), mapped to this op's host
// interface (host/reshape_and_cache.h) and kernel (kernel/reshape_and_cache_launch.h).
#pragma once
#include <array>
#include <cstdint>
#include <utility>
#include <vector>

#include "ascend_ops/kernel_launch.hpp"
#include "ascend_ops/op_params.hpp"
#include "host/reshape_and_cache.h"
#include "kernel/reshape_and_cache_launch.h"

namespace aop::reshape_and_cache {

struct Op {
  using Args = reshape_and_cache::Args;
  using Prepared = reshape_and_cache::Args;  // the canonical [T, H, D] form
  using Tiling = ReshapeAndCacheTiling;
  static constexpr const char* kName = "reshape_and_cache";
  static constexpr const char* kPackage = "ascend-op-reshape-and-cache";
  // The docstring of every front door (the generated Python functions add their own notes).
  static constexpr const char* kDoc = R"doc(Write key/value rows into a paged KV cache, in place.

For every t < T' with s = slot_mapping[t] >= 0 (s < 0 is padding)::

    key_cache[s // block_size, s % block_size] = key[t]
    value_cache[s // block_size, s % block_size] = value[t]

Parameters
----------
key : [T, H, Dk] (or [T, H*Dk] / [B, S, H*Dk] with head_num) float16, bfloat16, float32 or
    int8; token rows may be strided (a view of a fused qkv tensor), the [H, Dk] part contiguous.
value : [T, H, Dv] (or [T, H*Dv] / [B, S, H*Dv]); "auto": any of key's dtypes (checked with
    value_cache), quantised modes: the dtype of key. None for a key-only cache.
key_cache : the dtype of key, written in place; any strides with the last dim contiguous (a
    view of a bigger allocation, K and V halves of one tensor). cache_mode 0:
    [num_blocks, block_size, H, Dk]; cache_mode 1: [num_blocks, H*Dk/F, block_size, F]
    (FRACTAL_NZ, F = 16 for float16 / bfloat16, 32 for int8; Dk a multiple of F); cache_mode 2:
    [num_blocks, H, block_size, Dk] (head-major); cache_mode 3: vLLM's paged key
    [num_blocks, H, Dk/x, block_size, x], x = 16 bytes / itemsize (cpu backend only).
value_cache : the same with Dv (cache_mode 3: [num_blocks, H, Dv, block_size]), the dtype of
    value; None exactly when value is None. No byte shared with key_cache or an input.
slot_mapping : [T'] int32 or int64 with T' <= T: only the first T' tokens are written (the
    rest is padding of a captured graph). Token t goes to block s // block_size, offset
    s % block_size; s >= num_blocks * block_size raises IndexError before any write.
cache_mode : 0 (ND, default), 1 (NZ): element j of a token's H*D row goes to
    key_cache[b, j // F, o, j % F] (b = s // block_size, o = s % block_size), 2 (head-major:
    key_cache[b, h, o] = key[t, h]) or 3 (vLLM paged: key_cache[b, h, d // x, o, d % x],
    value_cache[b, h, d, o]).
head_num : H, required when key / value are given as [T, H*D] or [B, S, H*D]; must divide H*D.
    With a [T, H, D] key it must equal H.
kv_cache_dtype : "auto" (default: a bit copy, the caches have the dtype of key), "int8",
    "fp8" / "fp8_e4m3" (OCP E4M3FN bytes) or "fp8_e5m2": quantise on write. key / value
    float16, bfloat16 or float32; caches int8 ("int8") or uint8 (fp8 bytes); NZ F = 32.
    For each element, y = fl32(float32(x) / scale) (IEEE float32 division), then
    int8: clamp(round_half_even(fl32(y + offset)), -128, 127);
    fp8: the round-to-nearest-even code of clamp(y, -MAX, MAX), MAX 448 (E4M3FN) or 57344 (E5M2).
k_scale, v_scale : the scales of a quantised mode (required there, None with "auto"):
    [] or [1] (per tensor), [H] (per head) or [H, D] / [H*D] (per channel); float32, float16
    or bfloat16; every one finite and > 0. v_scale None when key-only.
k_offset, v_offset : int8 only, optional (None: 0); the shapes and dtypes of a scale; finite.

Returns
-------
None (the caches are written in place).

Raises
------
TypeError, ValueError, IndexError naming the argument, the expected and the actual value;
the caches are then unchanged. Duplicate non-negative slots are a caller error: which token
wins is not specified.
)doc";

  // key / value [T, H, D] or [T, H*D] with head_num; value and value_cache None: a key-only cache.
  // kv_cache_dtype's accepted names (a MindSpore graph passes the index).
  static constexpr const char* kKvCacheDtypes[] = {"auto", "int8", "fp8", "fp8_e4m3", "fp8_e5m2", nullptr};
  static const std::array<desc::Param<Args>, 12>& params() {
    using desc::Access;
    using desc::Kind;
    static const std::array<desc::Param<Args>, 12> p{{
        {"key", Kind::kTensor, Access::kRead, false, false, nullptr, &desc::set_field<&Args::key>},
        {"value", Kind::kTensor, Access::kRead, true, false, nullptr, &desc::set_flagged<&Args::value, &Args::has_value>},
        {"key_cache", Kind::kTensor, Access::kWrite, false, false, nullptr, &desc::set_field<&Args::key_cache>},
        {"value_cache", Kind::kTensor, Access::kWrite, true, false, nullptr,
         &desc::set_flagged<&Args::value_cache, &Args::has_value_cache>},
        {"slot_mapping", Kind::kTensor, Access::kRead, false, false, nullptr, &desc::set_field<&Args::slot_mapping>},
        {"cache_mode", Kind::kInt, Access::kRead, false, false, "0", &set_cache_mode},
        {"head_num", Kind::kInt, Access::kRead, true, false, "None", &desc::set_field<&Args::head_num>},
        {"kv_cache_dtype", Kind::kString, Access::kRead, false, true, "\"auto\"", &set_kv_cache_dtype,
         kKvCacheDtypes},
        {"k_scale", Kind::kTensor, Access::kRead, true, true, "None", &desc::set_field<&Args::k_scale>},
        {"v_scale", Kind::kTensor, Access::kRead, true, true, "None", &desc::set_field<&Args::v_scale>},
        {"k_offset", Kind::kTensor, Access::kRead, true, true, "None", &desc::set_field<&Args::k_offset>},
        {"v_offset", Kind::kTensor, Access::kRead, true, true, "None", &desc::set_field<&Args::v_offset>},
    }};
    return p;
  }
  static std::array<desc::Output<Args>, 0> outputs() { return {}; }  // writes in place, returns nothing
  // An int64 cache_mode that does not fit int32 becomes -1 (refused by validation).
  static void set_cache_mode(Args& a, const desc::Value& v) {
    a.cache_mode = v.i == static_cast<int32_t>(v.i) ? static_cast<int32_t>(v.i) : -1;
  }
  static void set_kv_cache_dtype(Args& a, const desc::Value& v) { a.kv_cache_dtype = parse_kv_cache_dtype(v.s); }
  static void check_inputs(const Args& a) { validate(a); }
  static void check_attributes(const Args&) {}
  static void run_cpu(const Args& a) { reshape_and_cache::run_cpu(a); }
  static void run_npu(const Args& a, const NpuContext& ctx) { reshape_and_cache::run_npu(a, ctx); }

  static constexpr const char* kKernel = "reshape_and_cache_kernel";
  // vector-only, with the SyncAll of the check phase
  static constexpr launch::KernelType kKernelType = launch::KernelType::kMixAiv1_0;

  static Prepared prepare(const Args& args) { return validated_for_kernel(args); }
  static void check_data(const Prepared& a) { reshape_and_cache::check_data(a); }
  static Tiling tiling(const Prepared& a, const aop_platform& platform) { return reshape_and_cache::tiling(a, platform); }
  static bool nothing_to_launch(const Prepared&, const Tiling& t) { return t.num_tokens == 0; }
  // one check slot per core (common's check protocol), nothing else
  static size_t workspace_bytes(const Tiling& t) { return launch::check_slots_bytes(t.block_dim, kRacCheckWords); }
  static aop::Error kernel_error(const int64_t record[kRacCheckWords]) { return reshape_and_cache::kernel_error(record); }

  // key-only: value / value_cache are null pointers the kernel never touches; so are absent
  // scales / offsets.
  static std::array<launch::GmTensor, 9> gm_tensors(const Prepared& a) {
    using launch::GmRole;
    return {launch::gm(a.key, "key", GmRole::kInput),
            a.has_value ? launch::gm(a.value, "value", GmRole::kInput) : launch::gm_absent("value", GmRole::kInput),
            launch::gm(a.key_cache, "key_cache", GmRole::kOutput),
            a.has_value ? launch::gm(a.value_cache, "value_cache", GmRole::kOutput)
                        : launch::gm_absent("value_cache", GmRole::kOutput),
            launch::gm(a.slot_mapping, "slot_mapping", GmRole::kInput),
            launch::gm(a.k_scale, "k_scale", GmRole::kInput),
            launch::gm(a.v_scale, "v_scale", GmRole::kInput),
            launch::gm(a.k_offset, "k_offset", GmRole::kInput),
            launch::gm(a.v_offset, "v_offset", GmRole::kInput)};
  }
  // The tiling as `_core.kernel_tiling` shows it.
  static std::vector<std::pair<const char*, int64_t>> tiling_fields(const Tiling& t) {
    return {
            {"num_tokens", t.num_tokens},
            {"key_row_elems", t.key_row_elems},
            {"value_row_elems", t.value_row_elems},
            {"key_token_stride", t.key_token_stride},
            {"value_token_stride", t.value_token_stride},
            {"num_slots", t.num_slots},
            {"elem_bytes", t.elem_bytes},
            {"slot_bytes", t.slot_bytes},
            {"block_dim", t.block_dim},
            {"tokens_per_core", t.tokens_per_core},
            {"cores_with_extra", t.cores_with_extra},
            {"chunk_elems", t.chunk_elems},
            {"block_size", t.block_size},
            {"has_value", t.has_value},
            {"cache_mode", t.cache_mode},
            {"quant", t.quant},
            {"in_dtype", t.in_dtype},
            {"table_elems", t.table_elems}};
  }
  static auto npu_launch() { return &reshape_and_cache_launch; }
#ifdef AOP_WITH_EMU
  static auto emu_kernel() { return &reshape_and_cache_kernel; }
#endif
};

}  // namespace aop::reshape_and_cache
