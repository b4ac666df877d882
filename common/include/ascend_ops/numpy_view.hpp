// NumPy arrays -> aop_tensor, for the framework-free `_core` module of every op (pybind11).
// bfloat16 is ml_dtypes.bfloat16 (NumPy has none of its own; the dtype JAX and ONNX use), or, as
// before ml_dtypes, uint16 bit patterns with dtype="bfloat16".
#pragma once
#include "ascend_ops/config.hpp"
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <string>

#include "ascend_ops/error.hpp"
#include "ascend_ops/py_error.hpp"
#include "ascend_ops/tensor.h"

AOP_NAMESPACE_BEGIN

inline aop_dtype numpy_dtype(const pybind11::array& a, const char* op, const char* name,
                             const std::string& as) {
  const char kind = a.dtype().kind();
  const auto size = a.itemsize();
  if (!a.dtype().attr("isnative").cast<bool>()) {  // e.g. '>i8': same kind and size, other bytes
    throw Error(AOP_TYPE_ERROR, std::string(op) + ": " + name + " should be in the machine's byte order, got " +
                                    std::string(pybind11::str(a.dtype().attr("str"))) +
                                    " (convert with a.astype(a.dtype.newbyteorder('=')))");
  }
  // ml_dtypes.bfloat16: a user-defined dtype (kind 'V') named "bfloat16"; ml_dtypes is not imported.
  if (kind == 'V' && size == 2 && std::string(pybind11::str(a.dtype().attr("name"))) == "bfloat16") {
    return AOP_DTYPE_BFLOAT16;
  }
  if (!as.empty()) {
    if (as == "bfloat16" && kind == 'u' && size == 2) return AOP_DTYPE_BFLOAT16;
    throw Error(AOP_TYPE_ERROR, std::string(op) + ": " + name + " can be read as " + as +
                                    " only from uint16 bit patterns, got " +
                                    std::string(pybind11::str(a.dtype())));
  }
  if (kind == 'f' && size == 2) return AOP_DTYPE_FLOAT16;
  if (kind == 'f' && size == 4) return AOP_DTYPE_FLOAT32;
  if (kind == 'f' && size == 8) return AOP_DTYPE_FLOAT64;
  if (kind == 'i' && size == 1) return AOP_DTYPE_INT8;
  if (kind == 'i' && size == 2) return AOP_DTYPE_INT16;
  if (kind == 'i' && size == 4) return AOP_DTYPE_INT32;
  if (kind == 'i' && size == 8) return AOP_DTYPE_INT64;
  if (kind == 'u' && size == 1) return AOP_DTYPE_UINT8;
  if (kind == 'b' && size == 1) return AOP_DTYPE_BOOL;
  throw Error(AOP_TYPE_ERROR, std::string(op) + ": " + name + " has a dtype no op supports: " +
                                  std::string(pybind11::str(a.dtype())));
}

// A view of `a` (no copy). `writable` arrays must be writeable NumPy arrays. Strides must be
// whole elements.
inline aop_tensor numpy_view(const pybind11::array& a, const char* op, const char* name,
                             bool writable, const std::string& as_dtype = "") {
  if (a.ndim() > AOP_MAX_DIMS) {
    throw Error(AOP_VALUE_ERROR, std::string(op) + ": " + name + " has " + std::to_string(a.ndim()) +
                                     " dimensions, at most " + std::to_string(AOP_MAX_DIMS) + " are supported");
  }
  if (writable && !a.writeable()) {
    throw Error(AOP_VALUE_ERROR, std::string(op) + ": " + name + " is written in place but is read-only");
  }
  aop_tensor t{};
  t.dtype = numpy_dtype(a, op, name, as_dtype);
  t.data = const_cast<void*>(a.data());
  t.ndim = static_cast<int32_t>(a.ndim());
  t.device = aop_device{AOP_DEVICE_CPU, 0};
  const auto item = a.itemsize();
  for (int i = 0; i < t.ndim; ++i) {
    t.shape[i] = a.shape(i);
    if (a.strides(i) % item != 0) {
      throw Error(AOP_VALUE_ERROR, std::string(op) + ": " + name + " has a stride of " +
                                       std::to_string(a.strides(i)) + " bytes, not a whole number of elements");
    }
    t.strides[i] = a.strides(i) / item;
  }
  return t;
}

AOP_NAMESPACE_END
