// The <<<>>> launch of the kernel, compiled by CANN's ascendc_library only.
#include "kernel_operator.h"
#include "kernel/adv_step_flash_tiling.h"

extern "C" __global__ __aicore__ void adv_step_flash_kernel(GM_ADDR input_tokens, GM_ADDR sampled_token_ids,
                                                            GM_ADDR input_positions, GM_ADDR seq_lens,
                                                            GM_ADDR slot_mapping, GM_ADDR block_tables,
                                                            GM_ADDR tiling);

extern "C" void adv_step_flash_launch(uint32_t block_dim, void* stream, uint8_t* input_tokens,
                                      uint8_t* sampled_token_ids, uint8_t* input_positions, uint8_t* seq_lens,
                                      uint8_t* slot_mapping, uint8_t* block_tables, uint8_t* tiling) {
  adv_step_flash_kernel<<<block_dim, nullptr, stream>>>(input_tokens, sampled_token_ids, input_positions, seq_lens,
                                                        slot_mapping, block_tables, tiling);
}
