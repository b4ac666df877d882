// CoreShare: the items one core (or core group) handles when `items` are split as evenly as the
// host tiling split them: `per_core` each, one more for the first `with_extra` (the tiling's
// <x>_per_core / cores_with_extra pair). Items are numbered in `step`s (1: single items).
#pragma once
#include "kernel_operator.h"

namespace aop_kernel {

struct CoreShare {
  int64_t begin;  // first item
  int64_t end;    // one past the last
};

__aicore__ inline CoreShare ShareOf(int64_t core, int64_t per_core, int64_t with_extra, int64_t step = 1) {
  CoreShare share;
  share.begin = (core * per_core + (core < with_extra ? core : with_extra)) * step;
  share.end = share.begin + (per_core + (core < with_extra ? 1 : 0)) * step;
  return share;
}

// This core's share (AscendC::GetBlockIdx()).
__aicore__ inline CoreShare ThisCoreShare(int64_t per_core, int64_t with_extra) {
  return ShareOf(AscendC::GetBlockIdx(), per_core, with_extra);
}

}  // namespace aop_kernel
