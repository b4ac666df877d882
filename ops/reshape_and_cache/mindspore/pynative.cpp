// PyNative: validate on the calling thread, run the CPU kernel in a PyBoost device task.
//
// Why this shape (MindSpore 2.10, see DESIGN.md "MindSpore adapter facts"):
// - PyboostRunner::Call<0> queues `enqueue` on MindSpore's frontend queue behind every op
//   already issued; `enqueue` queues a PyBoostDeviceTask on the device queue, where MindSpore's
//   CPU ops run their kernels. The write is therefore ordered with built-in ops both ways. The
//   documented LaunchKernel / ms::DispatchKernel pattern runs the kernel one queue later, and a
//   following built-in op was seen reading the cache before the write.
// - An exception thrown inside queued work surfaces late or only in a log, so everything is
//   checked here first, on the Python thread: host validate() on shapes, dtypes and strides,
//   then host check_slots() on slot_mapping's data once every earlier op has produced it.
#include "pynative.h"

#include <memory>
#include <optional>
#include <string>

#include "ms_extension/api.h"
#include "include/runtime/pipeline/pipeline.h"

#include "host/reshape_and_cache.h"
#include "ascend_ops/mindspore_view.hpp"

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

  Args args(bool meta) const {
    auto view = [meta](const ms::Tensor& t, Access access, const char* name) {
      return meta ? ms_adapter::to_aop_meta(t, access, kOp, name) : ms_adapter::to_aop_tensor(t, access, kOp, name);
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

// This build has the CPU backend only. On device_target "Ascend" the NPU launch (host/
// npu_launch.cpp, built where CANN is found) belongs here; until it is wired in, refuse rather
// than hand device pointers to the CPU kernel.
void require_cpu(const ms::Tensor& t, const char* arg) {
  const auto target = mindspore::DeviceManagerConf::GetInstance()->device_type();
  const auto& address = t.tensor()->device_address();
  const auto where = address != nullptr ? address->GetDeviceType() : target;
  if (target != mindspore::device::DeviceType::kCPU || where != mindspore::device::DeviceType::kCPU) {
    throw aop::Error(AOP_RUNTIME_ERROR,
                     std::string(kOp) + ": " + arg + " is on " + mindspore::device::GetDeviceNameByType(where) +
                         " (device_target " + mindspore::device::GetDeviceNameByType(target) +
                         "), but this build of ascend-op-reshape-and-cache has no NPU backend for "
                         "MindSpore: it runs on device_target CPU only (rebuild where CANN is installed)");
  }
}

// slot_mapping's values, for check_slots() on this thread: wait until every op issued before
// this call (one of them may produce or modify slot_mapping) has run. The GIL is released while
// waiting: queued work may need it. An error of earlier queued work is raised here.
aop_tensor readable_slots(const ms::Tensor& slot_mapping) {
  {
    py::gil_scoped_release no_gil;
    mindspore::runtime::Pipeline::Get().WaitForward();
  }
  return ms_adapter::to_aop_tensor(slot_mapping, Access::kRead, kOp, "slot_mapping");
}

// Runs on MindSpore's frontend queue, in program order: queues the CPU kernel as a device task.
void enqueue(const Call& call) {
  if (call.value) {
    ms::TensorToDevice(call.key, *call.value, call.key_cache, *call.value_cache, call.slot_mapping);
  } else {
    ms::TensorToDevice(call.key, call.key_cache, call.slot_mapping);
  }
  mindspore::kernel::pyboost::PyBoostUtils::DispatchRun(
      std::make_shared<mindspore::runtime::PyBoostDeviceTask>([call]() {
        // Everything was checked on the Python thread; run_cpu checks again (cheap) and writes
        // nothing if anything changed since. Its exception then surfaces at MindSpore's next
        // synchronisation point.
        run_cpu(call.args(false));
      }));
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
    Args args = validated(call.args(true));  // canonical: check_slots needs the validated form
    require_cpu(key, "key");
    if (value) require_cpu(*value, "value");
    require_cpu(key_cache, "key_cache");
    if (value_cache) require_cpu(*value_cache, "value_cache");
    require_cpu(slot_mapping, "slot_mapping");
    args.slot_mapping = readable_slots(slot_mapping);
    check_slots(args);
  });
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
