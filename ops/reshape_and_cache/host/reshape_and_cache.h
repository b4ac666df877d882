// reshape_and_cache: the framework-neutral host entry every adapter calls.
// Validation, tiling and the CPU kernel live here; adapters only translate tensors.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "ascend_ops/error.hpp"
#include "ascend_ops/npu_context.hpp"
#include "ascend_ops/platform.h"
#include "ascend_ops/tensor.h"
#include "kernel/reshape_and_cache_tiling.h"

namespace aop::reshape_and_cache {

// cache_mode: how a cache stores its slots.
constexpr int32_t kCacheND = 0;  // [num_blocks, block_size, H, D]: one token's H*D elements contiguous
constexpr int32_t kCacheNZ = 1;  // FRACTAL_NZ [num_blocks, H*D/F, block_size, F], F = 32 bytes / itemsize
constexpr int32_t kCacheHeadMajor = 2;  // head-major ND [num_blocks, H, block_size, D] (vLLM HND, BNSD)
// vLLM's paged-attention layout: key [num_blocks, H, D/x, block_size, x], x = 16 bytes / itemsize;
// value [num_blocks, H, D, block_size].
constexpr int32_t kCachePaged = 3;
constexpr int64_t kPagedChunkBytes = 16;
// Every mode accepts any strides that keep its last dim contiguous (host/cache_layout.h).

// kv_cache_dtype: how key / value become cache bytes (shared/specs/quantized_cache_write.md).
enum KvCacheDtype : int32_t {
  kKvAuto = 0,     // a bit copy: the cache has the dtype of key
  kKvInt8 = 1,     // clamp(round_half_even(fl32(x / scale) + offset), -128, 127)
  kKvFp8E4m3 = 2,  // "fp8" / "fp8_e4m3": OCP E4M3FN bytes of clamp(fl32(x / scale), -448, 448)
  kKvFp8E5m2 = 3,  // "fp8_e5m2": OCP E5M2 bytes of clamp(fl32(x / scale), -57344, 57344)
};
// The kv_cache_dtype of a name ("fp8" is E4M3FN); TypeError naming the accepted names otherwise.
KvCacheDtype parse_kv_cache_dtype(const std::string& name);
// The name of a mode, as messages spell it.
const char* kv_cache_dtype_name(int32_t mode);
inline bool quantized(int32_t mode) { return mode != kKvAuto; }

struct Args {
  aop_tensor key;           // [T, H, Dk] (or [T, H*Dk] with head_num), rows may be strided
  aop_tensor value;         // [T, H, Dv] (or [T, H*Dv]), same dtype as key; ignored if !has_value
  aop_tensor key_cache;     // ND [num_blocks, block_size, H, Dk] / NZ [num_blocks, H*Dk/F, block_size, F]
  aop_tensor value_cache;   // the same with Dv; ignored if !has_value_cache
  aop_tensor slot_mapping;  // [T'] int32 or int64, T' <= T
  bool has_value = true;        // false: value is None (a key-only cache)
  bool has_value_cache = true;  // false: value_cache is None; must equal has_value
  int32_t cache_mode = kCacheND;
  int64_t head_num = 0;         // 0: not given; required when key is [T, H*Dk]
  int32_t kv_cache_dtype = kKvAuto;
  // Static scales / offsets of the quantising modes: [], [1], [H], [H, D] or [H*D], float32,
  // float16 or bfloat16. None with "auto"; offsets only with "int8".
  std::optional<aop_tensor> k_scale, v_scale, k_offset, v_offset;
};

// Checks the attributes (cache_mode, head_num, value / value_cache presence), dtypes, ranks,
// shapes, devices and layouts; throws aop::Error (TypeError or ValueError) naming the
// argument, the expected and the actual value. Reads no data. Returns the canonical form every
// backend runs: key / value as [T, H, D] views (a [T, H*D] input split by head_num).
Args validated(const Args& args);
inline void validate(const Args& args) { (void)validated(args); }
// validated(), plus the modes the AscendC kernel (npu and emu backends) runs: not the fp8 ones
// (Atlas A2 / A3 have no fp8); ValueError naming the mode otherwise.
Args validated_for_kernel(const Args& args);

// The fractal width F of cache_mode 1 (NZ) for the cache's element size: 32 bytes per fractal
// row (16 for float16 / bfloat16, 32 for int8 and every 1-byte quantised cache).
inline int64_t nz_fractal(int64_t elem_bytes) { return 32 / elem_bytes; }

// num_blocks and block_size of a validated key_cache in either mode.
int64_t cache_num_blocks(const Args& args);
int64_t cache_block_size(const Args& args);

// Checks every slot is < num_blocks * block_size; throws aop::Error (IndexError) naming the
// token and the slot. Reads slot_mapping, so it needs host-readable memory. Call on validated
// arguments.
void check_slots(const Args& args);

// The data checks of a quantising mode, before any write: every scale finite and > 0, every
// offset finite (ValueError naming the tensor, the element and its value). Reads the scales, so
// it needs host-readable memory. Call on validated arguments; nothing to check with "auto".
void check_scales(const Args& args);

// Every data check of the host (check_scales, then check_slots): the kernel's check phase finds
// the same first error.
inline void check_data(const Args& args) {
  check_scales(args);
  check_slots(args);
}

// The exception check_slots raises for the same input, from an error record the kernel wrote
// (8 int64 words, kernel/reshape_and_cache_tiling.h: ReshapeAndCacheError). check_slots builds its
// exception here too, so both messages are one. An unknown code gives a RuntimeError.
aop::Error kernel_error(const int64_t record[kRacCheckWords]);


// The launch tiling for `platform`, from common's tiling cache (keyed by shapes, dtypes,
// strides, attributes and platform). Call on validated() arguments.
ReshapeAndCacheTiling tiling(const Args& args, const aop_platform& platform);

// validate + check_data + the multi-threaded CPU copy (or quantising write). The only entry CPU adapters need.
void run_cpu(const Args& args);

}  // namespace aop::reshape_and_cache

namespace aop::reshape_and_cache {

// The NPU backend (common's npu::run_kernel over op.h; CANN or simulated builds): validates, checks the slots
// against a host copy of slot_mapping, then launches the AscendC kernel on `stream`
// (an aclrtStream). Not run on NPU by this project's CI: there is no device here.
void run_npu(const Args& args, const aop::NpuContext& ctx);

}  // namespace aop::reshape_and_cache
