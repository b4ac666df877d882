// ms::Tensor -> aop_tensor, and aop::Error -> the Python exception of the same class.
// Header-only, for the PyNative and Graph-mode entries of every op's MindSpore adapter (the
// twin of torch_view.hpp); compiled with C++ ABI 0 inside the op's _ms module.
//
// Translation only: the checks of an op live in its host/. This file
// refuses only what the host cannot be told about: a MindSpore dtype with no aop_dtype, more
// than AOP_MAX_DIMS dimensions, and an in-place target that is not contiguous (MindSpore would
// hand a kernel a contiguous copy and drop the write). Every refusal is an aop::Error, like the
// host's, so it can be thrown on any thread; rethrow_as_python() turns it into Python's.
#pragma once
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "include/pynative/utils/pyboost/custom/tensor.h"  // ms::Tensor (light; ms_extension/api.h is not)
#include "ir/dtype.h"                         // TypeIdToString
#include "device_address/device_address.h"  // where a tensor lives
#include "ir/tensor.h"                         // its device address
#include "utils/device_manager_conf.h"        // device_target
#include "pybind11/pybind11.h"  // MindSpore's bundled copy

#include "ascend_ops/error.hpp"
#include "ascend_ops/tensor.h"
#include "ascend_ops/config.hpp"

AOP_NAMESPACE_BEGIN
namespace ms_adapter {

// What the op does with a tensor's memory. A written tensor must be contiguous (see above).
enum class Access { kRead, kWrite };

// MindSpore dtype -> aop_dtype. aop::Error (TypeError) "<op>: <arg> has dtype <name>, which
// ascend_ops cannot describe" for a dtype with no aop_dtype (complex, float8, ...): never a default.
inline aop_dtype to_aop_dtype(mindspore::TypeId dtype, const char* op, const char* arg);

// The dtype name a Graph-mode (aot) kernel receives ("float16", "bfloat16", ...) ->
// aop_dtype; TypeError as above for an unknown name.
inline aop_dtype aot_dtype(const char* name, const char* op, const char* arg);

// Shape, strides (in elements), dtype of a materialised tensor, with no data pointer and
// device AOP_DEVICE_META: what host validate() needs on the calling thread, where the data of
// an earlier op's output may not exist yet. Call ConvertStubNodeToTensor() first.
inline aop_tensor to_aop_meta(const ms::Tensor& t, Access access, const char* op, const char* arg);

// The same with the data pointer (storage offset applied) on the CPU: only inside the queued
// device task, once every earlier op has produced its data.
inline aop_tensor to_aop_tensor(const ms::Tensor& t, Access access, const char* op, const char* arg);

// to_aop_meta for device AOP_DEVICE_META, else the data pointer (the device address on an NPU)
// on `device`: one entry for adapters that build the same arguments for every placement.
inline aop_tensor to_aop_view(const ms::Tensor& t, Access access, aop_device device, const char* op,
                              const char* arg);

// Refuses a tensor the build cannot run on: MindSpore's device_target must be CPU, or Ascend
// in a build with the MindSpore NPU path (AOP_MS_ASCEND), and the tensor must live there.
// aop::Error (RuntimeError) naming the op, the argument, both devices and `package`.
inline void require_backend(const ms::Tensor& t, const char* op, const char* arg, const char* package);

// A contiguous tensor from an aot kernel's arguments (Graph-mode tensors are contiguous).
// `data` may be nullptr with device AOP_DEVICE_META for shape-only validation.
inline aop_tensor aot_tensor(void* data, int ndim, const int64_t* shape, aop_dtype dtype,
                      aop_device device, const char* op, const char* arg);

// Rethrows a host error as the Python exception of its class, with the host's message:
// AOP_VALUE_ERROR -> ValueError, AOP_TYPE_ERROR -> TypeError, AOP_INDEX_ERROR -> IndexError,
// AOP_MEMORY_ERROR -> MemoryError, anything else -> RuntimeError. Needs the GIL.
[[noreturn]] inline void rethrow_as_python(const aop::Error& error);

// Runs a host call on the Python thread; an aop::Error it throws becomes rethrow_as_python's
// exception.
template <class F>
void call_host(F&& host_call) {
  try {
    host_call();
  } catch (const aop::Error& error) {
    rethrow_as_python(error);
  }
}

// ---- definitions ----

namespace detail {

inline std::string prefix(const char* op, const char* arg) { return std::string(op) + ": " + arg; }

inline std::string join(const std::vector<int64_t>& values) {
  std::string s = "[";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) s += ", ";
    s += std::to_string(values[i]);
  }
  return s + "]";
}

// Every known dtype, for the message of an unknown one.
inline constexpr const char* kKnown = "float16, bfloat16, float32, float64, int8, int16, int32, int64, uint8, bool";

[[noreturn]] inline void raise(PyObject* type, const std::string& message) {
  PyErr_SetString(type, message.c_str());
  throw pybind11::error_already_set();
}

