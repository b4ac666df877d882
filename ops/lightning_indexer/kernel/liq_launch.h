// The host side of lightning_indexer_quant's kernel launch, for common's launch
// (ascend_ops/kernel_launch.hpp): the <<<>>> wrapper at the end of
// kernel/lightning_indexer_quant_kernel.cpp (CANN builds) and the kernel function itself, which the
// emulator calls (emulator builds).
#pragma once
#include <stdint.h>

extern "C" void lightning_indexer_quant_launch(uint32_t block_dim, void* stream, uint8_t* query, uint8_t* key,
                                               uint8_t* weights, uint8_t* query_scale, uint8_t* key_scale,
                                               uint8_t* lengths_q, uint8_t* lengths_k, uint8_t* block_table,
                                               uint8_t* sparse_indices, uint8_t* sparse_values, uint8_t* workspace,
                                               uint8_t* error_record, uint8_t* tiling);
#ifdef AOP_WITH_EMU  // host code of emulator builds; the kernel's own translation unit defines it
extern "C" void lightning_indexer_quant_kernel(uint8_t* query, uint8_t* key, uint8_t* weights, uint8_t* query_scale,
                                               uint8_t* key_scale, uint8_t* lengths_q, uint8_t* lengths_k,
                                               uint8_t* block_table, uint8_t* sparse_indices, uint8_t* sparse_values,
                                               uint8_t* workspace, uint8_t* error_record, uint8_t* tiling);
#endif
