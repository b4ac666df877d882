// torch::Tensor -> aop_tensor, and aop::Error -> the c10 error Python shows as ValueError /
// TypeError / IndexError. Header-only, for the torch adapter of every op (cpu, meta, npu
// impls); compiled with torch's C++ ABI inside the op's _torch module.
//
// Translation only: the checks of an op live in its host/ (validate, ...). This file
// refuses only what the host cannot be told about: a torch dtype with no aop_dtype, a device
// that is not cpu / npu (PrivateUse1) / meta, a non-strided layout, a lazy negation bit, more
// than AOP_MAX_DIMS dims.
#pragma once
#include <optional>
#include <string>

#include <ATen/Parallel.h>
#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>
#include <c10/core/ScalarType.h>
#include <c10/util/Exception.h>

#include "ascend_ops/error.hpp"
#include "ascend_ops/parallel.h"
#include "ascend_ops/tensor.h"
#include "ascend_ops/config.hpp"

AOP_NAMESPACE_BEGIN
namespace torch_adapter {

// What the op does with a tensor's memory: a read-only view never un-shares a copy-on-write
// tensor; a written one gets its own storage first.
enum class Access { kRead, kWrite };

// torch dtype -> aop_dtype. TypeError "<op>: <arg> has dtype torch.<name>, which ascend_ops
// cannot describe" for a dtype with no aop_dtype (complex, float8, quantized, ...): never a
// default.
inline aop_dtype to_aop_dtype(c10::ScalarType dtype, const char* op, const char* arg);

// torch device -> aop_device: cpu, PrivateUse1 (the NPU under torch_npu) and meta. ValueError
// naming the device for anything else.
inline aop_device to_aop_device(const c10::Device& device, const char* op, const char* arg);

// A view of a strided tensor with concrete sizes (eager CPU / NPU tensors): data pointer with
// the storage offset applied (nullptr for meta tensors), sizes, strides in elements, dtype,
// device. Reads no data.
inline aop_tensor to_aop_tensor(const at::Tensor& t, Access access, const char* op, const char* arg);

// The same for tensors whose sizes may be symbolic (Meta / FakeTensor during torch.compile):
// std::nullopt as soon as one size or stride is symbolic, so nothing is specialised (no
// guard is installed). data is nullptr; never reads data.
inline std::optional<aop_tensor> to_static_aop_tensor(const at::Tensor& t, const char* op, const char* arg);

// Rethrows a host error as the c10 error of the same Python class, with the host's message:
// AOP_VALUE_ERROR -> c10::ValueError, AOP_TYPE_ERROR -> c10::TypeError, AOP_INDEX_ERROR ->
// c10::IndexError, AOP_MEMORY_ERROR -> c10::OutOfMemoryError, anything else -> c10::Error
// (RuntimeError).
[[noreturn]] inline void rethrow_as_torch(const aop::Error& error);

// While alive, the CPU kernels' parallel_for on this thread runs on torch's intra-op pool
// (at::parallel_for, torch.get_num_threads() threads) unless ASCEND_OPS_NUM_THREADS or
// aop_set_num_threads chose a count: one pool of spinning threads instead of two competing.
class OnTorchThreads {
 public:
  OnTorchThreads() { aop_set_thread_runner(&run, nullptr, at::get_num_threads()); }
  ~OnTorchThreads() { aop_set_thread_runner(nullptr, nullptr, 0); }
  OnTorchThreads(const OnTorchThreads&) = delete;
  OnTorchThreads& operator=(const OnTorchThreads&) = delete;

