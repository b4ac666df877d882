// ascend_ops.common._runtime: libascend_ops_common's C interface for Python. Imported by
// ascend_ops.common (_clib.py) only after it loaded the library and checked its ABI; the
// Python-facing functions there shape what this module returns.
#include <dlfcn.h>
#include <pybind11/pybind11.h>

#include <cstring>
#include <string>

#include "ascend_ops/error.hpp"
#include "ascend_ops/module_info.hpp"
#include "ascend_ops/py_error.hpp"
#include "ascend_ops/version.h"
#include "binding.hpp"

namespace aop_runtime {

py::str text(const char* chars, size_t capacity) {
  return py::reinterpret_steal<py::str>(PyUnicode_DecodeUTF8(chars, strnlen(chars, capacity), "replace"));
}

void raise_for(aop_status status, const aop_error& err, const std::string& what) {
  if (status == AOP_OK) return;
  if (err.message[0] == '\0') throw aop::Error(status, what + " failed with status " + std::to_string(status));
  throw aop::Error(status, text(err.message, sizeof(err.message)).cast<std::string>());
}

namespace {

// The file the dynamic linker bound this module's calls to: _clib checks that it is the copy
// it loaded (one copy of the library per process).
std::string bound_library_file() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&aop_common_abi), &info) == 0 || info.dli_fname == nullptr) return "";
  return info.dli_fname;
}

}  // namespace
}  // namespace aop_runtime

PYBIND11_MODULE(_runtime, m) {
  namespace py = pybind11;
  m.doc() = "libascend_ops_common's C interface (caches, dtypes, pools, platforms, threads, asynchronous errors)";
  aop::set_module_info(m);  // COMMON_ABI and COMMON_VERSION this module was compiled against
  aop::register_error_translator();
  m.def("common_version", [] { return std::string(aop_common_version()); });
  m.def("common_abi", [] { return aop_common_abi(); });
  m.def("library_file", &aop_runtime::bound_library_file,
        "Path of the libascend_ops_common.so this module's calls are bound to.");
  aop_runtime::bind_caches(m);
  aop_runtime::bind_dtypes(m);
  aop_runtime::bind_pools(m);
  aop_runtime::bind_platforms(m);
  aop_runtime::bind_threads_and_errors(m);
}
