// lightning_indexer_quant: the framework-neutral host entry every adapter calls. The geometry
// (layouts, lengths, block table, visibility, top-k, work split) is lightning_indexer's, shared
// from ops/lightning_indexer/host; this op adds the int8 query / key and the dequant scales.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ascend_ops/error.hpp"
#include "ascend_ops/npu_context.hpp"
#include "ascend_ops/platform.h"
#include "ascend_ops/seq_layout.hpp"
#include "ascend_ops/tensor.h"
#include "host/lightning_indexer.h"
#include "kernel/liq_tiling.h"

namespace aop::lightning_indexer_quant {

using lightning_indexer::Dims;
using lightning_indexer::Layout;

constexpr const char* kOp = "lightning_indexer_quant";
constexpr int64_t kMaxSparseCountNpu = 2048;  // the quant op's NPU range [1, 2048]; the CPU takes 8192

inline Layout parse_layout(const std::string& name, const char* arg, bool is_key) {
  return seq::parse_layout(name, kOp, arg, is_key);
}

struct Args {
  aop_tensor query;                // BSND [B, S1, N1, D] | TND [T1, N1, D]; int8
  aop_tensor key;                  // PA_BSND [num_blocks, block_size, N2, D] | BSND [B, S2, N2, D] | TND [T2, N2, D]; int8
  aop_tensor weights;              // [B, S1, N1] | [T1, N1]; float16, bfloat16, float32
  aop_tensor query_dequant_scale;  // the shape of weights; float16, float32
  aop_tensor key_dequant_scale;    // key without D ([.., N2] or [.., N2, 1] for PA_BSND); float16, float32
  std::optional<aop_tensor> actual_seq_lengths_query;
  std::optional<aop_tensor> actual_seq_lengths_key;
  std::optional<aop_tensor> block_table;
  int64_t query_quant_mode = 0;  // 0: per token and head, symmetric (the only mode)
  int64_t key_quant_mode = 0;
  Layout layout_query = Layout::kBSND;
  Layout layout_key = Layout::kPA_BSND;
  int64_t sparse_count = 2048;
  int64_t sparse_mode = 3;
  aop_tensor sparse_indices;                // out: [B, S1, N2, K] | [T1, N2, K] int32
  std::optional<aop_tensor> sparse_values;  // out: the same shape, float32
};

// The arguments lightning_indexer's shared code reads (geometry, outputs): query, key and
// weights as given (int8 query and key), no compression.
lightning_indexer::Args geometry(const Args& args);

// Every check that reads no data: dtypes, quant modes, ranks, shapes (scales included),
// devices, contiguity, layouts, sparse_count and sparse_mode; TypeError / ValueError naming
// the argument, the expected and the actual value. check_outputs=false checks the inputs only.
Dims validate(const Args& args, bool check_outputs = true);

// Reads the lengths and the block table (as lightning_indexer), then the scales: every
// query_dequant_scale of a row in a batch and every key_dequant_scale of a visible key must be
// finite and >= 0 (ValueError). Needs host-readable memory.
void check_data(const Args& args, const Dims& dims);

// The exception of an error record (8 int64 words, kernel/lightning_indexer_tiling.h), the
// kernel's or the host's own (check_data throws through it): the scale codes here, the rest as
// lightning_indexer's with this op's name.
aop::Error kernel_error(const int64_t record[kLiCheckWords]);

// Limits of the NPU kernel (emu / npu backends): D = 128, N2 = 1, N1 <= 64, block_size a
// multiple of 16 <= 1024, sparse_count <= 2048, float16 weights and scales.
void check_npu_limits(const Args& args, const Dims& dims);

// check_data, then the AscendC kernel's precondition (emu / npu backends): every
// fp16(fp16(weights) * fp16(query_dequant_scale)) of a row in a batch is finite, i.e.
// |weights * qs| < 65520 (it rounds to at most 65504). ValueError naming the position.
void check_data_kernel(const Args& args, const Dims& dims);

// The launch tiling of the AscendC kernel for `platform` (lightning_indexer's planner with this
// kernel's buffers, one query row per work item), from common's tiling cache. Call after
// validate() and check_npu_limits().
LiqTiling kernel_tiling(const Args& args, const Dims& dims, const aop_platform& platform);

// Bytes of the kernel's GM workspace: lightning_indexer's (check slots, verdict lines, score
// slots, partial lists), then wq [block_dim, wq_group_rows, N1] float16 at tiling.wq_offset.
size_t kernel_workspace_bytes(const LiqTiling& tiling);

// UB bytes one AIV allocates at most (the scoring pipe or the split merge's).
int64_t kernel_ub_bytes(const LiqTiling& tiling);

// The NPU backend (common's npu::run_kernel over op_quant.h; CANN or simulated builds). Not run on NPU
// by this project's CI: there is no device.
void run_npu(const Args& args, const aop::NpuContext& ctx);

// How the CPU kernel splits the work (lightning_indexer's plan shape; cached in common's cache).
lightning_indexer::CpuPlan cpu_plan(const Args& args, const Dims& dims);

// validate + check_data + the multi-threaded CPU kernel; writes both outputs.
void run_cpu(const Args& args);

// "avx512_vnni", "avx2" or "baseline": the int8 dot kernel the CPU backend runs here.
const char* cpu_isa();

}  // namespace aop::lightning_indexer_quant
