// sparse_flash_attention AscendC kernel: DeepSeek-V3.2 DSA attention over the selected positions
// of every query row (MLA-absorbed, N2 = 1: the N1 heads share one latent + rope row per position)
//   out[row, h] = softmax_j(scale * (q[h] . Kn(P[j]) + qr[h] . Kr(P[j]))) . V(P[j])
// A MIX 1:2 kernel (KERNEL_TYPE_MIX_AIC_1_2): block_dim groups of one cube core (AIC) and two
// vector cores (AIV). The flat query rows are shared out evenly over the groups
// (kernel/sparse_flash_attention_rows.h). Per row the AIC gathers the selected positions' rows
// tile by tile through the block table into L1 and computes S = Q.K^T and, once the AIVs have
// turned S into P, O_t = P.V (kernel/sparse_flash_attention_cube.h, _gather.h); the two AIVs
// split the heads and run the online softmax and the output accumulation in float32
// (kernel/sparse_flash_attention_vector.h); the hand-offs are cross-core flags over two GM slots
// per kind (kernel/sparse_flash_attention_handshake.h). The [rows, N1, K] logits never exist in
// GM: a tile of tile_keys positions at a time. All or nothing: first the AIVs check lengths,
// block ids and indices and meet at a SyncAll of the AIVs, then hand the verdict to their AIC
// (kernel/sparse_flash_attention_check.h; meanwhile the AIC only reads: its first q tile into L1,
// its first walk's index lines); on an error nothing is computed or written and AIV 0
// records the first error in the error record. Compiles with CANN's compiler on NPU (each core
// type's build drops the other side behind ASCEND_IS_AIC / ASCEND_IS_AIV) and with g++ against
// the emulator.
#include "kernel_operator.h"
#include "aop_kernel/load_tiling.h"
#include "kernel/sparse_flash_attention_check.h"
#include "kernel/sparse_flash_attention_combine.h"
#include "kernel/sparse_flash_attention_cube.h"
#include "kernel/sparse_flash_attention_tiling.h"
#include "kernel/sparse_flash_attention_vector.h"

namespace {

template <typename T>
__aicore__ inline void Run(GM_ADDR query, GM_ADDR key, GM_ADDR value, GM_ADDR sparse_indices, GM_ADDR block_table,
                           GM_ADDR lengths_q, GM_ADDR lengths_kv, GM_ADDR query_rope, GM_ADDR key_rope,
                           GM_ADDR attention_out, GM_ADDR softmax_max, GM_ADDR softmax_sum, GM_ADDR workspace,
                           GM_ADDR error_record, const SparseFlashAttentionTiling& tiling) {
  if ASCEND_IS_AIC {
    sparse_flash_attention::Cube<T> cube;
    cube.Init(query, query_rope, key, key_rope, value, sparse_indices, block_table, lengths_q, lengths_kv,
              workspace, tiling);
    // while the AIVs check: its first q tile into L1, its first walk's data-cache lines (reads only)
    cube.Warm(lengths_q, lengths_kv, sparse_indices, block_table);
    sparse_flash_attention::DataCheck check;
    cube.Process(check.Run(lengths_q, lengths_kv, block_table, sparse_indices, workspace, error_record, tiling));
  }
  if ASCEND_IS_AIV {
    {
      sparse_flash_attention::DataCheck check;
      if (!check.Run(lengths_q, lengths_kv, block_table, sparse_indices, workspace, error_record, tiling)) return;
    }
    {
      sparse_flash_attention::Vector<T> vec;
      vec.Init(sparse_indices, lengths_q, lengths_kv, attention_out, softmax_max, softmax_sum, workspace, tiling);
      vec.Process();
    }  // its UB goes to the combine
    if (tiling.splits > 1) {
      // Every AIV's partials are in GM. isAIVOnly = true in a MIX kernel synchronises the AIVs
      // only (SyncAll.md): the AICs are done with these units.
      AscendC::SyncAll<true>();
      sparse_flash_attention::Combine<T> combine;
      combine.Init(attention_out, softmax_max, softmax_sum, workspace, tiling);
      combine.Process();
    }
  }
}

}  // namespace