// Shape, strides and dtype; data and device are the caller's.
inline aop_tensor header(const ms::Tensor& t, Access access, const char* op, const char* arg) {
  const ShapeVector& shape = t.shape();
  if (shape.size() > AOP_MAX_DIMS) {
    throw aop::Error(AOP_VALUE_ERROR, detail::prefix(op, arg) + " has " + std::to_string(shape.size()) +
                                          " dimensions; ascend_ops tensors have at most " +
                                          std::to_string(AOP_MAX_DIMS));
  }
  const std::vector<int64_t> strides = t.stride();
  if (access == Access::kWrite && !t.is_contiguous()) {
    // The host would refuse it too; the reason is MindSpore's: its kernels get a contiguous
    // copy of a non-contiguous input, so an in-place write would land in the copy and be lost.
    throw aop::Error(AOP_VALUE_ERROR, detail::prefix(op, arg) + " is written in place and should be contiguous, but has shape " +
                                          detail::join(shape) + " and strides " + detail::join(strides) +
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

}  // namespace detail

// The MindSpore type of an output's dtype.
inline mindspore::TypeId ms_type_of(aop_dtype dtype) {
  switch (dtype) {
    case AOP_DTYPE_FLOAT16: return mindspore::kNumberTypeFloat16;
    case AOP_DTYPE_BFLOAT16: return mindspore::kNumberTypeBFloat16;
    case AOP_DTYPE_FLOAT32: return mindspore::kNumberTypeFloat32;
    case AOP_DTYPE_FLOAT64: return mindspore::kNumberTypeFloat64;
    case AOP_DTYPE_INT8: return mindspore::kNumberTypeInt8;
    case AOP_DTYPE_INT16: return mindspore::kNumberTypeInt16;
    case AOP_DTYPE_INT32: return mindspore::kNumberTypeInt32;
    case AOP_DTYPE_INT64: return mindspore::kNumberTypeInt64;
    case AOP_DTYPE_UINT8: return mindspore::kNumberTypeUInt8;
    default: return mindspore::kNumberTypeBool;
  }
}

inline aop_dtype to_aop_dtype(mindspore::TypeId dtype, const char* op, const char* arg) {
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
      throw aop::Error(AOP_TYPE_ERROR, detail::prefix(op, arg) + " has dtype " + mindspore::TypeIdToString(dtype, true) +
                                           ", which ascend_ops cannot describe (known: " + detail::kKnown + ")");
  }
}

inline aop_dtype aot_dtype(const char* name, const char* op, const char* arg) {
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
  throw aop::Error(AOP_TYPE_ERROR, detail::prefix(op, arg) + " has dtype " + (name ? name : "(null)") +
                                       ", which ascend_ops cannot describe (known: " + detail::kKnown + ")");
}

inline aop_tensor to_aop_meta(const ms::Tensor& t, Access access, const char* op, const char* arg) {
  return detail::header(t, access, op, arg);
}

inline aop_tensor to_aop_tensor(const ms::Tensor& t, Access access, const char* op, const char* arg) {
  return to_aop_view(t, access, aop_device{AOP_DEVICE_CPU, 0}, op, arg);
}

inline aop_tensor to_aop_view(const ms::Tensor& t, Access access, aop_device device, const char* op,
                              const char* arg) {
  aop_tensor view = detail::header(t, access, op, arg);
  if (device.type == AOP_DEVICE_META) return view;
  view.device = device;
  view.data = t.GetDataPtr();  // device address + storage offset
  return view;
}

inline void require_backend(const ms::Tensor& t, const char* op, const char* arg, const char* package) {
  using mindspore::device::DeviceType;
  const DeviceType target = mindspore::DeviceManagerConf::GetInstance()->device_type();
  const auto& address = t.tensor()->device_address();
  const DeviceType where = address != nullptr ? address->GetDeviceType() : target;
#ifdef AOP_MS_ASCEND
  const bool supported = target == DeviceType::kCPU || target == DeviceType::kAscend;
  const char* builds = "device_target CPU and Ascend";
#else
  const bool supported = target == DeviceType::kCPU;
  const char* builds = "device_target CPU only (rebuild with the mindspore wheel's Ascend plugin and CANN for Ascend)";
#endif
  if (!supported || where != target) {
    throw aop::Error(AOP_RUNTIME_ERROR, detail::prefix(op, arg) + " is on " + mindspore::device::GetDeviceNameByType(where) +
                                            " (device_target " + mindspore::device::GetDeviceNameByType(target) +
                                            "), but this build of " + package + " runs on " + builds);
  }
}

inline aop_tensor aot_tensor(void* data, int ndim, const int64_t* shape, aop_dtype dtype, aop_device device,
                      const char* op, const char* arg) {
  if (ndim < 0 || ndim > AOP_MAX_DIMS) {
    throw aop::Error(AOP_VALUE_ERROR, detail::prefix(op, arg) + " has " + std::to_string(ndim) +
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

[[noreturn]] inline void rethrow_as_python(const aop::Error& error) {
  switch (error.status()) {
    case AOP_VALUE_ERROR: detail::raise(PyExc_ValueError, error.what());
    case AOP_TYPE_ERROR: detail::raise(PyExc_TypeError, error.what());
    case AOP_INDEX_ERROR: detail::raise(PyExc_IndexError, error.what());
    case AOP_MEMORY_ERROR: detail::raise(PyExc_MemoryError, error.what());
    default: detail::raise(PyExc_RuntimeError, error.what());
  }
}

}  // namespace ms_adapter
AOP_NAMESPACE_END
