// PyNative: validate on the calling thread, allocate the outputs, run the kernel in a PyBoost
// device task: the CPU kernel on device_target CPU; on Ascend (builds with AOP_MS_ASCEND) the
// AscendC kernel through run_npu on MindSpore's current stream (ascend_ops/mindspore_npu.hpp;
// not run on NPU).
//
// Why this shape (MindSpore 2.10, see DESIGN.md "MindSpore adapter facts"):
// - PyboostRunner::Call<N> queues `enqueue` on MindSpore's frontend queue behind every op
//   already issued and hands its N output tensors to Python as the op's outputs. `enqueue`
//   creates the outputs' device addresses and queues a PyBoostDeviceTask on the device queue,
//   where MindSpore's CPU ops run their kernels: the task allocates the outputs' memory and runs
//   the kernel, so built-in ops reading the outputs run after it.
// - Shapes, dtypes and strides are checked here, on the Python thread (host validate()). The
//   lengths and the block table are checked in the device task (run_cpu's check_data(), before
//   it writes), once every earlier op has produced them, so a call never waits for MindSpore's
//   queue. Bad data is raised at MindSpore's next synchronisation, or by
//   ascend_ops.common.check_errors() (ascend_ops/mindspore_task.hpp).
#include "pynative.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ms_extension/api.h"

#include "host/lightning_indexer.h"
#include "ascend_ops/mindspore_task.hpp"
#include "ascend_ops/mindspore_view.hpp"
#include "ascend_ops/npu_context.hpp"
#ifdef AOP_MS_ASCEND
#include "ascend_ops/mindspore_npu.hpp"
#endif

