// Every op's `_core` module (the NumPy front door: cpu, emu and simulated-npu backends), derived
// from its description (op_params.hpp) and launch (kernel_launch.hpp). Generated per op from
// common/cmake/core_module.cpp.in. Functions, each taking the op's arguments in the description's
// order (positionally or by name, schema defaults), then keywords of its own:
//   run_cpu(..., dtype="")                          the C++ CPU kernel; returns None, or the outputs
//   run_emu(..., soc, order, seed, dtype, host_data_checks, <output>=array)
//                                                   the AscendC kernel on the emulator; returns the
//                                                   launch report, or (outputs..., report)
//   run_npu_sim(..., stream, queued, dtype, <output>=array)   the NPU host path on the simulated runtime
//   kernel_tiling(..., soc, dtype)                  the kernel's launch tiling as a dict
// bfloat16 arrays are ml_dtypes.bfloat16; dtype="bfloat16" reads uint16 arrays as bfloat16 bit
// patterns instead (the convention before ml_dtypes, still accepted).
#pragma once
#include <Python.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "ascend_ops/error.hpp"
#include "ascend_ops/module_info.hpp"
#include "ascend_ops/numpy_view.hpp"
#include "ascend_ops/op_params.hpp"
#include "ascend_ops/parallel.h"
#include "ascend_ops/platform.hpp"
#include "ascend_ops/py_args.hpp"
#ifdef AOP_WITH_EMU
#include "ascend_ops/emu_pybind.hpp"
#endif
#ifdef AOP_WITH_NPU_SIM
#include "ascend_sim/sim_module.hpp"
#endif

