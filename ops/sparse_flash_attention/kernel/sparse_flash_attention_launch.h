// The host side of the kernel's launch, for common's launch (ascend_ops/kernel_launch.hpp):
// sparse_flash_attention_launch, the <<<>>> wrapper at the end of
// kernel/sparse_flash_attention_kernel.cpp (CANN builds), and the kernel function the emulator
// calls (emulator builds).
#pragma once
#include <stdint.h>

extern "C" void sparse_flash_attention_launch(uint32_t block_dim, void* stream, uint8_t* query, uint8_t* key,
                                              uint8_t* value, uint8_t* sparse_indices, uint8_t* block_table,
                                              uint8_t* lengths_q, uint8_t* lengths_kv, uint8_t* query_rope,
                                              uint8_t* key_rope, uint8_t* attention_out, uint8_t* softmax_max,
                                              uint8_t* softmax_sum, uint8_t* workspace, uint8_t* error_record,
                                              uint8_t* tiling);
#ifdef AOP_WITH_EMU  // host code of emulator builds; the kernel's own translation unit defines it
extern "C" void sparse_flash_attention_kernel(uint8_t* query, uint8_t* key, uint8_t* value, uint8_t* sparse_indices,
                                              uint8_t* block_table, uint8_t* lengths_q, uint8_t* lengths_kv,
                                              uint8_t* query_rope, uint8_t* key_rope, uint8_t* attention_out,
                                              uint8_t* softmax_max, uint8_t* softmax_sum, uint8_t* workspace,
                                              uint8_t* error_record, uint8_t* tiling);
#endif
