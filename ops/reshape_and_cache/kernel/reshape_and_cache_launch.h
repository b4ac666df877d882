// The host side of the kernel's launch, for common's launch (ascend_ops/kernel_launch.hpp):
// reshape_and_cache_launch, the <<<>>> wrapper at the end of kernel/reshape_and_cache_kernel.cpp (CANN
// builds: ascendc_library generates the launch stub from the kernel's translation unit), and the
// kernel function itself, which the emulator calls (emulator builds).
#pragma once
#include <stdint.h>

extern "C" void reshape_and_cache_launch(uint32_t block_dim, void* stream, uint8_t* key, uint8_t* value,
                                         uint8_t* key_cache, uint8_t* value_cache, uint8_t* slot_mapping,
                                         uint8_t* k_scale, uint8_t* v_scale, uint8_t* k_offset, uint8_t* v_offset,
                                         uint8_t* workspace, uint8_t* error_record, uint8_t* tiling);
#ifdef AOP_WITH_EMU  // host code of emulator builds; the kernel's own translation unit defines it
extern "C" void reshape_and_cache_kernel(uint8_t* key, uint8_t* value, uint8_t* key_cache,
                                         uint8_t* value_cache, uint8_t* slot_mapping, uint8_t* k_scale,
                                         uint8_t* v_scale, uint8_t* k_offset, uint8_t* v_offset, uint8_t* workspace,
                                         uint8_t* error_record, uint8_t* tiling);
#endif
