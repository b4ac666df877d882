// torch::Tensor -> aop_tensor, and aop::Error -> the c10 error Python shows as ValueError /
// TypeError / IndexError. Shared by every torch impl file of the op (cpu, meta, npu).
//
// Translation only: the checks of the op live in host/ (validate, check_slots). This file
// refuses only what the host cannot be told about: a torch dtype with no aop_dtype, a device
// that is not cpu / npu (PrivateUse1) / meta, a non-strided layout, a lazy negation bit, more
// than AOP_MAX_DIMS dims.
#pragma once
#include <optional>

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>
#include <c10/core/ScalarType.h>

#include "ascend_ops/error.hpp"
#include "ascend_ops/tensor.h"
#include "host/reshape_and_cache.h"

namespace aop::torch_adapter {

// What the op does with a tensor's memory: a read-only view never un-shares a copy-on-write
// tensor; a written one gets its own storage first.
enum class Access { kRead, kWrite };

// torch dtype -> aop_dtype. TypeError "<op>: <arg> has dtype torch.<name>, which ascend_ops
// cannot describe" for a dtype with no aop_dtype (complex, float8, quantized, ...): never a
// default.
aop_dtype to_aop_dtype(c10::ScalarType dtype, const char* op, const char* arg);

// torch device -> aop_device: cpu, PrivateUse1 (the NPU under torch_npu) and meta. ValueError
// naming the device for anything else.
aop_device to_aop_device(const c10::Device& device, const char* op, const char* arg);

// A view of a strided tensor with concrete sizes (eager CPU / NPU tensors): data pointer with
// the storage offset applied (nullptr for meta tensors), sizes, strides in elements, dtype,
// device. Reads no data.
aop_tensor to_aop_tensor(const at::Tensor& t, Access access, const char* op, const char* arg);

// The same for tensors whose sizes may be symbolic (Meta / FakeTensor during torch.compile):
// std::nullopt as soon as one size or stride is symbolic, so nothing is specialised (no
// guard is installed). data is nullptr; never reads data.
std::optional<aop_tensor> to_static_aop_tensor(const at::Tensor& t, const char* op, const char* arg);

// Rethrows a host error as the c10 error of the same Python class, with the host's message:
// AOP_VALUE_ERROR -> c10::ValueError, AOP_TYPE_ERROR -> c10::TypeError, AOP_INDEX_ERROR ->
// c10::IndexError, AOP_MEMORY_ERROR -> c10::OutOfMemoryError, anything else -> c10::Error
// (RuntimeError).
[[noreturn]] void rethrow_as_torch(const aop::Error& error);

// Runs a host call; an aop::Error it throws crosses into torch as rethrow_as_torch says.
template <class F>
void call_host(F&& host_call) {
  try {
    host_call();
  } catch (const aop::Error& error) {
    rethrow_as_torch(error);
  }
}

// The op's host arguments from the five tensors of the schema (eager tensors, concrete sizes).
// key / value / slot_mapping are read, the caches written.
aop::reshape_and_cache::Args make_args(const at::Tensor& key,           // [T, H, Dk]
                                       const at::Tensor& value,         // [T, H, Dv]
                                       const at::Tensor& key_cache,     // [num_blocks, block_size, H, Dk]
                                       const at::Tensor& value_cache,   // [num_blocks, block_size, H, Dv]
                                       const at::Tensor& slot_mapping);  // [T']

// The same for Meta / FakeTensor inputs: std::nullopt when any size or stride is symbolic.
std::optional<aop::reshape_and_cache::Args> make_static_args(const at::Tensor& key,
                                                             const at::Tensor& value,
                                                             const at::Tensor& key_cache,
                                                             const at::Tensor& value_cache,
                                                             const at::Tensor& slot_mapping);

}  // namespace aop::torch_adapter
