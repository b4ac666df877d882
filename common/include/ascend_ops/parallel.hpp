// C++ face of aop_parallel_for: takes any callable, rethrows its first exception here.
#pragma once
#include "ascend_ops/config.hpp"
#include <exception>
#include <mutex>
#include "ascend_ops/parallel.h"

AOP_NAMESPACE_BEGIN

template <class F>  // F: void(int64_t begin, int64_t end)
void parallel_for(int64_t n, int64_t grain, F&& body) {
  struct Ctx {
    F* body;
    std::exception_ptr error;
    std::mutex mutex;
  } ctx{&body, nullptr, {}};
  auto trampoline = [](void* raw, int64_t begin, int64_t end) noexcept {
    auto* c = static_cast<Ctx*>(raw);
    try {
      (*c->body)(begin, end);
    } catch (...) {
      std::lock_guard<std::mutex> lock(c->mutex);
      if (!c->error) c->error = std::current_exception();
    }
  };
  aop_parallel_for(n, grain, trampoline, &ctx);
  if (ctx.error) std::rethrow_exception(ctx.error);
}

AOP_NAMESPACE_END
