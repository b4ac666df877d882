// PyNative: validate on the calling thread, run the kernel in a PyBoost device task: the CPU
// kernel on device_target CPU; on Ascend (builds with AOP_MS_ASCEND) the AscendC kernel through
// run_npu on MindSpore's current stream (ascend_ops/mindspore_npu.hpp; not run on NPU).
//
// Why this shape (MindSpore 2.10, see DESIGN.md "MindSpore adapter facts"):
// - PyboostRunner::Call<0> queues `enqueue` on MindSpore's frontend queue behind every op
//   already issued; `enqueue` queues a PyBoostDeviceTask on the device queue, where MindSpore's
//   ops run (CPU) or launch (Ascend) their kernels. The write is therefore ordered with built-in ops both ways. The
//   documented LaunchKernel / ms::DispatchKernel pattern runs the kernel one queue later, and a
//   following built-in op was seen reading the cache before the write.
// - Shapes, dtypes and strides are checked here, on the Python thread (host validate()). The
//   slot values are checked in the device task (run_cpu's check_slots(), before it writes),
//   once every earlier op has produced them, so a call never waits for MindSpore's queue. A bad
//   slot is raised as IndexError at MindSpore's next synchronisation, or by
//   ascend_ops.common.check_errors(), caches untouched (ascend_ops/mindspore_task.hpp).
#include "pynative.h"

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "ms_extension/api.h"

#include "host/reshape_and_cache.h"
#include "ascend_ops/mindspore_task.hpp"
#include "ascend_ops/mindspore_view.hpp"
#ifdef AOP_MS_ASCEND
#include "ascend_ops/mindspore_npu.hpp"
#endif

namespace aop::reshape_and_cache::ms_pynative {
namespace {

namespace py = pybind11;
using ms_adapter::Access;

constexpr const char* kOp = "reshape_and_cache";

// Tensors, then attributes, of one call. value / value_cache absent: a key-only cache.
struct Call {
  ms::Tensor key, key_cache, slot_mapping;
  std::optional<ms::Tensor> value, value_cache;
  int64_t cache_mode = 0;
  int64_t head_num = 0;

  // Views on `device`: META (shapes only, the calling thread), CPU or NPU (the device task).
  Args args(aop_device device) const {
    auto view = [device](const ms::Tensor& t, Access access, const char* name) {
      return ms_adapter::to_aop_view(t, access, device, kOp, name);
    };
    Args a{view(key, Access::kRead, "key"), value ? view(*value, Access::kRead, "value") : aop_tensor{},
           view(key_cache, Access::kWrite, "key_cache"),
           value_cache ? view(*value_cache, Access::kWrite, "value_cache") : aop_tensor{},
           view(slot_mapping, Access::kRead, "slot_mapping")};
    a.has_value = value.has_value();
    a.has_value_cache = value_cache.has_value();
    a.cache_mode = cache_mode == static_cast<int32_t>(cache_mode) ? static_cast<int32_t>(cache_mode) : -1;
    a.head_num = head_num;
    return a;
  }
};

constexpr aop_device kMeta{AOP_DEVICE_META, 0};
constexpr aop_device kCpu{AOP_DEVICE_CPU, 0};

// The device task's work: the CPU kernel, or on Ascend (AOP_MS_ASCEND builds) the AscendC
// kernel on MindSpore's stream. Both check the slots before writing; an error is raised at
// MindSpore's next synchronisation (mindspore_task.hpp).
std::function<void()> device_work(const Call& call) {
#ifdef AOP_MS_ASCEND
  if (ms_adapter::on_ascend()) {
    return [call, target = ms_adapter::capture()]() {
      ms_adapter::run_in_task([&] {
        ms_adapter::Workspace workspace(target);
        const NpuContext ctx = ms_adapter::npu_context(target, workspace);
        run_npu(call.args(aop_device{AOP_DEVICE_NPU, ctx.device}), ctx);
      });
    };
  }
#endif
  return [call]() { ms_adapter::run_in_task([&] { run_cpu(call.args(kCpu)); }); };
}

// Runs on MindSpore's frontend queue, in program order: queues the kernel as a device task.
void enqueue(const Call& call) {
  if (call.value) {
    ms::TensorToDevice(call.key, *call.value, call.key_cache, *call.value_cache, call.slot_mapping);
  } else {
    ms::TensorToDevice(call.key, call.key_cache, call.slot_mapping);
  }
  mindspore::kernel::pyboost::PyBoostUtils::DispatchRun(
      std::make_shared<mindspore::runtime::PyBoostDeviceTask>(device_work(call)));
}

}  // namespace

py::object reshape_and_cache(const ms::Tensor& key, const std::optional<ms::Tensor>& value,
                             const ms::Tensor& key_cache, const std::optional<ms::Tensor>& value_cache,
                             const ms::Tensor& slot_mapping, int64_t cache_mode, int64_t head_num) {
  // Outputs of earlier ops arrive as stub nodes: get their shapes now (data may still be pending).
  ms::inner::ConvertStubNodeToTensor(key, key_cache, slot_mapping);
  if (value) ms::inner::ConvertStubNodeToTensor(*value);
  if (value_cache) ms::inner::ConvertStubNodeToTensor(*value_cache);
  const Call call{key, key_cache, slot_mapping, value, value_cache, cache_mode, head_num};
  ms_adapter::call_host([&] {
    validate(call.args(kMeta));
    constexpr const char* kPackage = "ascend-op-reshape-and-cache";
    ms_adapter::require_backend(key, kOp, "key", kPackage);
    if (value) ms_adapter::require_backend(*value, kOp, "value", kPackage);
    ms_adapter::require_backend(key_cache, kOp, "key_cache", kPackage);
    if (value_cache) ms_adapter::require_backend(*value_cache, kOp, "value_cache", kPackage);
    ms_adapter::require_backend(slot_mapping, kOp, "slot_mapping", kPackage);
  });
  ms_adapter::watch_queue();
  // Only tensors go through Call (it converts stub nodes); the attributes ride in the lambda.
  if (value) {
    return ms::pynative::PyboostRunner::Call<0>(
        std::string(kOp),
        [cache_mode, head_num](const ms::Tensor& k, const ms::Tensor& v, const ms::Tensor& kc, const ms::Tensor& vc,
                               const ms::Tensor& s) { enqueue(Call{k, kc, s, v, vc, cache_mode, head_num}); },
        key, *value, key_cache, *value_cache, slot_mapping);
  }
  return ms::pynative::PyboostRunner::Call<0>(
      std::string(kOp),
      [cache_mode, head_num](const ms::Tensor& k, const ms::Tensor& kc, const ms::Tensor& s) {
        enqueue(Call{k, kc, s, std::nullopt, std::nullopt, cache_mode, head_num});
      },
      key, key_cache, slot_mapping);
}

}  // namespace aop::reshape_and_cache::ms_pynative
