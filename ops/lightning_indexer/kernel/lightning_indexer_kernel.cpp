// lightning_indexer AscendC kernel: for every query row, the top-K visible keys by
//   score[r, j] = sum_h weights[r, h] * ReLU(dot(query[r, h, :], key[j, :]))
// A MIX 1:2 kernel (KERNEL_TYPE_MIX_AIC_1_2): block_dim groups of one cube core (AIC) and two
// vector cores (AIV). Work items (batch, group of rows_per_group query rows), or key splits of
// them when that shares the AICs more evenly (decode), are split evenly over the groups
// (kernel/lightning_indexer_work.h). Per unit the AIC computes ReLU(q . k^T) block by block into
// a ping-pong pair of GM slots (kernel/lightning_indexer_cube.h); the group's two AIVs split the
// item's rows, weight and sum the heads, mask, sort and merge each block into their rows'
// running top-k (kernel/lightning_indexer_vector.h); the hand-offs are cross-core flags with two
// credits (kernel/lightning_indexer_handshake.h). Split items' partial lists are merged by the
// AIVs after a SyncAll of the AIVs. All or nothing: first the AIVs check the lengths and block ids
// and meet at a SyncAll of the AIVs (kernel/lightning_indexer_check.h); meanwhile each AIC computes
// its first key block, reading only inside the tensors, and waits for its AIVs' verdict before it
// publishes it. On an error no block is published, no output is written, and AIV 0 records the
// first error in the error record. Compiles with CANN's compiler on NPU (each core type's
// build drops the other side behind ASCEND_IS_AIC / ASCEND_IS_AIV) and with g++ against the
// emulator.
#include "kernel_operator.h"
#include "aop_kernel/load_tiling.h"
#include "kernel/lightning_indexer_check.h"
#include "kernel/lightning_indexer_cube.h"
#include "kernel/lightning_indexer_tiling.h"
#include "kernel/lightning_indexer_vector.h"

namespace {

template <typename T, typename W>
__aicore__ inline void Run(GM_ADDR query, GM_ADDR key, GM_ADDR weights, GM_ADDR lengths_q, GM_ADDR lengths_k,
                           GM_ADDR block_table, GM_ADDR residual, GM_ADDR sparse_indices, GM_ADDR sparse_values,
                           GM_ADDR workspace, GM_ADDR error_record, const LightningIndexerTiling& tiling) {
  {
    lightning_indexer::DataCheck check;  // the AIVs' check phase; the AIC learns the verdict in Cube
    if (!check.Run(lengths_q, lengths_k, block_table, residual, workspace, error_record, tiling)) return;
  }
  GM_ADDR check_lines = workspace;
  workspace += lightning_indexer::check::WorkspaceBytes(3 * tiling.block_dim);  // past the check slots and lines
  if ASCEND_IS_AIC {
    lightning_indexer::Cube<T> cube;
    cube.Init(query, key, lengths_q, lengths_k, block_table, residual, check_lines, workspace, tiling);
    cube.Process();
  }
  if ASCEND_IS_AIV {
    lightning_indexer::Vector<lightning_indexer::HeadSum<W>> vec;
    vec.Init({weights}, lengths_q, lengths_k, residual, sparse_indices, sparse_values, workspace, tiling);
    vec.Process();
  }
}

}  // namespace

// query:          [B, S1, N1, D] | [T1, N1, D]                      float16 / bfloat16
// key:            [num_blocks, block_size, 1, D] | [B, S2, 1, D] | [T2, 1, D]   query's dtype
// weights:        [B, S1, N1] | [T1, N1]                            query's dtype or float32
// lengths_q/k:    [B] int32 / int64 (may be absent: nullptr)        block_table: [B, max_blocks]
// residual:       cmp_residual_k [B] int32 / int64 (may be absent: nullptr): original key length mod cmp_ratio
// sparse_indices: [B, S1, 1, K] | [T1, 1, K] int32                  sparse_values: same, float32 (or nullptr)
// workspace:      [2 * block_dim] 64-byte check slots, [block_dim] 64-byte verdict lines, then
//                 [block_dim, 2, m_pad * block_pad] float32 (2 score
//                 slots per AIC) and the partial lists (any content)         tiling: LightningIndexerTiling
// error_record:   64 bytes, 8 int64 (kernel/lightning_indexer_tiling.h), written only on an error
extern "C" __global__ __aicore__ void lightning_indexer_kernel(GM_ADDR query, GM_ADDR key, GM_ADDR weights,
                                                               GM_ADDR lengths_q, GM_ADDR lengths_k,
                                                               GM_ADDR block_table, GM_ADDR residual,
                                                               GM_ADDR sparse_indices,
                                                               GM_ADDR sparse_values, GM_ADDR workspace,
                                                               GM_ADDR error_record, GM_ADDR tiling_gm) {
  KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
  const LightningIndexerTiling tiling = aop_kernel::LoadTiling<LightningIndexerTiling>(tiling_gm);
  if (tiling.dtype == 1) {
    if (tiling.weights_float) {
      Run<bfloat16_t, float>(query, key, weights, lengths_q, lengths_k, block_table, residual, sparse_indices,
                             sparse_values, workspace, error_record, tiling);
    } else {
      Run<bfloat16_t, bfloat16_t>(query, key, weights, lengths_q, lengths_k, block_table, residual, sparse_indices,
                                  sparse_values, workspace, error_record, tiling);
    }
  } else {
    if (tiling.weights_float) {
      Run<half, float>(query, key, weights, lengths_q, lengths_k, block_table, residual, sparse_indices, sparse_values,
                       workspace, error_record, tiling);
    } else {
      Run<half, half>(query, key, weights, lengths_q, lengths_k, block_table, residual, sparse_indices, sparse_values,
                      workspace, error_record, tiling);
    }
  }
}

// The host-side <<<>>> launch, in the kernel's translation unit as CANN's ascendc_library
// needs it (its host stub for the kernel is generated from this file). CPU builds define
// ASCENDC_CPU_DEBUG, as CANN's CPU-debug build does: the emulator and the real-header check
// (ascendc-api-check) call or compile the kernel function alone.
#ifndef ASCENDC_CPU_DEBUG
#include "kernel/lightning_indexer_launch.h"

extern "C" void lightning_indexer_launch(uint32_t block_dim, void* stream, uint8_t* query, uint8_t* key,
                                         uint8_t* weights, uint8_t* lengths_q, uint8_t* lengths_k,
                                         uint8_t* block_table, uint8_t* residual, uint8_t* sparse_indices,
                                         uint8_t* sparse_values, uint8_t* workspace, uint8_t* error_record,
                                         uint8_t* tiling) {
  lightning_indexer_kernel<<<block_dim, nullptr, stream>>>(query, key, weights, lengths_q, lengths_k, block_table,
                                                           residual, sparse_indices, sparse_values, workspace, error_record,
                                                           tiling);
}
#endif  // ASCENDC_CPU_DEBUG
