// lightning_indexer_quant AscendC kernel: for every query row, the top-K visible keys by
//   s[j] = fp32(ks(j)) * sum_h fp32(wq[h]) * fp32(fp16(2^-10 * ReLU(dot_int32(q[h], k[j]))))
//   wq[h] = fp16(weights[h] * qs[h])
// (the contract's "NPU numerics"; ranked on s = 2^-10 * score, sparse_values = s * 2^10 exactly).
// A MIX 1:2 kernel with the float op's structure (kernel/lightning_indexer_kernel.cpp): the same
// work items and key splits (kernel/lightning_indexer_work.h, one query row per item), check phase
// (kernel/lightning_indexer_check.h), slot hand-off (kernel/lightning_indexer_handshake.h), AIV
// top-k, split merge and outputs (kernel/lightning_indexer_vector.h); what differs:
//   AIVs, first: wq of their group's query rows into the workspace (kernel/liq_weights.h), then
//        the data checks of the scales folded into the check phase (kernel/liq_scale_check.h);
//   AIC: int8 k . q^T, Fixpipe DEQF16 + ReLU into L1, float16 wq . a^T on the cube: one float32
//        row per key block (kernel/liq_cube.h);
//   AIVs: the row times the key scales (kernel/liq_key_scale.h), then the float op's mask, sort,
//        merge.
// The kernel checks lengths and block ids as the float op's does, and the scales (finite, >= 0)
// and |weights * qs| < 65520 as the host does (the emu backend runs both; the npu backend only
// the kernel's): all or nothing, the error in the record as the host would raise it.
#include "kernel_operator.h"
#include "aop_kernel/load_tiling.h"
#include "kernel/liq_cube.h"
#include "kernel/liq_key_scale.h"
#include "kernel/liq_scale_check.h"
#include "kernel/liq_tiling.h"
#include "kernel/liq_weights.h"
#include "kernel/lightning_indexer_check.h"
#include "kernel/lightning_indexer_vector.h"

// query:          [B, S1, N1, 128] | [T1, N1, 128] int8              key: [num_blocks, block_size, 1, 128] |
//                 [B, S2, 1, 128] | [T2, 1, 128] int8
// weights, query_scale: [B, S1, N1] | [T1, N1] float16              key_scale: key without D, float16
// lengths_q/k:    [B] int32 / int64 (may be absent: nullptr)        block_table: [B, max_blocks]
// sparse_indices: [B, S1, 1, K] | [T1, 1, K] int32                  sparse_values: same, float32 (or nullptr)
// workspace:      the float op's (check slots, verdict lines, score slots of one row, partial lists), then
//                 at wq_offset wq [q rows, N1] float16                         tiling: LiqTiling
// error_record:   64 bytes, 8 int64 (kernel/lightning_indexer_tiling.h), written only on an error
extern "C" __global__ __aicore__ void lightning_indexer_quant_kernel(GM_ADDR query, GM_ADDR key, GM_ADDR weights,
                                                                     GM_ADDR query_scale, GM_ADDR key_scale,
                                                                     GM_ADDR lengths_q, GM_ADDR lengths_k,
                                                                     GM_ADDR block_table, GM_ADDR sparse_indices,
                                                                     GM_ADDR sparse_values, GM_ADDR workspace,
                                                                     GM_ADDR error_record, GM_ADDR tiling_gm) {
  KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
  const LiqTiling tiling = aop_kernel::LoadTiling<LiqTiling>(tiling_gm);
  const LightningIndexerTiling& li = tiling;
  GM_ADDR wq = workspace + tiling.wq_offset;
  {
    lightning_indexer::ScaleCheck scale_check;
    if ASCEND_IS_AIV {
      scale_check.Init(key_scale, lengths_q, lengths_k, block_table, tiling);
      lightning_indexer::WeightScales scales;
      scales.Run(weights, query_scale, wq, tiling, scale_check);
    }
    lightning_indexer::DataCheck check;  // the AIVs' check phase; the AIC learns the verdict in LiqCube
    if (!check.Run(lengths_q, lengths_k, block_table, nullptr, workspace, error_record, li, scale_check)) return;
  }
  GM_ADDR check_lines = workspace;
  GM_ADDR slots = workspace + lightning_indexer::check::WorkspaceBytes(3 * li.block_dim);
  if ASCEND_IS_AIC {
    lightning_indexer::LiqCube cube;
    cube.Init(query, key, lengths_q, lengths_k, block_table, check_lines, slots, wq, tiling);
    cube.Process();
  }
  if ASCEND_IS_AIV {
    lightning_indexer::Vector<lightning_indexer::KeyScale> vec;
    vec.Init({key_scale, block_table}, lengths_q, lengths_k, nullptr, sparse_indices, sparse_values, slots, li);
    vec.Process();
  }
}

// The host-side <<<>>> launch, in the kernel's translation unit as CANN's ascendc_library needs
// it; CPU builds (the emulator, ascendc-api-check) define ASCENDC_CPU_DEBUG and leave it out.
#ifndef ASCENDC_CPU_DEBUG
#include "kernel/liq_launch.h"

extern "C" void lightning_indexer_quant_launch(uint32_t block_dim, void* stream, uint8_t* query, uint8_t* key,
                                               uint8_t* weights, uint8_t* query_scale, uint8_t* key_scale,
                                               uint8_t* lengths_q, uint8_t* lengths_k, uint8_t* block_table,
                                               uint8_t* sparse_indices, uint8_t* sparse_values, uint8_t* workspace,
                                               uint8_t* error_record, uint8_t* tiling) {
  lightning_indexer_quant_kernel<<<block_dim, nullptr, stream>>>(query, key, weights, query_scale, key_scale,
                                                                 lengths_q, lengths_k, block_table, sparse_indices,
                                                                 sparse_values, workspace, error_record, tiling);
}
#endif  // ASCENDC_CPU_DEBUG
