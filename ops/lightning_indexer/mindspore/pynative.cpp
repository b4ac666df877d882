// PyNative: validate on the calling thread, allocate the outputs, run the CPU kernel in a
// PyBoost device task.
//
// Why this shape (MindSpore 2.10, see DESIGN.md "MindSpore adapter facts"):
// - PyboostRunner::Call<N> queues `enqueue` on MindSpore's frontend queue behind every op
//   already issued and hands its N output tensors to Python as the op's outputs. `enqueue`
//   creates the outputs' device addresses and queues a PyBoostDeviceTask on the device queue,
//   where MindSpore's CPU ops run their kernels: the task allocates the outputs' memory and runs
//   the kernel, so built-in ops reading the outputs run after it.
// - An exception thrown inside queued work surfaces late or only in a log, so everything is
//   checked here first, on the Python thread: host validate() on shapes, dtypes and strides,
//   then host check_data() on the lengths and the block table once every earlier op has
//   produced them.
#include "pynative.h"

#include <memory>
#include <string>
#include <vector>

#include "ms_extension/api.h"
#include "include/runtime/pipeline/pipeline.h"

#include "host/lightning_indexer.h"
#include "ascend_ops/mindspore_view.hpp"

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

std::optional<aop_tensor> optional_view(const std::optional<ms::Tensor>& t, bool with_data, const char* arg) {
  if (!t || !t->is_defined()) return std::nullopt;
  return with_data ? ms_adapter::to_aop_tensor(*t, Access::kRead, kOp, arg)
                   : ms_adapter::to_aop_meta(*t, Access::kRead, kOp, arg);
}

// The host arguments without outputs: shapes, dtypes and strides only (device META) when
// with_data is false, what can be checked before the inputs' producers have run; with data
// pointers on the CPU otherwise (inside the device task only).
Args make_args(const Call& c, bool with_data) {
  const auto view = [&](const ms::Tensor& t, const char* arg) {
    return with_data ? ms_adapter::to_aop_tensor(t, Access::kRead, kOp, arg)
                     : ms_adapter::to_aop_meta(t, Access::kRead, kOp, arg);
  };
  Args a;
  a.query = view(c.query, "query");
  a.key = view(c.key, "key");
  a.weights = view(c.weights, "weights");
  a.actual_seq_lengths_query = optional_view(c.lengths_q, with_data, "actual_seq_lengths_query");
  a.actual_seq_lengths_key = optional_view(c.lengths_k, with_data, "actual_seq_lengths_key");
  a.block_table = optional_view(c.block_table, with_data, "block_table");
  a.layout_query = c.layout_query;
  a.layout_key = c.layout_key;
  a.sparse_count = c.sparse_count;
  a.sparse_mode = c.sparse_mode;
  return a;
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
                         "), but this build of ascend-op-lightning-indexer has no NPU backend for "
                         "MindSpore: it runs on device_target CPU only (rebuild where CANN is installed)");
  }
}

// Wait until every op issued before this call (one of them may produce an input) has run, so
// the data check sees final values. The GIL is released while waiting: queued work may need
// it. An error of earlier queued work is raised here.
void wait_for_earlier_ops() {
  py::gil_scoped_release no_gil;
  mindspore::runtime::Pipeline::Get().WaitForward();
}

// Runs on MindSpore's frontend queue, in program order; returns the op's outputs.
std::vector<ms::Tensor> enqueue(const Call& c) {
  ms::TensorToDevice(c.query, c.key, c.weights, c.lengths_q, c.lengths_k, c.block_table);
  std::vector<ms::Tensor> outputs{ms::Tensor(mindspore::kNumberTypeInt32, c.out_shape)};
  if (c.return_value) outputs.emplace_back(mindspore::kNumberTypeFloat32, c.out_shape);
  ms::TensorAllocate(outputs);  // device addresses; the memory is allocated by the device task
  mindspore::kernel::pyboost::PyBoostUtils::DispatchRun(
      std::make_shared<mindspore::runtime::PyBoostDeviceTask>([c, outputs]() {
        std::vector<mindspore::tensor::TensorPtr> raw;
        for (const ms::Tensor& t : outputs) raw.push_back(t.tensor());
        mindspore::kernel::pyboost::PyBoostUtils::MallocOpOutputs(ms::GetCurrentDeviceContext(), raw);
        // Everything was checked on the Python thread; run_cpu checks again (cheap). Its
        // exception would surface at MindSpore's next synchronisation point.
        Args args = make_args(c, true);
        args.sparse_indices = ms_adapter::to_aop_tensor(outputs[0], Access::kWrite, kOp, "sparse_indices");
        if (c.return_value) {
          args.sparse_values = ms_adapter::to_aop_tensor(outputs[1], Access::kWrite, kOp, "sparse_values");
        }
        run_cpu(args);
      }));
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
    Args args = make_args(c, false);
    const Dims dims = validate(args, false);
    c.out_shape = output_shape(args);
    require_cpu(query, "query");
    require_cpu(key, "key");
    require_cpu(weights, "weights");
    const std::pair<const std::optional<ms::Tensor>*, const char*> optional[] = {
        {&c.lengths_q, "actual_seq_lengths_query"},
        {&c.lengths_k, "actual_seq_lengths_key"},
        {&c.block_table, "block_table"}};
    for (const auto& [t, name] : optional) {
      if (*t && (*t)->is_defined()) require_cpu(**t, name);
    }
    wait_for_earlier_ops();
    args.actual_seq_lengths_query = optional_view(c.lengths_q, true, "actual_seq_lengths_query");
    args.actual_seq_lengths_key = optional_view(c.lengths_k, true, "actual_seq_lengths_key");
    args.block_table = optional_view(c.block_table, true, "block_table");
    check_data(args, dims);
  });
  if (return_value) return ms::pynative::PyboostRunner::Call<2>(std::string(kOp), enqueue, c);
  py::object indices = ms::pynative::PyboostRunner::Call<1>(std::string(kOp), enqueue, c);
  if (py::isinstance<py::tuple>(indices)) indices = py::reinterpret_borrow<py::tuple>(indices)[0];
  return py::make_tuple(indices, py::none());
}

}  // namespace aop::lightning_indexer::ms_pynative
