// Every op's MindSpore PyNative entry (the `_ms` module's function named after the op), derived
// from its description (op_params.hpp) for ops whose _ms module is generated
// (common/cmake/ms_module.cpp.in). Validate on the calling thread, run the kernel in a PyBoost
// device task: the CPU kernel on device_target CPU; on Ascend (builds with AOP_MS_ASCEND) the
// AscendC kernel through run_npu on MindSpore's current stream (mindspore_npu.hpp; not run on NPU).
//
// Why this shape (MindSpore 2.10, see DESIGN.md "MindSpore adapter facts"):
// - PyboostRunner::Call<N> queues `enqueue` on MindSpore's frontend queue behind every op already
//   issued; `enqueue` queues a PyBoostDeviceTask on the device queue, where MindSpore's ops run
//   (CPU) or launch (Ascend) their kernels: the op is ordered with built-in ops both ways.
// - Shapes, dtypes and strides are checked here, on the Python thread (Op::check_inputs). Data
//   (slots, lengths, block ids) is checked in the device task (run_cpu / the kernel), once every
//   earlier op has produced it, so a call never waits for MindSpore's queue; such an error is
//   raised at MindSpore's next synchronisation or by ascend_ops.common.check_errors(), outputs
//   untouched (mindspore_task.hpp).
#pragma once
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ms_extension/api.h"

#include "ascend_ops/mindspore_task.hpp"
#include "ascend_ops/mindspore_view.hpp"
#include "ascend_ops/module_info.hpp"
#include "ascend_ops/npu_context.hpp"
#include "ascend_ops/op_params.hpp"
#include "ascend_ops/py_args.hpp"
#ifdef AOP_MS_ASCEND
#include "ascend_ops/mindspore_npu.hpp"
#endif

