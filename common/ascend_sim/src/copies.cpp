// Copies and memsets of the simulated runtime. Async copies are stream tasks; their host side
// must be pinned (aclrtMallocHost), as CANN <= 8.3 requires on Atlas A2: pageable memory is
// refused (counted) instead of silently accepted. Every copy is counted by direction.
#include <cstring>

#include "runtime.h"

namespace ascend_sim {
namespace {

// The task kind of a copy whose arguments are valid, or nullptr after counting why not.
aclError classify(void* dst, size_t destMax, const void* src, size_t count, aclrtMemcpyKind kind, bool async,
                  TaskKind* out) {
  if (dst == nullptr || src == nullptr || count > destMax) return ACL_ERROR_INVALID_PARAM;
  const bool dst_dev = device_accessible(dst, count), src_dev = device_accessible(src, count);
  switch (kind) {
    case ACL_MEMCPY_HOST_TO_DEVICE:
      if (!dst_dev) return ACL_ERROR_INVALID_PARAM;
      if (async && !pinned_host(src, count)) {
        counters().pageable_refused++;
        return ACL_ERROR_INVALID_PARAM;
      }
      *out = TaskKind::kH2D;
      return ACL_SUCCESS;
    case ACL_MEMCPY_DEVICE_TO_HOST:
      if (!src_dev) return ACL_ERROR_INVALID_PARAM;
      if (async && !pinned_host(dst, count)) {
        counters().pageable_refused++;
        return ACL_ERROR_INVALID_PARAM;
      }
      *out = TaskKind::kD2H;
      return ACL_SUCCESS;
    case ACL_MEMCPY_DEVICE_TO_DEVICE:
      if (!dst_dev || !src_dev) return ACL_ERROR_INVALID_PARAM;
      *out = TaskKind::kD2D;
      return ACL_SUCCESS;
    default:
      return ACL_ERROR_INVALID_PARAM;  // host-to-host and "default" are not used by ascend-ops
  }
}

}  // namespace
}  // namespace ascend_sim

using namespace ascend_sim;

extern "C" {

// Synchronous: the host waits for the copy (a synchronisation, refused during capture).
aclError aclrtMemcpy(void* dst, size_t destMax, const void* src, size_t count, aclrtMemcpyKind kind) {
  TaskKind k;
  if (const aclError rc = classify(dst, destMax, src, count, kind, false, &k); rc != ACL_SUCCESS) return rc;
  if (const aclError rc = begin_synchronization(); rc != ACL_SUCCESS) return rc;
  count_task(k);
  std::memmove(dst, src, count);
  return ACL_SUCCESS;
}

aclError aclrtMemcpyAsync(void* dst, size_t destMax, const void* src, size_t count, aclrtMemcpyKind kind,
                          aclrtStream stream) {
  TaskKind k;
  if (const aclError rc = classify(dst, destMax, src, count, kind, true, &k); rc != ACL_SUCCESS) return rc;
  return submit(stream, std::make_shared<const Task>(Task{k, "memcpy", [dst, src, count] {
                                                             std::memmove(dst, src, count);
                                                             return std::string();
                                                           }}));
}

aclError aclrtMemsetAsync(void* devPtr, size_t maxCount, int32_t value, size_t count, aclrtStream stream) {
  if (devPtr == nullptr || count > maxCount || !device_accessible(devPtr, count)) return ACL_ERROR_INVALID_PARAM;
  return submit(stream, std::make_shared<const Task>(Task{TaskKind::kMemset, "memset", [devPtr, value, count] {
                                                             std::memset(devPtr, value, count);
                                                             return std::string();
                                                           }}));
}

}  // extern "C"
