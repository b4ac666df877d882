// The <<<>>> launch of the kernel, compiled by CANN's ascendc_library only.
#include "kernel_operator.h"
#include "kernel/reshape_and_cache_tiling.h"

extern "C" __global__ __aicore__ void reshape_and_cache_kernel(
    GM_ADDR key, GM_ADDR value, GM_ADDR key_cache, GM_ADDR value_cache, GM_ADDR slot_mapping,
    GM_ADDR tiling);

extern "C" void reshape_and_cache_launch(uint32_t block_dim, void* stream, uint8_t* key,
                                         uint8_t* value, uint8_t* key_cache, uint8_t* value_cache,
                                         uint8_t* slot_mapping, uint8_t* tiling) {
  reshape_and_cache_kernel<<<block_dim, nullptr, stream>>>(key, value, key_cache, value_cache,
                                                           slot_mapping, tiling);
}