 private:
  static void run(void*, int64_t n, int64_t grain, aop_range_fn fn, void* ctx) {
    at::parallel_for(0, n, grain, [&](int64_t begin, int64_t end) { fn(ctx, begin, end); });
  }
};

// Runs a host call on torch's threads; an aop::Error it throws crosses into torch as
// rethrow_as_torch says.
template <class F>
void call_host(F&& host_call) {
  const OnTorchThreads on_torch_threads;
  try {
    host_call();
  } catch (const aop::Error& error) {
    rethrow_as_torch(error);
  }
}

// ---- definitions ----

namespace detail {

inline std::string torch_dtype_name(c10::ScalarType dtype) {
  return "torch." + std::string(c10::getDtypeNames(dtype).first);
}

inline std::string prefix(const char* op, const char* arg) { return std::string(op) + ": " + arg; }

// What torch knows and the host cannot be told: the layout, a lazy negation, the rank limit.
inline void check_translatable(const at::Tensor& t, const char* op, const char* arg) {
  if (t.layout() != c10::kStrided) {
    C10_THROW_ERROR(ValueError, detail::prefix(op, arg) + " should be a dense (strided) tensor but has layout " +
                                    c10::str(t.layout()));
  }
  if (t.is_neg()) {
    C10_THROW_ERROR(ValueError, detail::prefix(op, arg) + " has a lazy negation bit (a _neg_view); call "
                                                  ".resolve_neg() on it first");
  }
  if (t.dim() > AOP_MAX_DIMS) {
    C10_THROW_ERROR(ValueError, detail::prefix(op, arg) + " has " + std::to_string(t.dim()) +
                                    " dimensions; ascend_ops tensors have at most " +
                                    std::to_string(AOP_MAX_DIMS));
  }
}

inline aop_tensor header(const at::Tensor& t, const char* op, const char* arg) {
  detail::check_translatable(t, op, arg);
  aop_tensor view{};
  view.data = nullptr;
  view.ndim = static_cast<int32_t>(t.dim());
  view.dtype = to_aop_dtype(t.scalar_type(), op, arg);
  view.device = to_aop_device(t.device(), op, arg);
  return view;
}

}  // namespace detail

inline aop_dtype to_aop_dtype(c10::ScalarType dtype, const char* op, const char* arg) {
  switch (dtype) {
    case c10::ScalarType::Half: return AOP_DTYPE_FLOAT16;
    case c10::ScalarType::BFloat16: return AOP_DTYPE_BFLOAT16;
    case c10::ScalarType::Float: return AOP_DTYPE_FLOAT32;
    case c10::ScalarType::Double: return AOP_DTYPE_FLOAT64;
    case c10::ScalarType::Char: return AOP_DTYPE_INT8;
    case c10::ScalarType::Short: return AOP_DTYPE_INT16;
    case c10::ScalarType::Int: return AOP_DTYPE_INT32;
    case c10::ScalarType::Long: return AOP_DTYPE_INT64;
    case c10::ScalarType::Byte: return AOP_DTYPE_UINT8;
    case c10::ScalarType::Bool: return AOP_DTYPE_BOOL;
    default:
      C10_THROW_ERROR(TypeError, detail::prefix(op, arg) + " has dtype " + detail::torch_dtype_name(dtype) +
                                     ", which ascend_ops cannot describe (known: torch.float16, "
                                     "torch.bfloat16, torch.float32, torch.float64, torch.int8, "
                                     "torch.int16, torch.int32, torch.int64, torch.uint8, torch.bool)");
  }
}

inline aop_device to_aop_device(const c10::Device& device, const char* op, const char* arg) {
  switch (device.type()) {
    case c10::DeviceType::CPU: return aop_device{AOP_DEVICE_CPU, 0};
    case c10::DeviceType::PrivateUse1:
      return aop_device{AOP_DEVICE_NPU, device.has_index() ? device.index() : 0};
    case c10::DeviceType::Meta: return aop_device{AOP_DEVICE_META, 0};
    default:
      C10_THROW_ERROR(ValueError, detail::prefix(op, arg) + " is on device " + device.str() +
                                      "; ascend_ops runs on cpu, npu (torch_npu) or meta tensors");
  }
}

inline aop_tensor to_aop_tensor(const at::Tensor& t, Access access, const char* op, const char* arg) {
  aop_tensor view = detail::header(t, op, arg);
  const c10::IntArrayRef sizes = t.sizes(), strides = t.strides();
  for (int32_t i = 0; i < view.ndim; ++i) {
    view.shape[i] = sizes[i];
    view.strides[i] = strides[i];
  }
  if (view.device.type != AOP_DEVICE_META) {
    view.data = access == Access::kWrite ? t.mutable_data_ptr() : const_cast<void*>(t.const_data_ptr());
  }
  return view;
}

inline std::optional<aop_tensor> to_static_aop_tensor(const at::Tensor& t, const char* op, const char* arg) {
  aop_tensor view = detail::header(t, op, arg);
  const c10::SymIntArrayRef sizes = t.sym_sizes(), strides = t.sym_strides();
  for (int32_t i = 0; i < view.ndim; ++i) {
    const std::optional<int64_t> size = sizes[i].maybe_as_int();
    const std::optional<int64_t> stride = strides[i].maybe_as_int();
    if (!size || !stride) return std::nullopt;  // symbolic: reading it would add a guard
    view.shape[i] = *size;
    view.strides[i] = *stride;
  }
  return view;
}

[[noreturn]] inline void rethrow_as_torch(const aop::Error& error) {
  const std::string message = error.what();
  switch (error.status()) {
    case AOP_VALUE_ERROR: C10_THROW_ERROR(ValueError, message);
    case AOP_TYPE_ERROR: C10_THROW_ERROR(TypeError, message);
    case AOP_INDEX_ERROR: C10_THROW_ERROR(IndexError, message);
    case AOP_MEMORY_ERROR: C10_THROW_ERROR(OutOfMemoryError, message);
    default: C10_THROW_ERROR(Error, message);
  }
}

}  // namespace torch_adapter
AOP_NAMESPACE_END