AOP_NAMESPACE_BEGIN
namespace ms_adapter __attribute__((visibility("hidden"))) {

namespace py = pybind11;

// One call: a tensor per tensor argument (nullopt: None), every argument's value (tensors left
// empty), and the outputs it returns.
struct MsCall {
  std::vector<std::optional<ms::Tensor>> tensors;
  std::vector<desc::Value> values;
  std::vector<std::optional<std::vector<int64_t>>> output_shapes;  // nullopt: an absent optional output
};

// The op's Args on `device`: META (shapes only, the calling thread), CPU or NPU (the device task),
// outputs when given.
template <class Op>
typename Op::Args ms_args(const MsCall& c, aop_device device, const std::vector<ms::Tensor>* outputs) {
  typename Op::Args args{};
  const auto& params = Op::params();
  size_t t = 0;
  for (size_t i = 0; i < params.size(); ++i) {
    const desc::Param<typename Op::Args>& p = params[i];
    if (!p.is_tensor()) {
      p.set(args, c.values[i]);
      continue;
    }
    const std::optional<ms::Tensor>& tensor = c.tensors[t++];
    if (!tensor || !tensor->is_defined()) {
      p.set(args, desc::Value::none());
      continue;
    }
    p.set(args, desc::Value::of(to_aop_view(*tensor, p.written() ? Access::kWrite : Access::kRead, device, Op::kName,
                                            p.name)));
  }
  if (outputs != nullptr) {
    const auto& outs = Op::outputs();
    size_t k = 0;
    for (size_t o = 0; o < outs.size(); ++o) {
      if (!c.output_shapes[o]) continue;
      outs[o].set(args, desc::Value::of(to_aop_view((*outputs)[k++], Access::kWrite, device, Op::kName, outs[o].name)));
    }
  }
  return args;
}

template <class Op>
void run_on(const MsCall& c, const std::vector<ms::Tensor>& outputs, aop_device device, const NpuContext* ctx) {
  const typename Op::Args args = ms_args<Op>(c, device, &outputs);
#ifdef AOP_MS_ASCEND
  if (ctx != nullptr) return Op::run_npu(args, *ctx);
#endif
  (void)ctx;
  Op::run_cpu(args);
}

// The device task's work: give the outputs memory, then the CPU kernel or, on Ascend, the AscendC
// kernel on MindSpore's stream.
template <class Op>
std::function<void()> device_work(const MsCall& c, const std::vector<ms::Tensor>& outputs) {
  const auto malloc_outputs = [outputs]() {
    if (outputs.empty()) return;
    std::vector<mindspore::tensor::TensorPtr> raw;
    for (const ms::Tensor& t : outputs) raw.push_back(t.tensor());
    mindspore::kernel::pyboost::PyBoostUtils::MallocOpOutputs(ms::GetCurrentDeviceContext(), raw);
  };
#ifdef AOP_MS_ASCEND
  if (on_ascend()) {
    return [c, outputs, malloc_outputs, target = capture()]() {
      malloc_outputs();
      run_in_task([&] {
        Workspace workspace(target);
        const NpuContext ctx = npu_context(target, workspace);
        run_on<Op>(c, outputs, aop_device{AOP_DEVICE_NPU, ctx.device}, &ctx);
      });
    };
  }
#endif
  return [c, outputs, malloc_outputs]() {
    malloc_outputs();
    run_in_task([&] { run_on<Op>(c, outputs, aop_device{AOP_DEVICE_CPU, 0}, nullptr); });
  };
}

// The dtype of output o: its own, or that of its dtype_of tensor argument (a required one).
template <class Op>
mindspore::TypeId output_type(const MsCall& c, size_t o) {
  const auto& out = Op::outputs()[o];
  const int i = desc::output_dtype_param(out, Op::params());
  if (i < 0) return ms_type_of(out.dtype);
  size_t t = 0;  // its index among the tensor arguments
  for (int k = 0; k < i; ++k) t += Op::params()[static_cast<size_t>(k)].is_tensor() ? 1 : 0;
  return c.tensors[t]->data_type();
}

// Runs on MindSpore's frontend queue, in program order: the inputs to the device, the outputs'
// device addresses, the kernel queued as a device task. Returns the outputs.
template <class Op>
std::vector<ms::Tensor> enqueue(const std::vector<std::optional<ms::Tensor>>& tensors, const MsCall& call) {
  MsCall c = call;
  c.tensors = tensors;  // converted from stub nodes by PyboostRunner
  auto* device_context = ms::GetCurrentDeviceContext();
  const auto stream_id = static_cast<size_t>(mindspore::CurrentStream::id());
  size_t index = 0;
  for (const std::optional<ms::Tensor>& t : c.tensors) {
    if (t && t->is_defined()) index = ms::detail::CreateInputTensorAddressForArg(device_context, stream_id, index, *t);
  }
  std::vector<ms::Tensor> outputs;
  for (size_t o = 0; o < c.output_shapes.size(); ++o) {
    if (c.output_shapes[o]) outputs.emplace_back(output_type<Op>(c, o), *c.output_shapes[o]);
  }
  if (!outputs.empty()) ms::TensorAllocate(outputs);  // device addresses; the device task allocates
  mindspore::kernel::pyboost::PyBoostUtils::DispatchRun(
      std::make_shared<mindspore::runtime::PyBoostDeviceTask>(device_work<Op>(c, outputs)));
  return outputs;
}

template <class Op, int N>
py::object call_with_outputs(const MsCall& c) {
  if constexpr (N == 0) {
    return ms::pynative::PyboostRunner::Call<0>(
        std::string(Op::kName),
        [c](const std::vector<std::optional<ms::Tensor>>& tensors) { (void)enqueue<Op>(tensors, c); }, c.tensors);
  } else {
    return ms::pynative::PyboostRunner::Call<N>(
        std::string(Op::kName),
        [c](const std::vector<std::optional<ms::Tensor>>& tensors) { return enqueue<Op>(tensors, c); }, c.tensors);
  }
}

// The tuple of every output, None for an absent one (or None for an op without outputs).
template <class Op>
py::object with_absent_outputs(const MsCall& c, py::object present) {
  const size_t m = c.output_shapes.size();
  if (m == 0) return py::none();
  std::vector<py::object> got;
  if (py::isinstance<py::tuple>(present)) {
    for (const auto& item : py::reinterpret_borrow<py::tuple>(present)) got.push_back(py::reinterpret_borrow<py::object>(item));
  } else {
    got.push_back(present);
  }
  py::tuple result(m);
  size_t k = 0;
  for (size_t o = 0; o < m; ++o) result[o] = c.output_shapes[o] && k < got.size() ? got[k++] : py::none();
  return result;
}

template <class Op>
py::object pynative(const py::args& args, const py::kwargs& kwargs) {
  const py_args::Parsed p = py_args::parse<Op>(Op::kName, args, kwargs, {});
  const auto& params = Op::params();
  MsCall c;
  c.values.resize(params.size());
  call_host([&] {
    for (size_t i = 0; i < params.size(); ++i) {
      const desc::Param<typename Op::Args>& param = params[i];
      const py::object& o = p.params[i];
      if (param.is_tensor()) {
        if (o.is_none()) {
          if (!param.optional) {
            throw Error(AOP_TYPE_ERROR, std::string(Op::kName) + ": " + param.name + " should be a mindspore.Tensor but is None");
          }
          c.tensors.emplace_back(std::nullopt);
          continue;
        }
        try {
          c.tensors.emplace_back(o.cast<ms::Tensor>());
        } catch (const py::cast_error&) {
          throw Error(AOP_TYPE_ERROR, std::string(Op::kName) + ": " + param.name + " should be a mindspore.Tensor" +
                                          (param.optional ? " or None" : "") + " but is " + py_args::type_name(o));
        }
        continue;
      }
      if (o.is_none()) {
        if (!param.optional) {
          throw Error(AOP_TYPE_ERROR, std::string(Op::kName) + ": " + param.name + " should be given but is None");
        }
      } else if (param.kind == desc::Kind::kInt || param.kind == desc::Kind::kSymInt) {
        c.values[i] = desc::Value::of_int(py_args::to_int(o, Op::kName, param.name));
      } else if (param.kind == desc::Kind::kFloat) {
        c.values[i] = desc::Value::of_float(py_args::to_float(o, Op::kName, param.name));
      } else if (param.kind == desc::Kind::kBool) {
        if (!PyBool_Check(o.ptr())) {
          throw Error(AOP_TYPE_ERROR, std::string(Op::kName) + ": " + param.name + " should be a bool but is " +
                                          py_args::type_name(o));
        }
        c.values[i] = desc::Value::of_bool(o.ptr() == Py_True);
      } else {
        if (!py::isinstance<py::str>(o)) {
          throw Error(AOP_TYPE_ERROR, std::string(Op::kName) + ": " + param.name + " should be a str but is " +
                                          py_args::type_name(o));
        }
        c.values[i] = desc::Value::of_string(o.cast<std::string>());
      }
    }
  });
  // Outputs of earlier ops arrive as stub nodes: get their shapes now (data may still be pending).
  ms::inner::ConvertStubNodeToTensor(c.tensors);
  call_host([&] {
    const typename Op::Args meta = ms_args<Op>(c, aop_device{AOP_DEVICE_META, 0}, nullptr);
    Op::check_inputs(meta);
    if constexpr (std::tuple_size_v<std::decay_t<decltype(Op::outputs())>> > 0) {
      std::vector<std::vector<int64_t>> shapes(params.size());  // the tensor arguments' shapes, by argument
      for (size_t i = 0, t = 0; i < params.size(); ++i) {
        if (!params[i].is_tensor()) continue;
        const std::optional<ms::Tensor>& tensor = c.tensors[t++];
        if (tensor && tensor->is_defined()) shapes[i] = tensor->shape();
      }
      const auto& outs = Op::outputs();
      for (size_t o = 0; o < outs.size(); ++o) {
        if (!desc::output_present(outs[o], params, c.values)) {
          c.output_shapes.emplace_back(std::nullopt);
          continue;
        }
        c.output_shapes.emplace_back(desc::output_shape(Op::output_dims(meta, o), shapes));
      }
    }
    size_t t = 0;
    for (const auto& param : params) {
      if (!param.is_tensor()) continue;
      const std::optional<ms::Tensor>& tensor = c.tensors[t++];
      if (tensor && tensor->is_defined()) require_backend(*tensor, Op::kName, param.name, Op::kPackage);
    }
  });
  watch_queue();
  size_t present = 0;
  for (const auto& shape : c.output_shapes) present += shape ? 1 : 0;
  switch (present) {
    case 0: return with_absent_outputs<Op>(c, call_with_outputs<Op, 0>(c));
    case 1: return with_absent_outputs<Op>(c, call_with_outputs<Op, 1>(c));
    case 2: return with_absent_outputs<Op>(c, call_with_outputs<Op, 2>(c));
    default: return with_absent_outputs<Op>(c, call_with_outputs<Op, 3>(c));
  }
}

// The start of every op's `_ms` module: its doc, the version facts and the PyNative entry; the
// op's module then adds its Graph-mode entries.
template <class Op>
void bind_pynative(py::module_& m);

template <class Op>
void init_module(py::module_& m) {
  m.doc() = (std::string("ascend-ops ") + Op::kName + ": MindSpore PyNative and Graph-mode (aot) entries").c_str();
  set_module_info(m);
  bind_pynative<Op>(m);
}

template <class Op>
void bind_pynative(py::module_& m) {
  std::string doc = std::string(Op::kName) + "(";
  for (const auto& p : Op::params()) {
    if (doc.back() != '(') doc += ", ";
    doc += p.name;
    if (p.default_value != nullptr) doc += std::string("=") + p.default_value;
  }
  doc += ")\nPyNative: validates now, runs in program order with MindSpore's ops (a data error is raised at its next "
         "synchronisation). Returns None or the outputs.";
  m.def(Op::kName, &pynative<Op>, doc.c_str());
}

}  // namespace ms_adapter
AOP_NAMESPACE_END
