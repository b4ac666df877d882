// aop::Error -> the Python exception its status names, for every pybind11 module of ascend-ops
// (an op's `_core`, common's `_runtime`).
#pragma once
#include <Python.h>
#include <pybind11/pybind11.h>

#include <exception>

#include "ascend_ops/config.hpp"
#include "ascend_ops/error.hpp"

AOP_NAMESPACE_BEGIN

// Maps aop::Error to the Python exception its status names; register once per module.
inline void register_error_translator() {
  pybind11::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const Error& e) {
      switch (e.status()) {
        case AOP_TYPE_ERROR: PyErr_SetString(PyExc_TypeError, e.what()); return;
        case AOP_INDEX_ERROR: PyErr_SetString(PyExc_IndexError, e.what()); return;
        case AOP_MEMORY_ERROR: PyErr_SetString(PyExc_MemoryError, e.what()); return;
        case AOP_VALUE_ERROR: PyErr_SetString(PyExc_ValueError, e.what()); return;
        default: PyErr_SetString(PyExc_RuntimeError, e.what()); return;
      }
    }
  });
}

AOP_NAMESPACE_END
