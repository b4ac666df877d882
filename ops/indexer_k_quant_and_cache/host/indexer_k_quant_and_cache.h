// indexer_k_quant_and_cache: the framework-neutral host entry every front door calls (op.h maps the
// description onto it). Validation, the data checks, the CPU kernel and the kernel's tiling live
// here; front doors only translate tensors.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "ascend_ops/error.hpp"
#include "ascend_ops/npu_context.hpp"
#include "ascend_ops/platform.h"
#include "ascend_ops/tensor.h"
#include "kernel/indexer_k_quant_and_cache_tiling.h"

namespace aop::indexer_k_quant_and_cache {

struct Args {
  aop_tensor k;             // [T, D] float16, bfloat16, float32; rows may be strided, D contiguous
  aop_tensor k_cache;       // fused: uint8 [num_blocks, block_size, D + 4G]; split: int8 [nb, bs, (1,) D]
  aop_tensor slot_mapping;  // [T'] int32 / int64, T' <= T
  std::optional<aop_tensor> k_scale_cache;  // split: float16 / float32 [nb, bs, (1,) G]; fused: None
  int64_t quant_block_size = 128;           // qbs, divides D
  bool ue8m0 = false;                       // scale_fmt "ue8m0" (fused only)
};

enum class Format { kFused, kSplit };

// The sizes every layout reduces to (after validate()). Strides in elements of each tensor.
struct Dims {
  Format format;
  int64_t tokens;        // T
  int64_t written;       // T'
  int64_t head_dim;      // D
  int64_t quant_block;   // qbs
  int64_t groups;        // G
  int64_t num_blocks;
  int64_t block_size;
  int64_t k_row_stride;        // elements between tokens of k
  int64_t cache_block_stride;  // bytes (fused) / elements (split) between blocks of k_cache
  int64_t scale_block_stride;  // elements between blocks of k_scale_cache (split)
};

// scale_fmt's accepted values besides None (a MindSpore graph passes the index): "ue8m0".
inline constexpr const char* kScaleFormats[] = {"ue8m0", nullptr};
// Sets args.ue8m0 from scale_fmt (None: false); any other string is a ValueError naming it.
void set_scale_fmt(Args& args, bool given, const std::string& value);

// Checks dtypes, ranks, shapes, strides, devices and attributes; throws aop::Error (TypeError or
// ValueError) naming the argument, the expected and the actual value. Reads no data.
Dims validate(const Args& args);

// Reads slot_mapping (and, when the float16 scale overflow is possible, k): the first token t < T'
// in order with slot >= num_blocks * block_size (IndexError), or with a group whose float16 scale
// overflows (ValueError). Needs host-readable memory.
void check_data(const Args& args, const Dims& dims);

// Whether the float16 scale overflow (a ValueError) can happen: a float16 scale cache and a
// bfloat16 / float32 k (a float16 amax / 127 never reaches 65520).
bool needs_scale_check(const Args& args, const Dims& dims);

// The exception check_data raises for the same input, from an error record the kernel wrote
// (kIkqCheckWords int64 words); check_data builds its exceptions here too, so both messages are
// one. Unknown code: RuntimeError.
aop::Error kernel_error(const int64_t record[kIkqCheckWords]);

// Limits of the AscendC kernel (npu and emu): the split int8 layout only (A2 / A3 have no fp8),
// qbs a multiple of 32, D <= kIkqMaxHeadDim. ValueError / TypeError naming why.
void check_npu_limits(const Args& args, const Dims& dims);

// validate + check_data + the multi-threaded CPU kernel; writes k_cache (and k_scale_cache).
void run_cpu(const Args& args);

// The launch tiling for `platform`, from common's tiling cache; after validate() and
// check_npu_limits().
IndexerKQuantTiling kernel_tiling(const Args& args, const Dims& dims, const aop_platform& platform);

// The NPU backend (common's npu::run_kernel over op.h). Not run on NPU by this project's CI.
void run_npu(const Args& args, const aop::NpuContext& ctx);

}  // namespace aop::indexer_k_quant_and_cache