AOP_NAMESPACE_BEGIN
// Hidden, like pybind11's own types that these hold (a module exports only PyInit__core).
namespace numpy_adapter __attribute__((visibility("hidden"))) {

namespace py = pybind11;
using py_args::Option;
using py_args::Parsed;
using py_args::parse;
using py_args::to_float;
using py_args::to_int;
using py_args::type_name;

// The value of argument i for the host.
template <class Args>
desc::Value to_value(const desc::Param<Args>& param, const py::object& o, const char* op, const std::string& dtype) {
  if (o.is_none()) {
    if (param.optional) return desc::Value::none();
    throw Error(AOP_TYPE_ERROR, std::string(op) + ": " + param.name + " should be " +
                                    (param.kind == desc::Kind::kTensor ? "a numpy.ndarray" : "given") +
                                    " but is None");
  }
  switch (param.kind) {
    case desc::Kind::kTensor: {
      if (!py::isinstance<py::array>(o)) {
        throw Error(AOP_TYPE_ERROR, std::string(op) + ": " + param.name + " should be a numpy.ndarray" +
                                        (param.optional ? " or None" : "") + " but is " + type_name(o));
      }
      const py::array a = o.cast<py::array>();
      const bool bits = !dtype.empty() && a.dtype().kind() == 'u' && a.itemsize() == 2;
      return desc::Value::of(numpy_view(a, op, param.name, param.written(), bits ? dtype : ""));
    }
    case desc::Kind::kInt:
    case desc::Kind::kSymInt: return desc::Value::of_int(to_int(o, op, param.name));
    case desc::Kind::kFloat: return desc::Value::of_float(to_float(o, op, param.name));
    case desc::Kind::kBool:
      if (!PyBool_Check(o.ptr()) && std::string(py::str(py::type::of(o).attr("__name__"))) != "bool_") {
        throw Error(AOP_TYPE_ERROR, std::string(op) + ": " + param.name + " should be a bool but is " + type_name(o));
      }
      return desc::Value::of_bool(PyObject_IsTrue(o.ptr()) == 1);
    case desc::Kind::kString:
      if (!py::isinstance<py::str>(o)) {
        throw Error(AOP_TYPE_ERROR, std::string(op) + ": " + param.name + " should be a str but is " + type_name(o));
      }
      return desc::Value::of_string(o.cast<std::string>());
  }
  return desc::Value::none();
}

template <class Op>
typename Op::Args host_args(const Parsed& p, const std::string& dtype) {
  typename Op::Args args{};
  const auto& params = Op::params();
  for (size_t i = 0; i < params.size(); ++i) params[i].set(args, to_value(params[i], p.params[i], Op::kName, dtype));
  return args;
}

// An output exists when the op always has it, when its flag argument is true, or when it is given.
template <class Op>
bool output_present(const desc::Output<typename Op::Args>& out, const Parsed& p) {
  if (out.present_if == nullptr || p.outputs.contains(out.name)) return true;
  const int flag = desc::param_index(Op::params(), out.present_if);
  return flag >= 0 && p.params[static_cast<size_t>(flag)].cast<bool>();
}

// The NumPy dtype of a new output. bfloat16: uint16 bit patterns for a call that passed its inputs
// that way (dtype="bfloat16"), else ml_dtypes.bfloat16 (the caller's inputs were such arrays).
inline py::dtype numpy_dtype_of(aop_dtype dtype, bool bf16_bits) {
  if (dtype == AOP_DTYPE_BFLOAT16 && !bf16_bits) {
    return py::dtype::from_args(py::module_::import("ml_dtypes").attr("bfloat16"));
  }
  switch (dtype) {
    case AOP_DTYPE_FLOAT16: return py::dtype("float16");
    case AOP_DTYPE_FLOAT32: return py::dtype("float32");
    case AOP_DTYPE_FLOAT64: return py::dtype("float64");
    case AOP_DTYPE_INT8: return py::dtype("int8");
    case AOP_DTYPE_INT16: return py::dtype("int16");
    case AOP_DTYPE_INT32: return py::dtype("int32");
    case AOP_DTYPE_INT64: return py::dtype("int64");
    case AOP_DTYPE_UINT8: return py::dtype("uint8");
    case AOP_DTYPE_BOOL: return py::dtype("bool");
    default: return py::dtype("uint16");  // bfloat16 bit patterns
  }
}

// The outputs of a call: the arrays given by name (checked by the host's validation), else new
// ones shaped by Op::output_dims after the host's checks of the inputs, of the output's dtype or
// of its dtype_of argument's (the input array's own: ml_dtypes.bfloat16, or uint16 bit patterns
// read as bfloat16 with dtype="bfloat16", as its output). Points Args at them.
template <class Op>
std::vector<py::object> outputs(typename Op::Args& args, const Parsed& p, bool allocate) {
  std::vector<py::object> result;
  if constexpr (std::tuple_size_v<std::decay_t<decltype(Op::outputs())>> > 0) {
    const auto& outputs = Op::outputs();
    bool checked = false;
    for (size_t o = 0; o < outputs.size(); ++o) {
      const auto& out = outputs[o];
      if (!output_present<Op>(out, p)) {
        result.push_back(py::none());
        continue;
      }
      py::object array;
      if (p.outputs.contains(out.name)) {
        array = p.outputs[out.name];
        if (!py::isinstance<py::array>(array)) {
          throw Error(AOP_TYPE_ERROR, std::string(Op::kName) + ": " + out.name + " should be a numpy.ndarray but is " +
                                          type_name(array));
        }
      } else if (allocate) {
        if (!checked) Op::check_inputs(args);
        checked = true;
        std::vector<py::ssize_t> shape;
        for (const desc::Dim& d : Op::output_dims(args, o)) {
          shape.push_back(d.param < 0 ? d.constant : [&] {
            const py::array in = p.params[static_cast<size_t>(d.param)].template cast<py::array>();
            return in.shape(d.dim < 0 ? in.ndim() + d.dim : d.dim);
          }());
        }
        const bool bf16_bits = p.options.contains("dtype") && !p.options["dtype"].cast<std::string>().empty();
        const int dtype_of = desc::output_dtype_param(out, Op::params());
        array = py::array(dtype_of < 0 ? numpy_dtype_of(out.dtype, bf16_bits)
                                       : p.params[static_cast<size_t>(dtype_of)].template cast<py::array>().dtype(),
                          shape);
      } else {
        throw Error(AOP_TYPE_ERROR, std::string(Op::kName) + ": " + out.name + " should be given (a numpy.ndarray)");
      }
      const py::array a = array.cast<py::array>();
      const std::string as = p.options.contains("dtype") ? p.options["dtype"].cast<std::string>() : "";
      const bool bits = !as.empty() && a.dtype().kind() == 'u' && a.itemsize() == 2;  // read as to_value reads inputs
      out.set(args, desc::Value::of(numpy_view(a, Op::kName, out.name, true, bits ? as : "")));
      result.push_back(array);
    }
  } else {
    (void)args, (void)p, (void)allocate;
  }
  return result;
}

inline py::object as_result(std::vector<py::object>&& outputs) {
  if (outputs.empty()) return py::none();
  py::tuple t(outputs.size());
  for (size_t i = 0; i < outputs.size(); ++i) t[i] = std::move(outputs[i]);
  return t;
}

// The argument list of the docstrings: "key, value=None, ..., cache_mode=0".
template <class Op>
std::string signature_doc() {
  std::string s;
  for (const auto& p : Op::params()) {
    if (!s.empty()) s += ", ";
    s += p.name;
    if (p.default_value != nullptr) s += std::string("=") + p.default_value;
  }
  return s;
}

template <class Op>
void bind_cpu(py::module_& m) {
  m.def(
      "run_cpu",
      [](const py::args& args, const py::kwargs& kwargs) {
        const Parsed p = parse<Op>("run_cpu", args, kwargs, {{"dtype", py::str("")}});
        typename Op::Args a = host_args<Op>(p, p.options["dtype"].cast<std::string>());
        std::vector<py::object> out = outputs<Op>(a, p, true);
        {
          py::gil_scoped_release release;
          Op::run_cpu(a);
        }
        return as_result(std::move(out));
      },
      ("run_cpu(" + signature_doc<Op>() + ", dtype='')\n" + std::string(Op::kName) +
       " through the multi-threaded C++ CPU kernel; returns None or its outputs.\n"
       "bfloat16 arrays are ml_dtypes.bfloat16; dtype='bfloat16' reads uint16 arrays as bfloat16 bit "
       "patterns instead.")
          .c_str());
}

template <class Op>
void bind_tiling(py::module_& m) {
  m.def(
      "kernel_tiling",
      [](const py::args& args, const py::kwargs& kwargs) {
        const Parsed p = parse<Op>("kernel_tiling", args, kwargs,
                                   {{"soc", py::str("Ascend910B2")}, {"dtype", py::str("")}});
        typename Op::Args a = host_args<Op>(p, p.options["dtype"].cast<std::string>());
        const std::vector<py::object> keep = outputs<Op>(a, p, true);
        const auto t = Op::tiling(Op::prepare(a), platform_preset(p.options["soc"].cast<std::string>()));
        py::dict d;
        for (const auto& [name, value] : Op::tiling_fields(t)) d[name] = value;
        return d;
      },
      ("kernel_tiling(" + signature_doc<Op>() + ", soc='Ascend910B2', dtype='')\n"
       "The AscendC kernel's launch tiling for these inputs on a platform preset (from the tiling cache), as a dict.")
          .c_str());
  m.attr("tiling") = m.attr("kernel_tiling");  // its former name in the first ops (kept working)
}

#ifdef AOP_WITH_EMU
template <class Op>
void bind_emu(py::module_& m) {
  ascendc_cpu::python::RegisterEmulatorError(m);
  m.def(
      "run_emu",
      [](const py::args& args, const py::kwargs& kwargs) {
        const Parsed p = parse<Op>("run_emu", args, kwargs,
                                   {{"soc", py::str("Ascend910B2")},
                                    {"order", py::str("both")},
                                    {"seed", py::int_(0)},
                                    {"dtype", py::str("")},
                                    {"host_data_checks", py::bool_(true)}});
        typename Op::Args a = host_args<Op>(p, p.options["dtype"].cast<std::string>());
        std::vector<py::object> out = outputs<Op>(a, p, true);
        py::dict report = launch::run_emu_report<Op>(a, p.options["soc"].cast<std::string>(),
                                                     p.options["order"].cast<std::string>(),
                                                     p.options["seed"].cast<uint64_t>(),
                                                     p.options["host_data_checks"].cast<bool>());
        if (out.empty()) return py::object(report);
        out.push_back(report);
        return as_result(std::move(out));
      },
      ("run_emu(" + signature_doc<Op>() +
       ", soc='Ascend910B2', order='both', seed=0, dtype='', host_data_checks=True, <output>=None)\n"
       "Runs the AscendC kernel through the emulator on a platform preset; order 'both' runs the\n"
       "blocks in order and shuffled and checks they agree. Tests only: host_data_checks=False skips\n"
       "the host's data checks (the kernel's own check raises the error); an output given by name is\n"
       "written instead of a new array. Returns the launch report (GM bytes, DMA transfers, UB\n"
       "high-water mark per block), after the outputs for an op that has some.")
          .c_str());
}
#endif

#ifdef AOP_WITH_NPU_SIM
template <class Op>
void bind_npu_sim(py::module_& m) {
  ascend_sim::bind_npu_sim_queue(m);
  m.def(
      "run_npu_sim",
      [](const py::args& args, const py::kwargs& kwargs) {
        const Parsed p = parse<Op>("run_npu_sim", args, kwargs,
                                   {{"stream", py::object()}, {"queued", py::bool_(false)}, {"dtype", py::str("")}});
        typename Op::Args a = host_args<Op>(p, p.options["dtype"].cast<std::string>());
        const std::vector<py::object> keep = outputs<Op>(a, p, false);
        ascend_sim::run_on_sim_stream(a, p.options["stream"].cast<uintptr_t>(), p.options["queued"].cast<bool>(),
                                      [](const typename Op::Args& x, const NpuContext& ctx) { Op::run_npu(x, ctx); });
      },
      ("run_npu_sim(" + signature_doc<Op>() + ", stream, queued=False, dtype='', <output>=array)\n"
       "Queues the op on a simulated stream through the NPU host path (arrays, outputs included, wrap\n"
       "simulated device memory); queued=True hands the device work to a stand-in of torch_npu's task\n"
       "queue (drain_npu_sim_queue()).")
          .c_str());
}
#endif

// Functions an op adds to its `_core` (introspection of its CPU kernel for tests and benchmarks):
// a source of the op's CORE list registers them with a namespace-scope RegisterCoreExtension.
using CoreExtension = void (*)(py::module_&);
inline std::vector<CoreExtension>& core_extensions() {
  static std::vector<CoreExtension> extensions;
  return extensions;
}
struct RegisterCoreExtension {
  explicit RegisterCoreExtension(CoreExtension extension) { core_extensions().push_back(extension); }
};

template <class Op>
void bind_core(py::module_& m) {
  m.doc() = (std::string(Op::kName) + " on NumPy arrays: the cpu, emu and simulated-npu backends").c_str();
  set_module_info(m);
  register_error_translator();
  m.def("num_threads", &aop_num_threads, "Worker threads of the CPU kernels (common's pool).");
  m.def("set_num_threads", &aop_set_num_threads, py::arg("threads"),
        "Set common's worker count; <= 0 restores the default (tests, benchmarks).");
  bind_cpu<Op>(m);
  bind_tiling<Op>(m);
#ifdef AOP_WITH_EMU
  m.attr("HAS_EMU") = true;
  bind_emu<Op>(m);
#else
  m.attr("HAS_EMU") = false;
#endif
#ifdef AOP_WITH_NPU_SIM
  bind_npu_sim<Op>(m);
#else
  m.attr("HAS_NPU_SIM") = false;
#endif
  for (CoreExtension extension : core_extensions()) extension(m);
}

}  // namespace numpy_adapter
AOP_NAMESPACE_END
