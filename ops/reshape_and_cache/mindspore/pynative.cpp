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

// Shapes, dtypes and strides only (device META, no data): what can be checked before the
// inputs' producers have run.
Args meta_args(const ms::Tensor& key, const ms::Tensor& value, const ms::Tensor& key_cache,
               const ms::Tensor& value_cache, const ms::Tensor& slot_mapping) {
  return Args{ms_adapter::to_aop_meta(key, Access::kRead, kOp, "key"),
              ms_adapter::to_aop_meta(value, Access::kRead, kOp, "value"),
              ms_adapter::to_aop_meta(key_cache, Access::kWrite, kOp, "key_cache"),
              ms_adapter::to_aop_meta(value_cache, Access::kWrite, kOp, "value_cache"),
              ms_adapter::to_aop_meta(slot_mapping, Access::kRead, kOp, "slot_mapping")};
}

// The same with data pointers, on the CPU: inside the device task only.
Args cpu_args(const ms::Tensor& key, const ms::Tensor& value, const ms::Tensor& key_cache,
              const ms::Tensor& value_cache, const ms::Tensor& slot_mapping) {
  return Args{ms_adapter::to_aop_tensor(key, Access::kRead, kOp, "key"),
              ms_adapter::to_aop_tensor(value, Access::kRead, kOp, "value"),
              ms_adapter::to_aop_tensor(key_cache, Access::kWrite, kOp, "key_cache"),
              ms_adapter::to_aop_tensor(value_cache, Access::kWrite, kOp, "value_cache"),
              ms_adapter::to_aop_tensor(slot_mapping, Access::kRead, kOp, "slot_mapping")};
}

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

// Runs on MindSpore's frontend queue, in program order.
void enqueue(const ms::Tensor& key, const ms::Tensor& value, const ms::Tensor& key_cache,
             const ms::Tensor& value_cache, const ms::Tensor& slot_mapping) {
  ms::TensorToDevice(key, value, key_cache, value_cache, slot_mapping);
  mindspore::kernel::pyboost::PyBoostUtils::DispatchRun(
      std::make_shared<mindspore::runtime::PyBoostDeviceTask>([key, value, key_cache, value_cache, slot_mapping]() {
        // Everything was checked on the Python thread; run_cpu checks again (cheap) and writes
        // nothing if anything changed since. Its exception then surfaces at MindSpore's next
        // synchronisation point.
        run_cpu(cpu_args(key, value, key_cache, value_cache, slot_mapping));
      }));
}

}  // namespace

py::object reshape_and_cache(const ms::Tensor& key, const ms::Tensor& value, const ms::Tensor& key_cache,
                             const ms::Tensor& value_cache, const ms::Tensor& slot_mapping) {
  // Outputs of earlier ops arrive as stub nodes: get their shapes now (data may still be pending).
  ms::inner::ConvertStubNodeToTensor(key, value, key_cache, value_cache, slot_mapping);
  ms_adapter::call_host([&] {
    Args args = meta_args(key, value, key_cache, value_cache, slot_mapping);
    validate(args);
    require_cpu(key, "key");
    require_cpu(value, "value");
    require_cpu(key_cache, "key_cache");
    require_cpu(value_cache, "value_cache");
    require_cpu(slot_mapping, "slot_mapping");
    args.slot_mapping = readable_slots(slot_mapping);
    check_slots(args);
  });
  return ms::pynative::PyboostRunner::Call<0>(std::string(kOp), enqueue, key, value, key_cache, value_cache,
                                              slot_mapping);
}

}  // namespace aop::reshape_and_cache::ms_pynative
