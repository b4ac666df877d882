// torch::Tensor -> aop_tensor and aop::Error -> c10 errors (see tensor_view.h).
#include "tensor_view.h"

#include <string>

#include <c10/util/Exception.h>

namespace aop::torch_adapter {
namespace {

std::string torch_dtype_name(c10::ScalarType dtype) {
  return "torch." + std::string(c10::getDtypeNames(dtype).first);
}

std::string prefix(const char* op, const char* arg) { return std::string(op) + ": " + arg; }

// What torch knows and the host cannot be told: the layout, a lazy negation, the rank limit.
void check_translatable(const at::Tensor& t, const char* op, const char* arg) {
  if (t.layout() != c10::kStrided) {
    C10_THROW_ERROR(ValueError, prefix(op, arg) + " should be a dense (strided) tensor but has layout " +
                                    c10::str(t.layout()));
  }
  if (t.is_neg()) {
    C10_THROW_ERROR(ValueError, prefix(op, arg) + " has a lazy negation bit (a _neg_view); call "
                                                  ".resolve_neg() on it first");
  }
  if (t.dim() > AOP_MAX_DIMS) {
    C10_THROW_ERROR(ValueError, prefix(op, arg) + " has " + std::to_string(t.dim()) +
                                    " dimensions; ascend_ops tensors have at most " +
                                    std::to_string(AOP_MAX_DIMS));
  }
}

aop_tensor header(const at::Tensor& t, const char* op, const char* arg) {
  check_translatable(t, op, arg);
  aop_tensor view{};
  view.data = nullptr;
  view.ndim = static_cast<int32_t>(t.dim());
  view.dtype = to_aop_dtype(t.scalar_type(), op, arg);
  view.device = to_aop_device(t.device(), op, arg);
  return view;
}

}  // namespace

aop_dtype to_aop_dtype(c10::ScalarType dtype, const char* op, const char* arg) {
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
      C10_THROW_ERROR(TypeError, prefix(op, arg) + " has dtype " + torch_dtype_name(dtype) +
                                     ", which ascend_ops cannot describe (known: torch.float16, "
                                     "torch.bfloat16, torch.float32, torch.float64, torch.int8, "
                                     "torch.int16, torch.int32, torch.int64, torch.uint8, torch.bool)");
  }
}

aop_device to_aop_device(const c10::Device& device, const char* op, const char* arg) {
  switch (device.type()) {
    case c10::DeviceType::CPU: return aop_device{AOP_DEVICE_CPU, 0};
    case c10::DeviceType::PrivateUse1:
      return aop_device{AOP_DEVICE_NPU, device.has_index() ? device.index() : 0};
    case c10::DeviceType::Meta: return aop_device{AOP_DEVICE_META, 0};
    default:
      C10_THROW_ERROR(ValueError, prefix(op, arg) + " is on device " + device.str() +
                                      "; ascend_ops runs on cpu, npu (torch_npu) or meta tensors");
  }
}

aop_tensor to_aop_tensor(const at::Tensor& t, Access access, const char* op, const char* arg) {
  aop_tensor view = header(t, op, arg);
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

std::optional<aop_tensor> to_static_aop_tensor(const at::Tensor& t, const char* op, const char* arg) {
  aop_tensor view = header(t, op, arg);
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

[[noreturn]] void rethrow_as_torch(const aop::Error& error) {
  const std::string message = error.what();
  switch (error.status()) {
    case AOP_VALUE_ERROR: C10_THROW_ERROR(ValueError, message);
    case AOP_TYPE_ERROR: C10_THROW_ERROR(TypeError, message);
    case AOP_INDEX_ERROR: C10_THROW_ERROR(IndexError, message);
    case AOP_MEMORY_ERROR: C10_THROW_ERROR(OutOfMemoryError, message);
    default: C10_THROW_ERROR(Error, message);
  }
}

namespace {
constexpr const char* kOp = "reshape_and_cache";
}  // namespace

aop::reshape_and_cache::Args make_args(const at::Tensor& key, const at::Tensor& value,
                                       const at::Tensor& key_cache, const at::Tensor& value_cache,
                                       const at::Tensor& slot_mapping) {
  return aop::reshape_and_cache::Args{
      to_aop_tensor(key, Access::kRead, kOp, "key"),
      to_aop_tensor(value, Access::kRead, kOp, "value"),
      to_aop_tensor(key_cache, Access::kWrite, kOp, "key_cache"),
      to_aop_tensor(value_cache, Access::kWrite, kOp, "value_cache"),
      to_aop_tensor(slot_mapping, Access::kRead, kOp, "slot_mapping"),
  };
}

std::optional<aop::reshape_and_cache::Args> make_static_args(const at::Tensor& key,
                                                             const at::Tensor& value,
                                                             const at::Tensor& key_cache,
                                                             const at::Tensor& value_cache,
                                                             const at::Tensor& slot_mapping) {
  // Every tensor is translated (so an unknown dtype or device is refused even when a size is
  // symbolic); the Args exist only when all of them are static.
  const std::optional<aop_tensor> views[] = {
      to_static_aop_tensor(key, kOp, "key"),
      to_static_aop_tensor(value, kOp, "value"),
      to_static_aop_tensor(key_cache, kOp, "key_cache"),
      to_static_aop_tensor(value_cache, kOp, "value_cache"),
      to_static_aop_tensor(slot_mapping, kOp, "slot_mapping"),
  };
  for (const auto& view : views) {
    if (!view) return std::nullopt;
  }
  return aop::reshape_and_cache::Args{*views[0], *views[1], *views[2], *views[3], *views[4]};
}

}  // namespace aop::torch_adapter
