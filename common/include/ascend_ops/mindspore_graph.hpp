// Every op's MindSpore Graph mode on CPU, derived from its description (op_params.hpp): the aot
// kernel MindSpore's CPU runtime calls (ops.Custom(func_type="aot")) and the compile-time check
// the primitive's __infer__ runs (ascend_ops/common/ms_front.py).
//
// One form for every op, the graph primitive's inputs: each argument in description order (an
// absent optional tensor as a placeholder, a str as the index of its value in the argument's
// `choices`, a float as the int64 of its IEEE-754 double's bits, an absent optional int or float
// as 0), then `present`, an int whose bit i says argument i
// is given (read for optional arguments only). Outputs: the op's (an absent optional output is a
// [0] tensor of its dtype) or, for an op that only writes in place, one int32 [1] (0).
#pragma once
#include <cstdint>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "ascend_ops/error.hpp"
#include "ascend_ops/mindspore_view.hpp"
#include "ascend_ops/op_params.hpp"

AOP_NAMESPACE_BEGIN
namespace ms_adapter __attribute__((visibility("hidden"))) {

template <class Op>
[[noreturn]] void graph_fail(aop_status status, const std::string& what) {
  throw Error(status, std::string(Op::kName) + ": " + what);
}

template <class Op>
constexpr size_t num_params() {
  return std::tuple_size_v<std::decay_t<decltype(Op::params())>>;
}
template <class Op>
constexpr size_t num_outputs() {
  return std::tuple_size_v<std::decay_t<decltype(Op::outputs())>>;
}

// Whether argument i is given: a required one always; an optional one when its `present` bit is set.
template <class Param>
bool is_given(const Param& p, int64_t present, size_t i) {
  return !p.optional || (present & (int64_t{1} << i)) != 0;
}

// The value of a str argument's index; the host's own error for a name it refuses comes from its
// setter, an index outside the choices is a ValueError naming the argument.
template <class Op, class Param>
std::string choice(const Param& p, int64_t code) {
  int64_t n = 0;
  while (p.choices != nullptr && p.choices[n] != nullptr) ++n;
  if (code < 0 || code >= n) {
    graph_fail<Op>(AOP_VALUE_ERROR, std::string(p.name) + " has the unknown code " + std::to_string(code));
  }
  return p.choices[code];
}

// A float as the graph carries it: its double's bits, so that every scalar input stays an int64
// (what the aot kernel, __infer__ and the Ascend primitive's yaml read) and arrives exactly.
inline double float_of_bits(int64_t bits) {
  double x = 0;
  std::memcpy(&x, &bits, sizeof x);
  return x;
}

// A scalar argument's value from the graph's int.
template <class Op, class Param>
desc::Value scalar_value(const Param& p, int64_t raw) {
  switch (p.kind) {
    case desc::Kind::kBool: return desc::Value::of_bool(raw != 0);
    case desc::Kind::kString: return desc::Value::of_string(choice<Op>(p, raw));
    case desc::Kind::kFloat: return desc::Value::of_float(float_of_bits(raw));
    default: return desc::Value::of_int(raw);
  }
}

// The index of a str value among the argument's choices (the code a graph passes). A value not
// among them is refused by the op's own setter (its message), or else as a ValueError.
template <class Op>
int64_t choice_code(const std::string& name, const std::string& value) {
  const auto& params = Op::params();
  const int i = desc::param_index(params, name.c_str());
  if (i < 0 || params[static_cast<size_t>(i)].choices == nullptr) {
    graph_fail<Op>(AOP_VALUE_ERROR, name + " is not an argument with choices");
  }
  const auto& p = params[static_cast<size_t>(i)];
  std::string known;
  for (int64_t c = 0; p.choices[c] != nullptr; ++c) {
    if (value == p.choices[c]) return c;
    known += std::string(c == 0 ? "'" : ", '") + p.choices[c] + "'";
  }
  typename Op::Args scratch{};
  p.set(scratch, desc::Value::of_string(value));
  graph_fail<Op>(AOP_VALUE_ERROR, name + " should be one of " + known + " but is '" + value + "'");
}

// One scalar input of the aot kernel: a 0-d (or [1]) int64 / int32 / bool.
template <class Op>
int64_t aot_scalar(void* data, int ndim, const int64_t* shape, const char* dtype, const char* name) {
  const bool one = ndim == 0 || (ndim == 1 && shape[0] == 1);
  if (one && dtype != nullptr && std::string(dtype) == "bool") return *static_cast<const bool*>(data) ? 1 : 0;
  const aop_dtype type = aot_dtype(dtype, Op::kName, name);
  if (!one || (type != AOP_DTYPE_INT64 && type != AOP_DTYPE_INT32)) {
    graph_fail<Op>(AOP_TYPE_ERROR, std::string(name) + " should be an int but the graph passes a " +
                                       std::to_string(ndim) + "-d " + dtype);
  }
  return type == AOP_DTYPE_INT64 ? *static_cast<const int64_t*>(data) : *static_cast<const int32_t*>(data);
}

// Whether output `o` exists for these values.
template <class Op>
bool output_present(const std::vector<desc::Value>& values, size_t o) {
  return desc::output_present(Op::outputs()[o], Op::params(), values);
}

// Graph compilation (the primitive's __infer__): the host's checks on the inferred shapes and
// dtype names, with PyNative's exceptions and messages; returns every output's shape ([0] for an
// absent optional one). shapes / dtypes / scalars are per argument (a tensor's scalar and a
// scalar's shape unused); a scalar that is not a compile-time constant is nullopt, as is
// `present`. Unknown values: an op with outputs needs them (TypeError), an op without is checked
// by the aot kernel when the graph runs; so are unknown (negative) dimensions.
template <class Op>
std::vector<std::vector<int64_t>> infer(const std::vector<std::vector<int64_t>>& shapes,
                                        const std::vector<std::string>& dtypes,
                                        const std::vector<std::optional<int64_t>>& scalars,
                                        std::optional<int64_t> present) {
  const auto& params = Op::params();
  if (shapes.size() != params.size() || dtypes.size() != params.size() || scalars.size() != params.size()) {
    graph_fail<Op>(AOP_VALUE_ERROR, "the graph primitive takes " + std::to_string(params.size()) +
                                        " arguments and present, got " + std::to_string(shapes.size()));
  }
  std::string unknown;
  for (size_t i = 0; i < params.size(); ++i) {
    if (!params[i].is_tensor() && !scalars[i] && (!present || is_given(params[i], *present, i))) {
      unknown += (unknown.empty() ? "" : ", ") + std::string(params[i].name);
    }
  }
  if (!present) unknown += (unknown.empty() ? "" : ", ") + std::string("present");
  if (!unknown.empty()) {
    if (num_outputs<Op>() == 0) return {};
    graph_fail<Op>(AOP_TYPE_ERROR, unknown + " should be constants of the graph (Python scalars)");
  }
  std::vector<desc::Value> values(params.size());
  typename Op::Args args{};
  bool dynamic = false;
  std::vector<std::vector<int64_t>> given_shapes(params.size());
  for (size_t i = 0; i < params.size(); ++i) {
    const auto& p = params[i];
    if (!is_given(p, *present, i)) {
      p.set(args, desc::Value::none());
      continue;
    }
    if (!p.is_tensor()) {
      values[i] = scalar_value<Op>(p, *scalars[i]);
      p.set(args, values[i]);
      continue;
    }
    given_shapes[i] = shapes[i];
    bool known = true;
    for (int64_t d : shapes[i]) known = known && d >= 0;
    if (!known) {
      dynamic = true;
      continue;
    }
    values[i] = desc::Value::of(aot_tensor(nullptr, static_cast<int>(shapes[i].size()), shapes[i].data(),
                                           aot_dtype(dtypes[i].c_str(), Op::kName, p.name),
                                           aop_device{AOP_DEVICE_META, 0}, Op::kName, p.name));
    p.set(args, values[i]);
  }
  if (!dynamic) Op::check_inputs(args);  // else the aot kernel checks once the shapes are known
  std::vector<std::vector<int64_t>> out;
  if constexpr (num_outputs<Op>() > 0) {  // an op without outputs has no output_dims
    for (size_t o = 0; o < num_outputs<Op>(); ++o) {
      out.push_back(output_present<Op>(values, o) ? desc::output_shape(Op::output_dims(args, o), given_shapes)
                                                  : std::vector<int64_t>{0});
    }
  }
  return out;
}

// The aot kernel (MindSpore 2.10's CPU aot signature): the arguments and `present`, then the
// outputs. MindSpore's CustomAOTCpuKernelMod catches a std::exception from the kernel and raises
// RuntimeError "... Error message is <what()>" (a non-zero return only says "Return value ... is
// <n>"), so a host error leaves as an exception whose message starts with the Python class
// PyNative would raise; the outputs are then untouched.
template <class Op>
int aot_kernel(int nparam, void** params, int* ndims, int64_t** shapes, const char** dtypes) {
  try {
    const auto& desc_params = Op::params();
    const int n = static_cast<int>(desc_params.size());
    const int outputs = static_cast<int>(num_outputs<Op>());
    if (nparam != n + 1 + (outputs == 0 ? 1 : outputs)) {
      graph_fail<Op>(AOP_VALUE_ERROR, "the aot kernel takes " + std::to_string(n + 1) + " inputs and " +
                                          std::to_string(outputs == 0 ? 1 : outputs) + " outputs, got " +
                                          std::to_string(nparam) + " parameters");
    }
    const int64_t present = aot_scalar<Op>(params[n], ndims[n], shapes[n], dtypes[n], "present");
    typename Op::Args args{};
    std::vector<desc::Value> values(desc_params.size());
    for (int i = 0; i < n; ++i) {
      const auto& p = desc_params[static_cast<size_t>(i)];
      if (!is_given(p, present, static_cast<size_t>(i))) {
        p.set(args, desc::Value::none());
      } else if (p.is_tensor()) {
        values[i] = desc::Value::of(aot_tensor(params[i], ndims[i], shapes[i], aot_dtype(dtypes[i], Op::kName, p.name),
                                               aop_device{AOP_DEVICE_CPU, 0}, Op::kName, p.name));
        p.set(args, values[i]);
      } else {
        values[i] = scalar_value<Op>(p, aot_scalar<Op>(params[i], ndims[i], shapes[i], dtypes[i], p.name));
        p.set(args, values[i]);
      }
    }
    for (int o = 0; o < outputs; ++o) {
      const auto& out = Op::outputs()[static_cast<size_t>(o)];
      if (!output_present<Op>(values, static_cast<size_t>(o))) continue;
      const int k = n + 1 + o;
      out.set(args, desc::Value::of(aot_tensor(params[k], ndims[k], shapes[k], aot_dtype(dtypes[k], Op::kName, out.name),
                                               aop_device{AOP_DEVICE_CPU, 0}, Op::kName, out.name)));
    }
    Op::run_cpu(args);
    if (outputs == 0) static_cast<int32_t*>(params[nparam - 1])[0] = 0;
    return 0;
  } catch (const Error& e) {
    throw std::runtime_error(std::string(e.status_name()) + ": " + e.what());
  }
}

// The `_ms` module's Graph-mode entries: the aot kernel's symbol, the compile-time check and the
// code of a str value.
template <class Op>
void bind_graph(pybind11::module_& m, const char* aot_symbol) {
  namespace py = pybind11;
  m.attr("AOT_SYMBOL") = aot_symbol;
  m.def(
      "infer",
      [](const std::vector<std::vector<int64_t>>& shapes, const std::vector<std::string>& dtypes,
         const std::vector<std::optional<int64_t>>& scalars, std::optional<int64_t> present) {
        std::vector<std::vector<int64_t>> out;
        call_host([&] { out = infer<Op>(shapes, dtypes, scalars, present); });
        return out;
      },
      py::arg("shapes"), py::arg("dtypes"), py::arg("scalars"), py::arg("present"),
      "Graph compilation: the host's checks on the inferred shapes and dtype names (per argument; "
      "scalars: compile-time values or None); returns the outputs' shapes.");
  m.def(
      "choice_code",
      [](const std::string& name, const std::string& value) {
        int64_t code = 0;
        call_host([&] { code = choice_code<Op>(name, value); });
        return code;
      },
      py::arg("name"), py::arg("value"), "The code a graph passes for a str argument's value (ValueError if refused).");
}

}  // namespace ms_adapter
AOP_NAMESPACE_END
