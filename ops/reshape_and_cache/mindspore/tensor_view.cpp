// ms::Tensor -> aop_tensor and aop::Error -> Python exceptions (see tensor_view.h).
#include "tensor_view.h"

#include <cstring>
#include <string>
#include <vector>

#include "ir/dtype.h"  // TypeIdToString

namespace aop::ms_adapter {
namespace {

std::string prefix(const char* op, const char* arg) { return std::string(op) + ": " + arg; }

std::string join(const std::vector<int64_t>& values) {
  std::string s = "[";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) s += ", ";
    s += std::to_string(values[i]);
  }
  return s + "]";
}

// Every known dtype, for the message of an unknown one.
constexpr const char* kKnown = "float16, bfloat16, float32, float64, int8, int16, int32, int64, uint8, bool";

[[noreturn]] void raise(PyObject* type, const std::string& message) {
  PyErr_SetString(type, message.c_str());
  throw pybind11::error_already_set();
}

// Shape, strides and dtype; data and device are the caller's.
aop_tensor header(const ms::Tensor& t, Access access, const char* op, const char* arg) {
  const ShapeVector& shape = t.shape();
  if (shape.size() > AOP_MAX_DIMS) {
    throw aop::Error(AOP_VALUE_ERROR, prefix(op, arg) + " has " + std::to_string(shape.size()) +
                                          " dimensions; ascend_ops tensors have at most " +
                                          std::to_string(AOP_MAX_DIMS));
  }
  const std::vector<int64_t> strides = t.stride();
  if (access == Access::kWrite && !t.is_contiguous()) {
    // The host would refuse it too; the reason is MindSpore's: its kernels get a contiguous
    // copy of a non-contiguous input, so an in-place write would land in the copy and be lost.
    throw aop::Error(AOP_VALUE_ERROR, prefix(op, arg) + " is written in place and should be contiguous, but has shape " +
                                          join(shape) + " and strides " + join(strides) +
                                          " (MindSpore would write into a contiguous copy and drop the update)");
  }
  aop_tensor view{};
  view.data = nullptr;
  view.ndim = static_cast<int32_t>(shape.size());
  view.dtype = to_aop_dtype(t.data_type(), op, arg);
  view.device = aop_device{AOP_DEVICE_META, 0};
  for (int32_t i = 0; i < view.ndim; ++i) {
    view.shape[i] = shape[i];
    view.strides[i] = strides[i];
  }
  return view;
}

}  // namespace

aop_dtype to_aop_dtype(mindspore::TypeId dtype, const char* op, const char* arg) {
  switch (dtype) {
    case mindspore::kNumberTypeFloat16: return AOP_DTYPE_FLOAT16;
    case mindspore::kNumberTypeBFloat16: return AOP_DTYPE_BFLOAT16;
    case mindspore::kNumberTypeFloat32: return AOP_DTYPE_FLOAT32;
    case mindspore::kNumberTypeFloat64: return AOP_DTYPE_FLOAT64;
    case mindspore::kNumberTypeInt8: return AOP_DTYPE_INT8;
    case mindspore::kNumberTypeInt16: return AOP_DTYPE_INT16;
    case mindspore::kNumberTypeInt32: return AOP_DTYPE_INT32;
    case mindspore::kNumberTypeInt64: return AOP_DTYPE_INT64;
    case mindspore::kNumberTypeUInt8: return AOP_DTYPE_UINT8;
    case mindspore::kNumberTypeBool: return AOP_DTYPE_BOOL;
    default:
      throw aop::Error(AOP_TYPE_ERROR, prefix(op, arg) + " has dtype " + mindspore::TypeIdToString(dtype, true) +
                                           ", which ascend_ops cannot describe (known: " + kKnown + ")");
  }
}

aop_dtype aot_dtype(const char* name, const char* op, const char* arg) {
  struct Entry {
    const char* name;
    aop_dtype dtype;
  };
  // MindSpore's aot names (TypeIdToString(dtype, true)), plus its short aliases.
  static const Entry kTable[] = {
      {"float16", AOP_DTYPE_FLOAT16}, {"bfloat16", AOP_DTYPE_BFLOAT16}, {"float32", AOP_DTYPE_FLOAT32},
      {"float", AOP_DTYPE_FLOAT32},   {"float64", AOP_DTYPE_FLOAT64},   {"int8", AOP_DTYPE_INT8},
      {"int16", AOP_DTYPE_INT16},     {"int32", AOP_DTYPE_INT32},       {"int", AOP_DTYPE_INT32},
      {"int64", AOP_DTYPE_INT64},     {"uint8", AOP_DTYPE_UINT8},       {"bool", AOP_DTYPE_BOOL},
  };
  for (const Entry& e : kTable) {
    if (name != nullptr && std::strcmp(name, e.name) == 0) return e.dtype;
  }
  throw aop::Error(AOP_TYPE_ERROR, prefix(op, arg) + " has dtype " + (name ? name : "(null)") +
                                       ", which ascend_ops cannot describe (known: " + kKnown + ")");
}

aop_tensor to_aop_meta(const ms::Tensor& t, Access access, const char* op, const char* arg) {
  return header(t, access, op, arg);
}

aop_tensor to_aop_tensor(const ms::Tensor& t, Access access, const char* op, const char* arg) {
  aop_tensor view = header(t, access, op, arg);
  view.device = aop_device{AOP_DEVICE_CPU, 0};
  view.data = t.GetDataPtr();  // device address + storage offset
  return view;
}

aop_tensor aot_tensor(void* data, int ndim, const int64_t* shape, aop_dtype dtype, aop_device device,
                      const char* op, const char* arg) {
  if (ndim < 0 || ndim > AOP_MAX_DIMS) {
    throw aop::Error(AOP_VALUE_ERROR, prefix(op, arg) + " has " + std::to_string(ndim) +
                                          " dimensions; ascend_ops tensors have at most " +
                                          std::to_string(AOP_MAX_DIMS));
  }
  aop_tensor view{};
  view.data = data;
  view.ndim = ndim;
  view.dtype = dtype;
  view.device = device;
  int64_t stride = 1;
  for (int i = ndim - 1; i >= 0; --i) {
    view.shape[i] = shape[i];
    view.strides[i] = stride;
    stride *= shape[i] > 1 ? shape[i] : 1;
  }
  return view;
}

[[noreturn]] void rethrow_as_python(const aop::Error& error) {
  switch (error.status()) {
    case AOP_VALUE_ERROR: raise(PyExc_ValueError, error.what());
    case AOP_TYPE_ERROR: raise(PyExc_TypeError, error.what());
    case AOP_INDEX_ERROR: raise(PyExc_IndexError, error.what());
    case AOP_MEMORY_ERROR: raise(PyExc_MemoryError, error.what());
    default: raise(PyExc_RuntimeError, error.what());
  }
}

}  // namespace aop::ms_adapter
