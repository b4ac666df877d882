// The host side of the kernel's launch, for common's launch (ascend_ops/kernel_launch.hpp):
// adv_step_flash_launch, the <<<>>> wrapper at the end of kernel/adv_step_flash_kernel.cpp (CANN
// builds: ascendc_library generates the launch stub from the kernel's translation unit), and the
// kernel function itself, which the emulator calls (emulator builds).
#pragma once
#include <stdint.h>

extern "C" void adv_step_flash_launch(uint32_t block_dim, void* stream, uint8_t* input_tokens,
                                      uint8_t* sampled_token_ids, uint8_t* input_positions, uint8_t* seq_lens,
                                      uint8_t* slot_mapping, uint8_t* block_tables, uint8_t* workspace,
                                      uint8_t* error_record, uint8_t* tiling);
#ifdef AOP_WITH_EMU  // host code of emulator builds; the kernel's own translation unit defines it
extern "C" void adv_step_flash_kernel(uint8_t* input_tokens, uint8_t* sampled_token_ids,
                                      uint8_t* input_positions, uint8_t* seq_lens, uint8_t* slot_mapping,
                                      uint8_t* block_tables, uint8_t* workspace, uint8_t* error_record,
                                      uint8_t* tiling);
#endif
