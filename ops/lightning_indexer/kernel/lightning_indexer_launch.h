// The host-side launch of the AscendC kernel: the <<<>>> wrapper defined at the end of
// kernel/lightning_indexer_kernel.cpp (in the kernel's translation unit, where CANN's
// ascendc_library generates the launch stub), declared once here for host/npu_launch.cpp.
// Exists only in the CANN build: the emulator calls the kernel function directly.
#pragma once
#include <stdint.h>

extern "C" void lightning_indexer_launch(uint32_t block_dim, void* stream, uint8_t* query, uint8_t* key,
                                         uint8_t* weights, uint8_t* lengths_q, uint8_t* lengths_k,
                                         uint8_t* block_table, uint8_t* sparse_indices, uint8_t* sparse_values,
                                         uint8_t* workspace, uint8_t* error_record, uint8_t* tiling);
