// C++ side of async_error.h: post an aop::Error found late, raise the pending one.
#pragma once
#include "ascend_ops/async_error.h"
#include "ascend_ops/error.hpp"

AOP_NAMESPACE_BEGIN

// Records `e` as the pending asynchronous error (the first one wins); returns true if recorded.
inline bool post_async_error(const Error& e) noexcept {
  return aop_async_error_post(e.status(), e.what()) != 0;
}

// Throws the pending asynchronous error (after the pollers looked, synchronising if asked), or
// returns when there is none.
inline void raise_async_error(bool synchronize) {
  aop_error err = make_error();
  throw_if(aop_async_error_check(synchronize ? 1 : 0, &err), err);
}

// Throws the pending error if one is already recorded; no poller runs, nothing synchronises.
inline void raise_pending_async_error() {
  if (aop_async_error_pending() == 0) return;
  aop_error err = make_error();
  throw_if(aop_async_error_take(&err), err);
}

AOP_NAMESPACE_END