namespace aop::lightning_indexer::ms_pynative {
namespace {

namespace py = pybind11;
using ms_adapter::Access;

constexpr const char* kOp = "lightning_indexer";

// The inputs and attributes, as captured by the queued work.
struct Call {
  ms::Tensor query, key, weights;
  std::optional<ms::Tensor> lengths_q, lengths_k, block_table;
  Layout layout_query = Layout::kBSND;
  Layout layout_key = Layout::kPA_BSND;
  int64_t sparse_count = 0;
  int64_t sparse_mode = 0;
  bool return_value = false;
  std::vector<int64_t> out_shape;
};

std::optional<aop_tensor> optional_view(const std::optional<ms::Tensor>& t, aop_device device, const char* arg) {
  if (!t || !t->is_defined()) return std::nullopt;
  return ms_adapter::to_aop_view(*t, Access::kRead, device, kOp, arg);
}

// The host arguments without outputs, as views on `device`: META (shapes, dtypes and strides
// only: what can be checked before the inputs' producers have run), CPU or NPU (inside the
// device task only).
Args make_args(const Call& c, aop_device device) {
  const auto view = [&](const ms::Tensor& t, const char* arg) {
    return ms_adapter::to_aop_view(t, Access::kRead, device, kOp, arg);
  };
  Args a;
  a.query = view(c.query, "query");
  a.key = view(c.key, "key");
  a.weights = view(c.weights, "weights");
  a.actual_seq_lengths_query = optional_view(c.lengths_q, device, "actual_seq_lengths_query");
  a.actual_seq_lengths_key = optional_view(c.lengths_k, device, "actual_seq_lengths_key");
  a.block_table = optional_view(c.block_table, device, "block_table");
  a.layout_query = c.layout_query;
  a.layout_key = c.layout_key;
  a.sparse_count = c.sparse_count;
  a.sparse_mode = c.sparse_mode;
  return a;
}

// The kernel on `device` (CPU, or NPU with `ctx`), writing `outputs`; it checks the lengths and
// block ids before writing. Inside the device task, once the outputs have memory.
void run_on(const Call& c, const std::vector<ms::Tensor>& outputs, aop_device device, const NpuContext* ctx) {
  Args args = make_args(c, device);
  args.sparse_indices = ms_adapter::to_aop_view(outputs[0], Access::kWrite, device, kOp, "sparse_indices");
  if (c.return_value) {
    args.sparse_values = ms_adapter::to_aop_view(outputs[1], Access::kWrite, device, kOp, "sparse_values");
  }
#ifdef AOP_MS_ASCEND
  if (ctx != nullptr) return run_npu(args, *ctx);
#endif
  (void)ctx;
  run_cpu(args);
}

// The device task's work: give the outputs memory, then run the CPU kernel or, on Ascend
// (AOP_MS_ASCEND builds), the AscendC kernel on MindSpore's stream. A data error is raised at
// MindSpore's next synchronisation (mindspore_task.hpp), the outputs unwritten.
std::function<void()> device_work(const Call& c, const std::vector<ms::Tensor>& outputs) {
  const auto malloc_outputs = [outputs]() {
    std::vector<mindspore::tensor::TensorPtr> raw;
    for (const ms::Tensor& t : outputs) raw.push_back(t.tensor());
    mindspore::kernel::pyboost::PyBoostUtils::MallocOpOutputs(ms::GetCurrentDeviceContext(), raw);
  };
#ifdef AOP_MS_ASCEND
  if (ms_adapter::on_ascend()) {
    return [c, outputs, malloc_outputs, target = ms_adapter::capture()]() {
      malloc_outputs();
      ms_adapter::run_in_task([&] {
        ms_adapter::Workspace workspace(target);
        const NpuContext ctx = ms_adapter::npu_context(target, workspace);
        run_on(c, outputs, aop_device{AOP_DEVICE_NPU, ctx.device}, &ctx);
      });
    };
  }
#endif
  return [c, outputs, malloc_outputs]() {
    malloc_outputs();
    ms_adapter::run_in_task([&] { run_on(c, outputs, aop_device{AOP_DEVICE_CPU, 0}, nullptr); });
  };
}

// Runs on MindSpore's frontend queue, in program order; returns the op's outputs.
std::vector<ms::Tensor> enqueue(const Call& c) {
  ms::TensorToDevice(c.query, c.key, c.weights, c.lengths_q, c.lengths_k, c.block_table);
  std::vector<ms::Tensor> outputs{ms::Tensor(mindspore::kNumberTypeInt32, c.out_shape)};
  if (c.return_value) outputs.emplace_back(mindspore::kNumberTypeFloat32, c.out_shape);
  ms::TensorAllocate(outputs);  // device addresses; the memory is allocated by the device task
  mindspore::kernel::pyboost::PyBoostUtils::DispatchRun(
      std::make_shared<mindspore::runtime::PyBoostDeviceTask>(device_work(c, outputs)));
  return outputs;
}

}  // namespace

py::object lightning_indexer(const ms::Tensor& query, const ms::Tensor& key, const ms::Tensor& weights,
                             const std::optional<ms::Tensor>& actual_seq_lengths_query,
                             const std::optional<ms::Tensor>& actual_seq_lengths_key,
                             const std::optional<ms::Tensor>& block_table, const std::string& layout_query,
                             const std::string& layout_key, int64_t sparse_count, int64_t sparse_mode,
                             bool return_value) {
  // Outputs of earlier ops arrive as stub nodes: get their shapes now (data may still be pending).
  ms::inner::ConvertStubNodeToTensor(query, key, weights, actual_seq_lengths_query, actual_seq_lengths_key,
                                     block_table);
  Call c{query, key, weights, actual_seq_lengths_query, actual_seq_lengths_key, block_table};
  c.sparse_count = sparse_count;
  c.sparse_mode = sparse_mode;
  c.return_value = return_value;
  ms_adapter::call_host([&] {
    c.layout_query = parse_layout(layout_query, "layout_query", false);
    c.layout_key = parse_layout(layout_key, "layout_key", true);
    Args args = make_args(c, aop_device{AOP_DEVICE_META, 0});
    (void)validate(args, false);
    c.out_shape = output_shape(args);
    constexpr const char* kPackage = "ascend-op-lightning-indexer";
    ms_adapter::require_backend(query, kOp, "query", kPackage);
    ms_adapter::require_backend(key, kOp, "key", kPackage);
    ms_adapter::require_backend(weights, kOp, "weights", kPackage);
    const std::pair<const std::optional<ms::Tensor>*, const char*> optional[] = {
        {&c.lengths_q, "actual_seq_lengths_query"},
        {&c.lengths_k, "actual_seq_lengths_key"},
        {&c.block_table, "block_table"}};
    for (const auto& [t, name] : optional) {
      if (*t && (*t)->is_defined()) ms_adapter::require_backend(**t, kOp, name, kPackage);
    }
  });
  ms_adapter::watch_queue();
  if (return_value) return ms::pynative::PyboostRunner::Call<2>(std::string(kOp), enqueue, c);
  py::object indices = ms::pynative::PyboostRunner::Call<1>(std::string(kOp), enqueue, c);
  if (py::isinstance<py::tuple>(indices)) indices = py::reinterpret_borrow<py::tuple>(indices)[0];
  return py::make_tuple(indices, py::none());
}

}  // namespace aop::lightning_indexer::ms_pynative
