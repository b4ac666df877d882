// The host side of the kernel's launch, for common's launch (ascend_ops/kernel_launch.hpp): the
// <<<>>> wrapper at the end of kernel/indexer_k_quant_and_cache_kernel.cpp (CANN builds), and the
// kernel function itself, which the emulator calls (emulator builds).
#pragma once
#include <stdint.h>

extern "C" void indexer_k_quant_and_cache_launch(uint32_t block_dim, void* stream, uint8_t* k, uint8_t* k_cache,
                                                 uint8_t* slot_mapping, uint8_t* k_scale_cache, uint8_t* workspace,
                                                 uint8_t* error_record, uint8_t* tiling);
#ifdef AOP_WITH_EMU  // host code of emulator builds; the kernel's own translation unit defines it
extern "C" void indexer_k_quant_and_cache_kernel(uint8_t* k, uint8_t* k_cache, uint8_t* slot_mapping,
                                                 uint8_t* k_scale_cache, uint8_t* workspace, uint8_t* error_record,
                                                 uint8_t* tiling);
#endif
