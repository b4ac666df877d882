#include "host/dtype_of_probe.h"

#include <cstring>
#include <string>

#include "ascend_ops/error.hpp"
#include "ascend_ops/tensor.hpp"

namespace aop::dtype_of_probe {

void check_inputs(const Args& a) {
  const TensorView x(a.x);
  if (a.index.dtype != AOP_DTYPE_INT32) {
    throw Error(AOP_TYPE_ERROR, std::string("dtype_of_probe: index should have dtype int32 but has ") +
                                    aop_dtype_name(a.index.dtype));
  }
  if (x.dtype() != AOP_DTYPE_FLOAT16 && x.dtype() != AOP_DTYPE_BFLOAT16 && x.dtype() != AOP_DTYPE_FLOAT32) {
    throw Error(AOP_TYPE_ERROR, std::string("dtype_of_probe: x should have dtype float16, bfloat16 or float32 but has ") +
                                    aop_dtype_name(x.dtype()));
  }
  if (x.ndim() != 2 || !x.is_contiguous()) throw Error(AOP_VALUE_ERROR, "dtype_of_probe: x should be 2-D and contiguous");
}

void run_cpu(const Args& a) {
  check_inputs(a);
  const TensorView x(a.x), copy(a.copy), count(a.count);
  if (copy.dtype() != x.dtype() || copy.sizes() != x.sizes() || !copy.is_contiguous()) {
    throw Error(AOP_TYPE_ERROR, std::string("dtype_of_probe: copy should be a contiguous ") + aop_dtype_name(x.dtype()) +
                                    " " + x.shape_string() + " (x's dtype and shape) but is " +
                                    aop_dtype_name(copy.dtype()) + " " + copy.shape_string());
  }
  if (count.dtype() != AOP_DTYPE_FLOAT32 || count.numel() != 1) {
    throw Error(AOP_TYPE_ERROR, "dtype_of_probe: count should be a float32 [1]");
  }
  if (x.nbytes() > 0) std::memcpy(copy.data(), x.data(), x.nbytes());
  *static_cast<float*>(count.data()) = static_cast<float>(x.numel());
}

}  // namespace aop::dtype_of_probe
