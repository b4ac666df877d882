// Dtypes (dtype.h): the library's name and size of an aop_dtype value, which
// ascend_ops.common.dtypes mirrors (its tests compare the two tables).
#include <pybind11/pybind11.h>

#include <string>

#include "ascend_ops/dtype.h"
#include "binding.hpp"

namespace aop_runtime {

void bind_dtypes(py::module_& m) {
  m.def("dtype_name", [](int dtype) { return std::string(aop_dtype_name(static_cast<aop_dtype>(dtype))); },
        py::arg("dtype"), "\"float16\", ...; \"unknown\" for a value the library does not know.");
  m.def("dtype_size", [](int dtype) { return aop_dtype_size(static_cast<aop_dtype>(dtype)); },
        py::arg("dtype"), "Bytes per element; 0 for a value the library does not know.");
}

}  // namespace aop_runtime
