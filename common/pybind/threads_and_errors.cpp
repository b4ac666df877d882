// The CPU worker count (parallel.h) and the asynchronous error slot (async_error.h).
#include <pybind11/pybind11.h>

#include <cstdint>
#include <string>

#include "ascend_ops/async_error.h"
#include "ascend_ops/error.hpp"
#include "ascend_ops/parallel.h"
#include "binding.hpp"

namespace aop_runtime {
namespace {

void set_num_threads(int32_t threads) {
  py::gil_scoped_release nogil;  // resizing common's pool joins its workers
  aop_set_num_threads(threads);
}

void check_errors(bool synchronize) {
  aop_error err = aop::make_error();
  aop_status status;
  {
    py::gil_scoped_release nogil;  // pollers synchronise device streams
    status = aop_async_error_check(synchronize ? 1 : 0, &err);
  }
  raise_for(status, err, "check_errors()");
}

bool post_async_error(int status, const std::string& message) {
  return aop_async_error_post(static_cast<aop_status>(status), message.c_str()) != 0;
}

}  // namespace

void bind_threads_and_errors(py::module_& m) {
  m.def("num_threads", [] { return aop_num_threads(); });
  m.def("set_num_threads", &set_num_threads, py::arg("threads"));
  m.def("check_errors", &check_errors, py::arg("synchronize"),
        "Raises the pending asynchronous error (after the pollers looked), or returns None.");
  m.def("post_async_error", &post_async_error, py::arg("status"), py::arg("message"),
        "Records an error as a late check would; True unless one was already pending.");
  m.def("async_error_pending", [] { return aop_async_error_pending() != 0; });
}

}  // namespace aop_runtime
