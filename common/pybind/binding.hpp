// Pieces of the `_runtime` module (runtime_module.cpp), one source per header of the C interface.
//
// Calls that may wait (synchronising streams, joining worker threads, running the deleters of
// evicted objects or a pool's deallocator) release the GIL, as the ctypes binding this module
// replaces did for every call.
#pragma once
#include <pybind11/pybind11.h>

#include <cstddef>
#include <string>

#include "ascend_ops/error.h"

namespace aop_runtime __attribute__((visibility("hidden"))) {

namespace py = pybind11;

// A NUL-terminated char array of the C structs as str; bytes that are not UTF-8 (a message
// cut inside a character) become U+FFFD.
py::str text(const char* chars, size_t capacity);

// Throws aop::Error (turned into ValueError, TypeError, ... by the module's translator) when a
// C call failed: the library's message, else "<what> failed with status <n>".
void raise_for(aop_status status, const aop_error& err, const std::string& what);

void bind_caches(py::module_& m);
void bind_dtypes(py::module_& m);
void bind_pools(py::module_& m);
void bind_platforms(py::module_& m);
void bind_threads_and_errors(py::module_& m);

}  // namespace aop_runtime
