// sparse_flash_attention: the framework-neutral host entry every front door calls (op.h maps the
// description onto it). Validation, the data checks, the CPU kernel and the kernel's tiling live
// here; front doors only translate tensors.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ascend_ops/error.hpp"
#include "ascend_ops/npu_context.hpp"
#include "ascend_ops/platform.h"
#include "ascend_ops/seq_layout.hpp"
#include "ascend_ops/tensor.h"
#include "kernel/sparse_flash_attention_tiling.h"

namespace aop::sparse_flash_attention {

using Layout = seq::Layout;  // BSND, TND, PA_BSND (common's, shared with lightning_indexer)
using seq::layout_name;

// "BSND" / "TND" for the query, "PA_BSND" / "BSND" / "TND" for key and value; ValueError naming
// the argument and the accepted values otherwise.
inline Layout parse_layout(const std::string& name, const char* arg, bool is_kv) {
  return seq::parse_layout(name, "sparse_flash_attention", arg, is_kv);
}

constexpr int64_t kDefaultTokens = INT64_MAX;  // pre_tokens / next_tokens: the only value accepted

struct Args {
  aop_tensor query;           // BSND [B, S1, N1, D] | TND [T1, N1, D]; float16, bfloat16 (float32: CPU)
  aop_tensor key;             // PA_BSND [num_blocks, block_size, N2, D] | BSND [B, S2, N2, D] | TND [T2, N2, D]
  aop_tensor value;           // as key (normally key itself)
  aop_tensor sparse_indices;  // [B, S1, N2, K] | [T1, N2, K] int32
  double scale_value = 1.0;   // applied as float32
  std::optional<aop_tensor> block_table;               // [B, max_blocks] int32 (PA_BSND only)
  std::optional<aop_tensor> actual_seq_lengths_query;  // [B]: lengths (BSND), cumulative ends (TND)
  std::optional<aop_tensor> actual_seq_lengths_kv;     // [B]: lengths (PA_BSND, BSND), cumulative ends (TND)
  std::optional<aop_tensor> query_rope;                // as query with Dr columns
  std::optional<aop_tensor> key_rope;                  // as key with Dr columns
  int64_t sparse_block_size = 1;
  Layout layout_query = Layout::kBSND;
  Layout layout_kv = Layout::kPA_BSND;
  int64_t sparse_mode = 3;
  int64_t pre_tokens = kDefaultTokens;
  int64_t next_tokens = kDefaultTokens;
  int64_t attention_mode = 2;
  aop_tensor attention_out;                // out: the shape and dtype of query, contiguous
  std::optional<aop_tensor> softmax_max;   // out: [B, N2, S1, G] | [N2, T1, G] float32
  std::optional<aop_tensor> softmax_sum;   // out: the same
};

// The sizes every layout reduces to (after validate()).
struct Dims {
  int64_t batch;       // B
  int64_t q_rows;      // S1 (BSND) or T1 (TND)
  int64_t heads_q;     // N1
  int64_t heads_kv;    // N2
  int64_t head_dim;    // D (latent)
  int64_t rope_dim;    // Dr
  int64_t topk;        // K: entries per row of sparse_indices
  int64_t key_rows;    // S2 (BSND), T2 (TND), num_blocks * block_size (PA_BSND)
  int64_t block_size;  // PA_BSND only, else 0
  int64_t num_blocks;  // PA_BSND only, else 0
  int64_t max_blocks;  // block_table.shape[1], PA_BSND only, else 0
  int64_t kv_block_stride;    // elements between blocks (PA_BSND; may exceed block_size * N2 * D), else rows * N2 * D
  int64_t rope_block_stride;  // the same for key_rope
  bool value_is_key;   // value aliases key (same data, shape and strides): one read serves K and V
};

// Checks layouts, dtypes, ranks, shapes, devices, strides and attributes; throws aop::Error
// (TypeError or ValueError) naming the argument, the expected and the actual value. Reads no
// data. check_outputs=false when only the inputs are known (Meta, graph compile time).
Dims validate(const Args& args, bool check_outputs = true);

// Reads the lengths, the block table and the first n entries of every row of sparse_indices (the
// contract's n): lengths within the tensors and the block table, cumulative ends non-decreasing,
// block ids in [0, num_blocks) for every block a batch reads, no index < -1 among the entries
// read. ValueError / IndexError. Needs host-readable memory.
void check_data(const Args& args, const Dims& dims);

// The exception check_data raises for the same input, from an error record the kernel wrote
// (kSfaCheckWords int64 words, kernel/sparse_flash_attention_tiling.h); check_data builds its
// exceptions here too, so both messages are one. Unknown code: RuntimeError.
aop::Error kernel_error(const int64_t record[kSfaCheckWords]);

// Limits of the AscendC kernel (npu and emu backends): D = 512, Dr = 64, N2 = 1, N1 a power of
// two <= 128, block_size % 16 == 0 and <= 1024, sbs a power of two <= 128 dividing block_size,
// 16-bit dtypes, lengths and block table int32. ValueError / TypeError.
void check_npu_limits(const Args& args, const Dims& dims);

// validate + check_data + the multi-threaded CPU kernel; writes every output.
void run_cpu(const Args& args);

// The launch tiling for `platform`, from common's tiling cache; after validate() and
// check_npu_limits(). ValueError if no tile fits the platform's memories.
SparseFlashAttentionTiling kernel_tiling(const Args& args, const Dims& dims, const aop_platform& platform);

// Bytes of the kernel's GM workspace for a tiling, and of UB the vector side allocates at most.
size_t kernel_workspace_bytes(const SparseFlashAttentionTiling& tiling);
int64_t kernel_ub_bytes(const SparseFlashAttentionTiling& tiling);

// The NPU backend (common's npu::run_kernel over op.h). Not run on NPU by this project's CI.
void run_npu(const Args& args, const aop::NpuContext& ctx);

}  // namespace aop::sparse_flash_attention
