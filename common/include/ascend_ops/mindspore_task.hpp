// Data checks inside MindSpore's queued device task, with the asynchronous error contract
// (async_error.h). Header-only, for every op's PyNative adapter (C++ ABI 0, inside its _ms module).
//
// What MindSpore 2.10 does with an exception thrown inside a PyBoostDeviceTask (measured on the
// CPU wheel, see DESIGN.md "MindSpore adapter facts"): it keeps the exception object and
// rethrows it, once, at its next host synchronisation: Tensor.asnumpy() of any tensor, a print,
// Pipeline::WaitForward(); later ops in the queue still run. The next op call and, on CPU,
// ms.runtime.synchronize() do not raise it. At the Python boundary MindSpore keeps the class of
// exactly pybind11::index_error, value_error and type_error (IndexError, ValueError, TypeError);
// any other std::exception becomes RuntimeError with its what() (a subclass of index_error
// becomes a fresh IndexError: its set_error() is never called).
//
// So run_in_task() rethrows a host aop::Error as a QueuedError<pybind11 class of its status>:
// MindSpore raises it at its next synchronisation as the op's usual exception (class and
// message of the synchronous check). ascend_ops.common.check_errors() sees it through the
// poller watch_queue() registers: it waits for MindSpore's queue, catches the QueuedError that
// MindSpore rethrows there and posts it to common's slot, which check_errors() then raises.
// Either way the error is raised once, by whichever comes first; check_errors(synchronize=False)
// does not wait and so does not see an error still inside MindSpore's queue.
#pragma once
#include <exception>
#include <stdexcept>
#include <utility>

#include "include/runtime/pipeline/pipeline.h"  // Pipeline::WaitForward
#include "utils/ms_exception.h"                  // MsException
#include "pybind11/pybind11.h"                   // MindSpore's bundled copy

#include "ascend_ops/async_error.hpp"
#include "ascend_ops/config.hpp"
#include "ascend_ops/error.hpp"

AOP_NAMESPACE_BEGIN
namespace ms_adapter {

// What the poller recognises as an op's data-check error (and not MindSpore's own).
class QueuedErrorTag {
 public:
  explicit QueuedErrorTag(aop_status status) : status_(status) {}
  virtual ~QueuedErrorTag() = default;
  aop_status status() const { return status_; }
  virtual const char* message() const noexcept = 0;

 private:
  aop_status status_;
};

// A data-check error found in a queued task, as the pybind11 class MindSpore keeps.
template <class PyError>
class QueuedError : public PyError, public QueuedErrorTag {
 public:
  explicit QueuedError(const Error& e) : PyError(e.what()), QueuedErrorTag(e.status()) {}
  const char* message() const noexcept override { return this->what(); }
};

[[noreturn]] inline void throw_queued(const Error& e) {
  switch (e.status()) {
    case AOP_VALUE_ERROR: throw QueuedError<pybind11::value_error>(e);
    case AOP_TYPE_ERROR: throw QueuedError<pybind11::type_error>(e);
    case AOP_INDEX_ERROR: throw QueuedError<pybind11::index_error>(e);
    default: throw QueuedError<std::runtime_error>(e);  // RuntimeError (MemoryError too)
  }
}

namespace detail {

// check_errors()'s poller: with `synchronize`, waits until MindSpore's queues have run every op
// issued so far. An op's data-check error that MindSpore rethrows here goes to common's slot;
// anything else is MindSpore's and is handed back to it (MsException) for its own next sync.
// Called through ctypes, without the GIL.
inline void wait_for_queue(int synchronize, void* /*ctx*/) noexcept {
  if (synchronize == 0) return;
  try {
    mindspore::runtime::Pipeline::Get().WaitForward();
  } catch (const QueuedErrorTag& queued) {
    aop_async_error_post(queued.status(), queued.message());
  } catch (...) {
    mindspore::MsException::Instance().SetException(std::current_exception());
  }
}

}  // namespace detail

// Registers the poller above with common (once per module; common ignores repeats).
inline void watch_queue() {
  static const bool registered = (aop_async_error_add_poller(&detail::wait_for_queue, nullptr), true);
  (void)registered;
}

// Runs a host call inside a queued device task: an aop::Error it throws (outputs untouched: the
// host checks before it writes) is rethrown as a QueuedError for MindSpore to raise at its
// next synchronisation (or for check_errors()).
template <class F>
void run_in_task(F&& host_call) {
  try {
    std::forward<F>(host_call)();
  } catch (const Error& e) {
    throw_queued(e);
  }
}

}  // namespace ms_adapter
AOP_NAMESPACE_END
