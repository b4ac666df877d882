// The <<<>>> launch of the kernel, compiled by CANN's ascendc_library only.
#include "kernel_operator.h"
#include "kernel/lightning_indexer_tiling.h"

extern "C" __global__ __aicore__ void lightning_indexer_kernel(GM_ADDR query, GM_ADDR key, GM_ADDR weights,
                                                               GM_ADDR lengths_q, GM_ADDR lengths_k,
                                                               GM_ADDR block_table, GM_ADDR sparse_indices,
                                                               GM_ADDR sparse_values, GM_ADDR workspace,
                                                               GM_ADDR tiling);

extern "C" void lightning_indexer_launch(uint32_t block_dim, void* stream, uint8_t* query, uint8_t* key,
                                         uint8_t* weights, uint8_t* lengths_q, uint8_t* lengths_k,
                                         uint8_t* block_table, uint8_t* sparse_indices, uint8_t* sparse_values,
                                         uint8_t* workspace, uint8_t* tiling) {
  lightning_indexer_kernel<<<block_dim, nullptr, stream>>>(query, key, weights, lengths_q, lengths_k, block_table,
                                                           sparse_indices, sparse_values, workspace, tiling);
}
