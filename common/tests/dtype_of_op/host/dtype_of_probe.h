// dtype_of_probe's host interface: its Args, its checks and its CPU kernel, which copies x into
// `copy` (x's dtype, whatever it is) and writes x's element count into `count` (float32 [1]).
#pragma once
#include "ascend_ops/tensor.h"

namespace aop::dtype_of_probe {

struct Args {
  aop_tensor index;  // int32, steers nothing: the first tensor (outputs take its device, not its dtype)
  aop_tensor x;      // float16, bfloat16 or float32 [n, d], contiguous
  aop_tensor copy;   // x's dtype and shape
  aop_tensor count;  // float32 [1]
};

void check_inputs(const Args& a);
void run_cpu(const Args& a);

}  // namespace aop::dtype_of_probe
