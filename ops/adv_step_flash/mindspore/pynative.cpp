// PyNative: validate on the calling thread, run the kernel in a PyBoost device task: the CPU
// step on device_target CPU; on Ascend (builds with AOP_MS_ASCEND) the AscendC kernel through
// run_npu on MindSpore's current stream (ascend_ops/mindspore_npu.hpp; not run on NPU).
//
// Why this shape (MindSpore 2.10, see DESIGN.md "MindSpore adapter facts"):
// - PyboostRunner::Call<0> queues `enqueue` on MindSpore's frontend queue behind every op
//   already issued; `enqueue` queues a PyBoostDeviceTask on the device queue, where MindSpore's
//   CPU ops run their kernels. The four writes are therefore ordered with built-in ops both
//   ways (the documented LaunchKernel / ms::DispatchKernel pattern is not: a following built-in
//   op was seen reading before the write).
// - Shapes, dtypes and strides are checked here, on the Python thread (host validate()). The
//   data (seq_lens, sampled_token_ids, block_tables) is checked in the device task (run_cpu's
//   check_data(), before it writes), once every earlier op has produced it, so a call never
//   waits for MindSpore's queue. A bad value is raised at MindSpore's next synchronisation, or
//   by ascend_ops.common.check_errors(), outputs untouched (ascend_ops/mindspore_task.hpp).
#include "pynative.h"

#include <functional>
#include <memory>
#include <string>

#include "ms_extension/api.h"

#include "host/adv_step_flash.h"
#include "ascend_ops/mindspore_task.hpp"
#include "ascend_ops/mindspore_view.hpp"
#ifdef AOP_MS_ASCEND
#include "ascend_ops/mindspore_npu.hpp"
#endif

namespace aop::adv_step_flash::ms_pynative {
namespace {

namespace py = pybind11;
using ms_adapter::Access;

constexpr const char* kOp = "advance_step_flashattn";

struct Tensors {
  ms::Tensor input_tokens, sampled_token_ids, input_positions, seq_lens, slot_mapping, block_tables;
};

// Views on `device`: META (shapes, dtypes and strides only: what can be checked on the calling
// thread before the inputs' producers have run), CPU or NPU (inside the device task only).
Args make_args(int64_t num_seqs, int64_t num_queries, int64_t block_size, const Tensors& t, aop_device device) {
  auto view = [device](const ms::Tensor& tensor, Access access, const char* name) {
    return ms_adapter::to_aop_view(tensor, access, device, kOp, name);
  };
  return Args{num_seqs,
              num_queries,
              block_size,
              view(t.input_tokens, Access::kWrite, "input_tokens"),
              view(t.sampled_token_ids, Access::kRead, "sampled_token_ids"),
              view(t.input_positions, Access::kWrite, "input_positions"),
              view(t.seq_lens, Access::kWrite, "seq_lens"),
              view(t.slot_mapping, Access::kWrite, "slot_mapping"),
              view(t.block_tables, Access::kRead, "block_tables")};
}

// The device task's work: the CPU step, or on Ascend (AOP_MS_ASCEND builds) the AscendC kernel
// on MindSpore's stream. Both check the data before writing; an error is raised at MindSpore's
// next synchronisation (mindspore_task.hpp).
std::function<void()> device_work(int64_t num_seqs, int64_t num_queries, int64_t block_size, const Tensors& t) {
#ifdef AOP_MS_ASCEND
  if (ms_adapter::on_ascend()) {
    return [num_seqs, num_queries, block_size, t, target = ms_adapter::capture()]() {
      ms_adapter::run_in_task([&] {
        ms_adapter::Workspace workspace(target);
        const NpuContext ctx = ms_adapter::npu_context(target, workspace);
        run_npu(make_args(num_seqs, num_queries, block_size, t, aop_device{AOP_DEVICE_NPU, ctx.device}), ctx);
      });
    };
  }
#endif
  return [num_seqs, num_queries, block_size, t]() {
    ms_adapter::run_in_task(
        [&] { run_cpu(make_args(num_seqs, num_queries, block_size, t, aop_device{AOP_DEVICE_CPU, 0})); });
  };
}

// Runs on MindSpore's frontend queue, in program order.
void enqueue(int64_t num_seqs, int64_t num_queries, int64_t block_size, const ms::Tensor& input_tokens,
             const ms::Tensor& sampled_token_ids, const ms::Tensor& input_positions, const ms::Tensor& seq_lens,
             const ms::Tensor& slot_mapping, const ms::Tensor& block_tables) {
  ms::TensorToDevice(input_tokens, sampled_token_ids, input_positions, seq_lens, slot_mapping, block_tables);
  const Tensors t{input_tokens, sampled_token_ids, input_positions, seq_lens, slot_mapping, block_tables};
  mindspore::kernel::pyboost::PyBoostUtils::DispatchRun(std::make_shared<mindspore::runtime::PyBoostDeviceTask>(
      device_work(num_seqs, num_queries, block_size, t)));
}

}  // namespace

py::object advance_step_flashattn(int64_t num_seqs, int64_t num_queries, int64_t block_size,
                                  const ms::Tensor& input_tokens, const ms::Tensor& sampled_token_ids,
                                  const ms::Tensor& input_positions, const ms::Tensor& seq_lens,
                                  const ms::Tensor& slot_mapping, const ms::Tensor& block_tables) {
  // Outputs of earlier ops arrive as stub nodes: get their shapes now (data may still be pending).
  ms::inner::ConvertStubNodeToTensor(input_tokens, sampled_token_ids, input_positions, seq_lens, slot_mapping,
                                     block_tables);
  const Tensors t{input_tokens, sampled_token_ids, input_positions, seq_lens, slot_mapping, block_tables};
  ms_adapter::call_host([&] {
    validate(make_args(num_seqs, num_queries, block_size, t, aop_device{AOP_DEVICE_META, 0}));
    constexpr const char* kPackage = "ascend-op-adv-step-flash";
    ms_adapter::require_backend(input_tokens, kOp, "input_tokens", kPackage);
    ms_adapter::require_backend(sampled_token_ids, kOp, "sampled_token_ids", kPackage);
    ms_adapter::require_backend(input_positions, kOp, "input_positions", kPackage);
    ms_adapter::require_backend(seq_lens, kOp, "seq_lens", kPackage);
    ms_adapter::require_backend(slot_mapping, kOp, "slot_mapping", kPackage);
    ms_adapter::require_backend(block_tables, kOp, "block_tables", kPackage);
  });
  ms_adapter::watch_queue();
  return ms::pynative::PyboostRunner::Call<0>(std::string(kOp), enqueue, num_seqs, num_queries, block_size,
                                              input_tokens, sampled_token_ids, input_positions, seq_lens,
                                              slot_mapping, block_tables);
}

}  // namespace aop::adv_step_flash::ms_pynative
