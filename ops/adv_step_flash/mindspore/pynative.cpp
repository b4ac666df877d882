// PyNative: validate on the calling thread, run the CPU kernel in a PyBoost device task.
//
// Why this shape (MindSpore 2.10, see DESIGN.md "MindSpore adapter facts"):
// - PyboostRunner::Call<0> queues `enqueue` on MindSpore's frontend queue behind every op
//   already issued; `enqueue` queues a PyBoostDeviceTask on the device queue, where MindSpore's
//   CPU ops run their kernels. The four writes are therefore ordered with built-in ops both
//   ways (the documented LaunchKernel / ms::DispatchKernel pattern is not: a following built-in
//   op was seen reading before the write).
// - An exception thrown inside queued work surfaces late or only in a log, so everything is
//   checked here first, on the Python thread: host validate() on shapes, dtypes and strides,
//   then host check_data() on seq_lens, sampled_token_ids and block_tables once every earlier
//   op has produced them.
#include "pynative.h"

#include <memory>
#include <string>

#include "ms_extension/api.h"
#include "include/runtime/pipeline/pipeline.h"

#include "host/adv_step_flash.h"
#include "ascend_ops/mindspore_view.hpp"

namespace aop::adv_step_flash::ms_pynative {
namespace {

namespace py = pybind11;
using ms_adapter::Access;

constexpr const char* kOp = "advance_step_flashattn";

struct Tensors {
  ms::Tensor input_tokens, sampled_token_ids, input_positions, seq_lens, slot_mapping, block_tables;
};

// Shapes, dtypes and strides only (device META, no data): what can be checked before the
// inputs' producers have run.
Args meta_args(int64_t num_seqs, int64_t num_queries, int64_t block_size, const Tensors& t) {
  return Args{num_seqs,
              num_queries,
              block_size,
              ms_adapter::to_aop_meta(t.input_tokens, Access::kWrite, kOp, "input_tokens"),
              ms_adapter::to_aop_meta(t.sampled_token_ids, Access::kRead, kOp, "sampled_token_ids"),
              ms_adapter::to_aop_meta(t.input_positions, Access::kWrite, kOp, "input_positions"),
              ms_adapter::to_aop_meta(t.seq_lens, Access::kWrite, kOp, "seq_lens"),
              ms_adapter::to_aop_meta(t.slot_mapping, Access::kWrite, kOp, "slot_mapping"),
              ms_adapter::to_aop_meta(t.block_tables, Access::kRead, kOp, "block_tables")};
}

// The same with data pointers, on the CPU: inside the device task only.
Args cpu_args(int64_t num_seqs, int64_t num_queries, int64_t block_size, const Tensors& t) {
  return Args{num_seqs,
              num_queries,
              block_size,
              ms_adapter::to_aop_tensor(t.input_tokens, Access::kWrite, kOp, "input_tokens"),
              ms_adapter::to_aop_tensor(t.sampled_token_ids, Access::kRead, kOp, "sampled_token_ids"),
              ms_adapter::to_aop_tensor(t.input_positions, Access::kWrite, kOp, "input_positions"),
              ms_adapter::to_aop_tensor(t.seq_lens, Access::kWrite, kOp, "seq_lens"),
              ms_adapter::to_aop_tensor(t.slot_mapping, Access::kWrite, kOp, "slot_mapping"),
              ms_adapter::to_aop_tensor(t.block_tables, Access::kRead, kOp, "block_tables")};
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
                         "), but this build of ascend-op-adv-step-flash has no NPU backend for "
                         "MindSpore: it runs on device_target CPU only (rebuild where CANN is installed)");
  }
}

// Wait until every op issued before this call (one of them may produce or modify an input)
// has run, so the data check sees final values. The GIL is released while waiting: queued work
// may need it. An error of earlier queued work is raised here.
void wait_for_earlier_ops() {
  py::gil_scoped_release no_gil;
  mindspore::runtime::Pipeline::Get().WaitForward();
}

// Runs on MindSpore's frontend queue, in program order.
void enqueue(int64_t num_seqs, int64_t num_queries, int64_t block_size, const ms::Tensor& input_tokens,
             const ms::Tensor& sampled_token_ids, const ms::Tensor& input_positions, const ms::Tensor& seq_lens,
             const ms::Tensor& slot_mapping, const ms::Tensor& block_tables) {
  ms::TensorToDevice(input_tokens, sampled_token_ids, input_positions, seq_lens, slot_mapping, block_tables);
  const Tensors t{input_tokens, sampled_token_ids, input_positions, seq_lens, slot_mapping, block_tables};
  mindspore::kernel::pyboost::PyBoostUtils::DispatchRun(
      std::make_shared<mindspore::runtime::PyBoostDeviceTask>([num_seqs, num_queries, block_size, t]() {
        // Everything was checked on the Python thread; run_cpu checks again (cheap) and writes
        // nothing if anything changed since. Its exception then surfaces at MindSpore's next
        // synchronisation point.
        run_cpu(cpu_args(num_seqs, num_queries, block_size, t));
      }));
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
    Args args = meta_args(num_seqs, num_queries, block_size, t);
    validate(args);
    require_cpu(input_tokens, "input_tokens");
    require_cpu(sampled_token_ids, "sampled_token_ids");
    require_cpu(input_positions, "input_positions");
    require_cpu(seq_lens, "seq_lens");
    require_cpu(slot_mapping, "slot_mapping");
    require_cpu(block_tables, "block_tables");
    wait_for_earlier_ops();
    args.sampled_token_ids = ms_adapter::to_aop_tensor(sampled_token_ids, Access::kRead, kOp, "sampled_token_ids");
    args.seq_lens = ms_adapter::to_aop_tensor(seq_lens, Access::kWrite, kOp, "seq_lens");
    args.block_tables = ms_adapter::to_aop_tensor(block_tables, Access::kRead, kOp, "block_tables");
    check_data(args);
  });
  return ms::pynative::PyboostRunner::Call<0>(std::string(kOp), enqueue, num_seqs, num_queries, block_size,
                                              input_tokens, sampled_token_ids, input_positions, seq_lens,
                                              slot_mapping, block_tables);
}

}  // namespace aop::adv_step_flash::ms_pynative
