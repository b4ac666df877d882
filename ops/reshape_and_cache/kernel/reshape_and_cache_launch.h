// The host-side launch of the AscendC kernel: the <<<>>> wrapper defined at the end of
// kernel/reshape_and_cache_kernel.cpp (in the kernel's translation unit, where CANN's
// ascendc_library generates the launch stub), declared once here for host/npu_launch.cpp.
// Exists only in the CANN build: the emulator calls the kernel function directly.
#pragma once
#include <stdint.h>

extern "C" void reshape_and_cache_launch(uint32_t block_dim, void* stream, uint8_t* key, uint8_t* value,
                                         uint8_t* key_cache, uint8_t* value_cache, uint8_t* slot_mapping,
                                         uint8_t* workspace, uint8_t* error_record, uint8_t* tiling);
