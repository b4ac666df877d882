// The arguments of a Python call of an op's front door (a `_core` or `_ms` function), read by the
// op's description (op_params.hpp): the op's arguments in order, positionally or by name, with
// their schema defaults; the function's own keywords; outputs given by name. Refuses unknown,
// missing and repeated arguments with a TypeError naming the op and the function.
#pragma once
#include <Python.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <string>
#include <vector>

#include "ascend_ops/error.hpp"
#include "ascend_ops/op_params.hpp"

AOP_NAMESPACE_BEGIN
// Hidden, like pybind11's own types that these hold (a module exports only its PyInit).
namespace py_args __attribute__((visibility("hidden"))) {

namespace py = pybind11;

// A keyword of one function besides the op's arguments, with its default.
struct Option {
  const char* name;
  py::object default_value;  // an empty handle: required
};

// One call's arguments: the op's in description order, the function's options by name, and the
// output arrays given by name.
struct Parsed {
  std::vector<py::object> params;
  py::dict options;
  py::dict outputs;
};

inline py::object schema_default(const char* text) {
  const std::string s(text);
  if (s == "None") return py::none();
  if (s == "False") return py::bool_(false);
  if (s == "True") return py::bool_(true);
  if (s.size() >= 2 && s.front() == '"') return py::str(s.substr(1, s.size() - 2));
  size_t used = 0;
  const long long i = std::stoll(s, &used);
  if (used == s.size()) return py::int_(i);
  return py::float_(std::stod(s));  // a float's default: "1.0", "1e-3"
}

template <class Op>
Parsed parse(const char* fn, const py::args& args, const py::kwargs& kwargs, const std::vector<Option>& options) {
  const auto& params = Op::params();
  const auto& outputs = Op::outputs();
  const std::string where = std::string(Op::kName) + "." + fn + "()";
  if (args.size() > params.size()) {
    throw Error(AOP_TYPE_ERROR, where + " takes at most " + std::to_string(params.size()) +
                                    " positional arguments but " + std::to_string(args.size()) + " were given");
  }
  Parsed p;
  p.params.resize(params.size());
  std::vector<bool> given(params.size(), false);
  for (size_t i = 0; i < args.size(); ++i) {
    p.params[i] = py::reinterpret_borrow<py::object>(args[i]);
    given[i] = true;
  }
  for (const auto& item : kwargs) {
    const std::string name = py::str(item.first);
    bool found = false;
    for (size_t i = 0; i < params.size() && !found; ++i) {
      if (name != params[i].name) continue;
      if (given[i]) throw Error(AOP_TYPE_ERROR, where + " got multiple values for argument '" + name + "'");
      p.params[i] = py::reinterpret_borrow<py::object>(item.second);
      given[i] = found = true;
    }
    for (const Option& o : options) {
      if (!found && name == o.name) {
        p.options[o.name] = item.second;
        found = true;
      }
    }
    for (size_t i = 0; i < outputs.size() && !found; ++i) {
      const char* former = outputs[i].former_keyword;
      if (name == outputs[i].name || (former != nullptr && name == former)) {
        if (!item.second.is_none()) p.outputs[outputs[i].name] = item.second;
        found = true;
      }
    }
    if (!found) throw Error(AOP_TYPE_ERROR, where + " got an unexpected keyword argument '" + name + "'");
  }
  for (size_t i = 0; i < params.size(); ++i) {
    if (given[i]) continue;
    if (params[i].default_value == nullptr && !params[i].optional) {
      throw Error(AOP_TYPE_ERROR, where + " missing required argument '" + params[i].name + "'");
    }
    p.params[i] = params[i].default_value != nullptr ? schema_default(params[i].default_value) : py::none();
  }
  for (const Option& o : options) {
    if (p.options.contains(o.name)) continue;
    if (!o.default_value) throw Error(AOP_TYPE_ERROR, where + " missing required argument '" + o.name + "'");
    p.options[o.name] = o.default_value;
  }
  return p;
}

inline std::string type_name(const py::handle& o) { return py::str(py::type::of(o).attr("__name__")); }

// An int argument: a Python or NumPy integer, not a bool.
inline int64_t to_int(const py::handle& o, const char* op, const char* name) {
  if (PyBool_Check(o.ptr()) || !PyIndex_Check(o.ptr())) {
    throw Error(AOP_TYPE_ERROR, std::string(op) + ": " + name + " should be an int but is " + type_name(o) + " " +
                                    py::repr(o).cast<std::string>());
  }
  const py::int_ value = py::reinterpret_steal<py::int_>(PyNumber_Index(o.ptr()));
  int overflow = 0;
  const long long v = PyLong_AsLongLongAndOverflow(value.ptr(), &overflow);
  if (overflow != 0) {
    throw Error(AOP_VALUE_ERROR, std::string(op) + ": " + name + " should fit in int64 but is " +
                                     value.attr("__str__")().cast<std::string>());
  }
  return static_cast<int64_t>(v);
}

// A float argument: a Python or NumPy float or integer (what float() takes but a str), not a bool.
inline double to_float(const py::handle& o, const char* op, const char* name) {
  const bool numpy_bool = type_name(o) == "bool_" || (type_name(o) == "bool" && !PyBool_Check(o.ptr()));
  const PyNumberMethods* number = Py_TYPE(o.ptr())->tp_as_number;
  const bool numeric = PyIndex_Check(o.ptr()) || (number != nullptr && number->nb_float != nullptr);
  if (PyBool_Check(o.ptr()) || numpy_bool || !numeric) {
    throw Error(AOP_TYPE_ERROR, std::string(op) + ": " + name + " should be a float but is " + type_name(o));
  }
  const double v = PyFloat_AsDouble(o.ptr());
  if (v == -1.0 && PyErr_Occurred() != nullptr) {
    const bool overflow = PyErr_ExceptionMatches(PyExc_OverflowError) != 0;  // an int beyond a double's range
    PyErr_Clear();
    if (!overflow) {  // an array of more than one element, a failing __float__
      throw Error(AOP_TYPE_ERROR, std::string(op) + ": " + name + " should be a float but is " + type_name(o));
    }
    throw Error(AOP_VALUE_ERROR, std::string(op) + ": " + name + " should fit in a float but is " +
                                     py::str(o).cast<std::string>());
  }
  return v;
}

}  // namespace py_args
AOP_NAMESPACE_END
