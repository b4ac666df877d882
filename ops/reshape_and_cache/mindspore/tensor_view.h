// ms::Tensor -> aop_tensor, and aop::Error -> the Python exception of the same class. Shared
// by the PyNative and Graph-mode entries of the op (the MindSpore twin of torch/tensor_view.h).
//
// Translation only: the checks of the op live in host/ (validate, check_slots). This file
// refuses only what the host cannot be told about: a MindSpore dtype with no aop_dtype, more
// than AOP_MAX_DIMS dimensions, and an in-place target that is not contiguous (MindSpore would
// hand a kernel a contiguous copy and drop the write). Every refusal is an aop::Error, like the
// host's, so it can be thrown on any thread; rethrow_as_python() turns it into Python's.
#pragma once
#include <cstdint>
#include <string>

#include "include/pynative/utils/pyboost/custom/tensor.h"  // ms::Tensor (light; ms_extension/api.h is not)

#include "ascend_ops/error.hpp"
#include "ascend_ops/tensor.h"

namespace aop::ms_adapter {

// What the op does with a tensor's memory. A written tensor must be contiguous (see above).
enum class Access { kRead, kWrite };

// MindSpore dtype -> aop_dtype. aop::Error (TypeError) "<op>: <arg> has dtype <name>, which
// ascend_ops cannot describe" for a dtype with no aop_dtype (complex, float8, ...): never a default.
aop_dtype to_aop_dtype(mindspore::TypeId dtype, const char* op, const char* arg);

// The dtype name a Graph-mode (aot) kernel receives ("float16", "bfloat16", ...) ->
// aop_dtype; TypeError as above for an unknown name.
aop_dtype aot_dtype(const char* name, const char* op, const char* arg);

// Shape, strides (in elements), dtype of a materialised tensor, with no data pointer and
// device AOP_DEVICE_META: what host validate() needs on the calling thread, where the data of
// an earlier op's output may not exist yet. Call ConvertStubNodeToTensor() first.
aop_tensor to_aop_meta(const ms::Tensor& t, Access access, const char* op, const char* arg);

// The same with the data pointer (storage offset applied) on the CPU: only inside the queued
// device task, once every earlier op has produced its data.
aop_tensor to_aop_tensor(const ms::Tensor& t, Access access, const char* op, const char* arg);

// A contiguous tensor from an aot kernel's arguments (Graph-mode tensors are contiguous).
// `data` may be nullptr with device AOP_DEVICE_META for shape-only validation.
aop_tensor aot_tensor(void* data, int ndim, const int64_t* shape, aop_dtype dtype,
                      aop_device device, const char* op, const char* arg);

// Rethrows a host error as the Python exception of its class, with the host's message:
// AOP_VALUE_ERROR -> ValueError, AOP_TYPE_ERROR -> TypeError, AOP_INDEX_ERROR -> IndexError,
// AOP_MEMORY_ERROR -> MemoryError, anything else -> RuntimeError. Needs the GIL.
[[noreturn]] void rethrow_as_python(const aop::Error& error);

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

}  // namespace aop::ms_adapter