// query:          [B, S1, N1, D] | [T1, N1, D]                        float16 / bfloat16
// key, value:     [num_blocks, block_size, 1, D] (dim-0 stride kv_block_stride) | [B, S2, 1, D] |
//                 [T2, 1, D]; value may be key itself (value_is_key: read once)
// sparse_indices: [B, S1, 1, K] | [T1, 1, K] int32     block_table: [B, max_blocks] int32 (PA_BSND)
// lengths_q/kv:   [B] int32 (or nullptr where optional and absent)
// query_rope:     as query with Dr columns              key_rope: as key with Dr columns
// attention_out:  as query                              softmax_max/sum: [B, 1, S1, N1] | [1, T1, N1]
//                                                       float32 (nullptr unless has_lse)
// workspace:      [2 * block_dim] 64-byte check slots, [block_dim] 64-byte verdict lines; from
//                 slots_offset per AIC 2 S slots, 2 O slots (float32), 2 P slots (input dtype);
//                 splits > 1: from partials_offset [units] partials (float32), from
//                 entries_offset [rows] int32 (each row's entries before its first -1)
// error_record:   64 bytes, 8 int64 (kernel/sparse_flash_attention_tiling.h), written only on an error
extern "C" __global__ __aicore__ void sparse_flash_attention_kernel(
    GM_ADDR query, GM_ADDR key, GM_ADDR value, GM_ADDR sparse_indices, GM_ADDR block_table, GM_ADDR lengths_q,
    GM_ADDR lengths_kv, GM_ADDR query_rope, GM_ADDR key_rope, GM_ADDR attention_out, GM_ADDR softmax_max,
    GM_ADDR softmax_sum, GM_ADDR workspace, GM_ADDR error_record, GM_ADDR tiling_gm) {
  KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
  const SparseFlashAttentionTiling tiling = aop_kernel::LoadTiling<SparseFlashAttentionTiling>(tiling_gm);
  if (tiling.dtype == 1) {
    Run<bfloat16_t>(query, key, value, sparse_indices, block_table, lengths_q, lengths_kv, query_rope, key_rope,
                    attention_out, softmax_max, softmax_sum, workspace, error_record, tiling);
  } else {
    Run<half>(query, key, value, sparse_indices, block_table, lengths_q, lengths_kv, query_rope, key_rope,
              attention_out, softmax_max, softmax_sum, workspace, error_record, tiling);
  }
}

// The host-side <<<>>> launch, in the kernel's translation unit as CANN's ascendc_library
// needs it. CPU builds define ASCENDC_CPU_DEBUG: the emulator and the real-header check
// (ascendc-api-check) call or compile the kernel function alone.
#ifndef ASCENDC_CPU_DEBUG
#include "kernel/sparse_flash_attention_launch.h"

extern "C" void sparse_flash_attention_launch(uint32_t block_dim, void* stream, uint8_t* query, uint8_t* key,
                                              uint8_t* value, uint8_t* sparse_indices, uint8_t* block_table,
                                              uint8_t* lengths_q, uint8_t* lengths_kv, uint8_t* query_rope,
                                              uint8_t* key_rope, uint8_t* attention_out, uint8_t* softmax_max,
                                              uint8_t* softmax_sum, uint8_t* workspace, uint8_t* error_record,
                                              uint8_t* tiling) {
  sparse_flash_attention_kernel<<<block_dim, nullptr, stream>>>(query, key, value, sparse_indices, block_table,
                                                                lengths_q, lengths_kv, query_rope, key_rope,
                                                                attention_out, softmax_max, softmax_sum, workspace,
                                                                error_record, tiling);
}
#endif  // ASCENDC_CPU_DEBUG
