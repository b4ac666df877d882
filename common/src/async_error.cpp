// The process-wide slot of async_error.h and its pollers.
#include <atomic>
#include <cstring>
#include <mutex>
#include <utility>
#include <vector>

#include "ascend_ops/async_error.h"
#include "error_internal.h"

namespace {

struct Slot {
  std::mutex mutex;
  std::atomic<int> pending{0};
  aop_error error{};
  std::vector<std::pair<aop_async_error_poller, void*>> pollers;
  std::mutex pollers_mutex;
};

Slot& slot() {
  static Slot* s = new Slot();  // never destroyed: pollers may run during interpreter shutdown
  return *s;
}

}  // namespace

extern "C" int aop_async_error_post(aop_status status, const char* message) noexcept {
  if (status == AOP_OK) return 0;
  Slot& s = slot();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (s.pending.load(std::memory_order_relaxed) != 0) return 0;
  aop_internal::set_error(&s.error, status, "%s", message != nullptr ? message : "");
  s.pending.store(1, std::memory_order_release);
  return 1;
}

extern "C" aop_status aop_async_error_take(aop_error* out) noexcept {
  Slot& s = slot();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (s.pending.load(std::memory_order_relaxed) == 0) {
    aop_internal::clear_error(out);
    return AOP_OK;
  }
  const aop_status status = s.error.status;
  if (out != nullptr) std::memcpy(out, &s.error, sizeof(aop_error));
  aop_internal::clear_error(&s.error);
  s.pending.store(0, std::memory_order_release);
  return status;
}

extern "C" int aop_async_error_pending(void) noexcept {
  return slot().pending.load(std::memory_order_acquire);
}

extern "C" void aop_async_error_add_poller(aop_async_error_poller fn, void* ctx) noexcept {
  if (fn == nullptr) return;
  Slot& s = slot();
  std::lock_guard<std::mutex> lock(s.pollers_mutex);
  for (const auto& p : s.pollers) {
    if (p.first == fn && p.second == ctx) return;
  }
  s.pollers.emplace_back(fn, ctx);
}

extern "C" aop_status aop_async_error_check(int synchronize, aop_error* out) noexcept {
  Slot& s = slot();
  std::vector<std::pair<aop_async_error_poller, void*>> pollers;
  {
    std::lock_guard<std::mutex> lock(s.pollers_mutex);
    pollers = s.pollers;
  }
  for (const auto& [fn, ctx] : pollers) fn(synchronize, ctx);
  return aop_async_error_take(out);
}
