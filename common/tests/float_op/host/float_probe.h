// float_probe's host interface: its Args and its CPU kernel, which writes the floats it received.
#pragma once
#include <optional>

#include "ascend_ops/tensor.h"

namespace aop::float_probe {

struct Args {
  aop_tensor x;  // steers nothing: the device and the first tensor every front door needs
  double scale = 0;
  double shift = 0;
  std::optional<double> bound;
  aop_tensor out;  // float64 [3]: scale, shift, bound (NaN when not given)
};

void run_cpu(const Args& a);

}  // namespace aop::float_probe
