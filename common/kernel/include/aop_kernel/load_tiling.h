// LoadTiling: the launch tiling, a POD the host wrote into GM, copied into a local struct.
// It is not copied out by value: the implicit copy constructor takes a reference in the generic
// address space, which bisheng may reject for a __gm__ object. It is read one 32-bit word at a
// time through a __gm__ pointer, as the CANN kernel-launch samples do (TilingWord may alias the
// struct's members).
#pragma once
#include "kernel_operator.h"

namespace aop_kernel {

typedef uint32_t TilingWord __attribute__((may_alias));

template <typename T>
__aicore__ inline T LoadTiling(GM_ADDR tiling_gm) {
  static_assert(sizeof(T) % sizeof(TilingWord) == 0, "the tiling is read in 32-bit words");
  const __gm__ TilingWord* src = reinterpret_cast<const __gm__ TilingWord*>(tiling_gm);
  T tiling;
  TilingWord* dst = reinterpret_cast<TilingWord*>(&tiling);
  for (uint32_t i = 0; i < sizeof(T) / sizeof(TilingWord); ++i) dst[i] = src[i];
  return tiling;
}

}  // namespace aop_kernel
