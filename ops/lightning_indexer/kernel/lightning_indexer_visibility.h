// Which keys a query row of the lightning indexers sees: the one statement of the rule, shared
// by the host checks and CPU kernel (host/), the AscendC kernel (kernel/lightning_indexer_work.h:
// Work::Limit, kernel/lightning_indexer_check.h) and meant for the quantized indexer too. The
// NumPy reference (python/.../reference.py) states it again from the specification, in the
// absolute-position form, on purpose: it shares no code with the kernels.
//
// Keys are compressed rows: each stands for cmp_ratio (r) tokens of the original key stream,
// whose length is act_s2 * r + cmp_residual (the residual: the original length mod r, in
// [0, r)). Under sparse_mode 3 (causal, aligned to the end), query row p of a batch with act_s1
// query rows sits at original position t = act_s2 * r + cmp_residual - act_s1 + p and sees
// compressed row j iff j < floor((t + 1) / r). r = 1 (residual 0) is the uncompressed rule
// j <= act_s2 - act_s1 + p. Under sparse_mode 0 every key j < act_s2 is visible, whatever r.
//
// Plain C++ for the host; __aicore__ functions in the kernel (include after kernel_operator.h).
#pragma once
#include <stdint.h>

#ifdef __aicore__
#define AOP_LI_RULE __aicore__ inline
#else
#define AOP_LI_RULE inline
#endif

constexpr int64_t kLiMaxCmpRatio = 128;  // cmp_ratio in [1, 128] (CANN's LightningIndexerV2 range)

// Keys [0, result) are visible to row `row` (0-based within its batch); 0 <= result <= act_s2.
AOP_LI_RULE int64_t LiVisibleKeys(int64_t sparse_mode, int64_t act_s1, int64_t act_s2, int64_t row,
                                  int64_t cmp_ratio, int64_t cmp_residual) {
  if (sparse_mode == 0) return act_s2;
  const int64_t end = act_s2 * cmp_ratio + cmp_residual - act_s1 + row + 1;  // t + 1
  const int64_t visible = end > 0 ? end / cmp_ratio : 0;                      // floor for end >= 0
  return visible < act_s2 ? visible : act_s2;
}

// A batch's cmp_residual_k entry is valid iff it lies in [0, cmp_ratio).
AOP_LI_RULE bool LiResidualValid(int64_t cmp_residual, int64_t cmp_ratio) {
  return cmp_residual >= 0 && cmp_residual < cmp_ratio;
}
