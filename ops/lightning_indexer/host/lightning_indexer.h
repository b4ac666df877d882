// lightning_indexer: the framework-neutral host entry every adapter calls.
// Validation, the CPU plan (cached tiling) and the CPU kernel live here; adapters only
// translate tensors.
#pragma once
#include <cstddef>
#include "ascend_ops/npu_context.hpp"
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ascend_ops/error.hpp"
#include "ascend_ops/npu_context.hpp"
#include "ascend_ops/platform.h"
#include "ascend_ops/seq_layout.hpp"
#include "ascend_ops/tensor.h"
#include "kernel/lightning_indexer_tiling.h"
#include "kernel/lightning_indexer_visibility.h"

namespace aop::lightning_indexer {

using Layout = seq::Layout;  // BSND, TND, PA_BSND (common's, shared with sparse_flash_attention)
using seq::layout_name;
using seq::read_index;

// "BSND" / "TND" for the query, "PA_BSND" / "BSND" / "TND" for the key; ValueError naming the
// argument and the accepted values otherwise.
inline Layout parse_layout(const std::string& name, const char* arg, bool is_key) {
  return seq::parse_layout(name, "lightning_indexer", arg, is_key);
}

constexpr int64_t kMaxSparseCount = 8192;

struct Args {
  aop_tensor query;    // BSND [B, S1, N1, D] | TND [T1, N1, D]; float16, bfloat16, float32
  aop_tensor key;      // PA_BSND [num_blocks, block_size, N2, D] | BSND [B, S2, N2, D] | TND [T2, N2, D]
  aop_tensor weights;  // [B, S1, N1] | [T1, N1]; query dtype or float32
  std::optional<aop_tensor> actual_seq_lengths_query;  // [B] int32/int64: lengths (BSND), cumulative ends (TND)
  std::optional<aop_tensor> actual_seq_lengths_key;    // [B] int32/int64: lengths (PA_BSND, BSND), cumulative ends (TND)
  std::optional<aop_tensor> block_table;               // [B, max_blocks] int32/int64 (PA_BSND only)
  std::optional<aop_tensor> cmp_residual_k;            // [B] int32/int64: original key length mod cmp_ratio
  Layout layout_query = Layout::kBSND;
  Layout layout_key = Layout::kPA_BSND;
  int64_t sparse_count = 2048;
  int64_t sparse_mode = 3;
  int64_t cmp_ratio = 1;  // keys are compressed rows of cmp_ratio tokens (kernel/lightning_indexer_visibility.h)
  aop_tensor sparse_indices;                  // out: [B, S1, N2, K] | [T1, N2, K] int32, contiguous
  std::optional<aop_tensor> sparse_values;    // out: the same shape, float32, contiguous
};

// The sizes every layout reduces to (after validate()).
struct Dims {
  int64_t batch;        // B
  int64_t q_rows;       // S1 (BSND) or T1 (TND): rows per batch slab / in total
  int64_t heads_q;      // N1
  int64_t heads_k;      // N2
  int64_t head_dim;     // D
  int64_t key_rows;     // S2 (BSND), T2 (TND), num_blocks * block_size (PA_BSND)
  int64_t block_size;   // PA_BSND only, else 0
  int64_t num_blocks;   // PA_BSND only, else 0
  int64_t max_blocks;   // block_table.shape[1], PA_BSND only, else 0
  int64_t key_block_stride;  // PA_BSND: elements from one cache block to the next (key.stride(0)), else 0
};

// The output shape [B, S1, N2, K] (BSND query) or [T1, N2, K] (TND query) from the input
// shapes alone; call after validate(). Used by every adapter that allocates the outputs.
std::vector<int64_t> output_shape(const Args& args);

// Checks layouts, dtypes, ranks, shapes, devices, strides, sparse_count, sparse_mode, cmp_ratio
// and whether cmp_residual_k is given as cmp_ratio and sparse_mode require;
// throws aop::Error (TypeError or ValueError) naming the argument, the expected and the
// actual value. Reads no data; the outputs may be absent (data nullptr, ndim 0) when only the
// inputs are checked (Meta, Graph-mode compile time): set check_outputs=false.
Dims validate(const Args& args, bool check_outputs = true);

// validate() without the dtypes of query, key and weights, its messages starting "<op>: ": the
// checks lightning_indexer_quant shares (its int8 query and key, float scales).
Dims validate_geometry(const Args& args, const char* op, bool check_outputs = true);

// Reads the lengths, the block table and the residuals: lengths within the key / query tensors
// and the block table, cumulative ends non-decreasing, block ids in [0, num_blocks) for every
// block a batch uses, cmp_residual_k in [0, cmp_ratio). Throws ValueError / IndexError. Needs
// host-readable memory.
void check_data(const Args& args, const Dims& dims);

// check_data with messages starting "<op>: " (lightning_indexer_quant).
void check_data_as(const Args& args, const Dims& dims, const char* op);

// The exception check_data raises for the same input, from an error record the kernel wrote
// (8 int64 words, kernel/lightning_indexer_tiling.h: LightningIndexerError). check_data builds its
// exceptions here too, so both messages are one. An unknown code gives a RuntimeError.
aop::Error kernel_error(const int64_t record[kLiCheckWords]);

// Bytes of the kernel's GM workspace: 2 * block_dim 64-byte check slots (one per AIV) and
// block_dim 64-byte verdict lines (one per AIC), then the score slots and partial lists
// (tiling.workspace_floats float32 from kernel_check_bytes on).
// Every core writes its own check slot before reading any, and the kernel never reads a score it
// did not write: no zeroing needed.
size_t kernel_check_bytes(const LightningIndexerTiling& tiling);
size_t kernel_workspace_bytes(const LightningIndexerTiling& tiling);

// kernel_error with messages starting "<op>: " (lightning_indexer_quant).
aop::Error kernel_error_as(const int64_t record[kLiCheckWords], const char* op);

// Limits of the AscendC kernel, on the NPU and through the emulator (N2 = 1, D = 128, N1 <= 64,
// block_size % 16 == 0 and <= 1024, no float32): ValueError / TypeError. The CPU path accepts
// more.
void check_npu_limits(const Args& args, const Dims& dims);

// How the CPU kernel splits the work: cached in common's tiling cache (keyed by shapes,
// dtypes, layouts, attributes and the thread count).
struct CpuPlan {
  int64_t key_tile;       // keys converted to float32 (and transposed) at once
  int64_t row_block;      // query rows of one work item
  int64_t key_chunk;      // keys of one work item (a multiple of key_tile)
  int32_t threads;        // aop_num_threads() the plan was made for
  int32_t reserved;
};
CpuPlan cpu_plan(const Args& args, const Dims& dims);

// validate + check_data + the multi-threaded fused CPU kernel; writes both outputs.
void run_cpu(const Args& args);

// The launch tiling of the AscendC kernel for `platform` (core count, UB / L1 / L0 sizes), from
// common's tiling cache. Call after validate() and check_npu_limits(); ValueError if no tile
// fits the platform's memories.
LightningIndexerTiling kernel_tiling(const Args& args, const Dims& dims, const aop_platform& platform);


// What bounds the AscendC kernel's tiles, per kernel: the float op's and lightning_indexer_quant's
// kernels share the planner (kernel_plan: tile, rows per item, block, head chunk, key splits,
// halves, slots, workspace) and differ in their AIC / AIV buffers.
// Keys per AIC -> AIV hand-off (a key block) at most: one Sort + at most one merge per row; an
// op's cube_fits may size its L0C by it.
constexpr int64_t kMaxBlockKeys = 512;

struct KernelBudget {
  const char* op;    // the messages' op name
  int64_t max_rows;  // query rows per work item at most
  // one AIV's UB bytes for a tiling with heads, head_chunk, block_pad, k_pad and rows_per_aiv set
  int64_t (*ub_bytes)(const LightningIndexerTiling& t, int64_t weight_bytes);
  // whether the AIC's L1 / L0 hold a q tile of m_pad rows and key tiles of `tile` keys
  bool (*cube_fits)(int64_t m_pad, int64_t tile, int64_t head_dim, int64_t elem_bytes, const aop_platform& p);
  int64_t (*slot_rows)(const LightningIndexerTiling& t);  // float32 rows of a GM score slot
  int32_t min_slots = 2;        // GM score slots per AIC at least (halves take 4)
  bool splits_in_tiles = false;  // key splits in whole key tiles (split_align), not whole blocks
};

// The kernel tiling for `budget` (kernel_tiling is it for the float op's budget, cached).
LightningIndexerTiling kernel_plan(const Args& args, const Dims& dims, const aop_platform& platform,
                                   const KernelBudget& budget);

// UB bytes of the split merge's pipe (kernel/lightning_indexer_merge.h), 0 without splits.
int64_t kernel_merge_ub_bytes(const LightningIndexerTiling& tiling);

// Bytes of UB the kernel allocates at most for a tiling (the vector side's pipe, or the split
// merge's that replaces it; every buffer rounded up to 32 bytes, as TPipe::InitBuffer does); the
// tiling keeps it within the platform's UB.
int64_t kernel_ub_bytes(const LightningIndexerTiling& tiling);

// The NPU backend (common's npu::run_kernel over op.h; CANN or simulated builds): validates (check_npu_limits
// included), checks lengths and block ids against host copies, then launches the AscendC
// kernel on `stream` (an aclrtStream). Not run on NPU by this project's CI: there is no device.
void run_npu(const Args& args, const aop::NpuContext& ctx);

}  // namespace aop::lightning_indexer
