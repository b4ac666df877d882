// One device copy of each tiling per configuration, kept in common's operator cache: the first
// call of a configuration copies it (one H2D copy from pinned host memory, asynchronous on the
// call's stream, ahead of the kernel); every later call finds it and copies nothing.
//
// The copies live in slabs of device memory (and their pinned host mirrors) that are never
// freed nor reused: a queued kernel or a captured graph may read a tiling long after the cache
// evicted its entry, and nothing here may synchronise to find out. A 64 KiB slab holds hundreds
// of tilings (each rounded up to 64 bytes), so allocations are rare and bounded by the number of
// configurations seen.
//
// Known gap: the copy is queued on the stream of the call that missed; a call on another stream
// that hits the entry before that copy ran could read the slot early (no event orders them).
// Warm each configuration up on the stream that uses it (graph capture needs that anyway).
#pragma once
#include <cstddef>
#include <cstring>
#include <memory>
#include <mutex>
#include <string_view>
#include <type_traits>
#include <vector>

#include "acl/acl.h"
#include "ascend_ops/cache.hpp"
#include "ascend_ops/npu/acl_check.hpp"

AOP_NAMESPACE_BEGIN
namespace npu {

constexpr size_t kTilingAlign = 64;
constexpr size_t kTilingSlabBytes = size_t{64} << 10;

// A slot: its device address and the pinned host bytes the H2D copy reads.
struct TilingSlot {
  void* device = nullptr;
  void* host = nullptr;
};

class TilingSlabs {
 public:
  // A fresh slot of `bytes` (<= kTilingSlabBytes) on the current device.
  TilingSlot take(const char* op, int device, size_t bytes) {
    check(bytes <= kTilingSlabBytes, AOP_RUNTIME_ERROR, op, ": a tiling of ", bytes, " bytes exceeds a ",
          kTilingSlabBytes, "-byte slab");
    const size_t rounded = (bytes + kTilingAlign - 1) / kTilingAlign * kTilingAlign;
    std::lock_guard<std::mutex> lock(mutex_);
    Slab* slab = nullptr;
    for (Slab& s : slabs_) {
      if (s.device == device && s.used + rounded <= kTilingSlabBytes) slab = &s;
    }
    if (slab == nullptr) {
      Slab s;
      s.device = device;
      acl_check(aclrtMalloc(&s.device_base, kTilingSlabBytes, ACL_MEM_MALLOC_HUGE_FIRST), op,
                "allocating device memory for tilings");
      acl_check(aclrtMallocHost(&s.host_base, kTilingSlabBytes), op, "allocating pinned host memory for tilings");
      slabs_.push_back(s);
      slab = &slabs_.back();
    }
    const size_t offset = slab->used;
    slab->used += rounded;
    return {static_cast<char*>(slab->device_base) + offset, static_cast<char*>(slab->host_base) + offset};
  }

 private:
  struct Slab {
    int device = 0;
    void* device_base = nullptr;
    void* host_base = nullptr;
    size_t used = 0;
  };
  std::mutex mutex_;
  std::vector<Slab> slabs_;
};

inline TilingSlabs& tiling_slabs() {
  static TilingSlabs* slabs = new TilingSlabs();  // never freed (see above)
  return *slabs;
}

// A cached device copy: the operator cache owns this handle, never the memory.
struct DeviceTiling {
  void* device = nullptr;
};

// The device copy of `tiling` for `device`; on a miss, queues its H2D copy on `stream`.
template <class T>
void* device_tiling(const char* op, const T& tiling, int device, aclrtStream stream) {
  static_assert(std::is_trivially_copyable<T>::value, "a tiling is a POD");
  KeyBuilder key(std::string(op) + " npu tiling");
  key.add_int(device).add_string(std::string_view(reinterpret_cast<const char*>(&tiling), sizeof(T)));
  std::shared_ptr<DeviceTiling> copy = operator_cache().get_or_create_object<DeviceTiling>(key, [&] {
    const TilingSlot slot = tiling_slabs().take(op, device, sizeof(T));
    std::memcpy(slot.host, &tiling, sizeof(T));
    acl_check(aclrtMemcpyAsync(slot.device, sizeof(T), slot.host, sizeof(T), ACL_MEMCPY_HOST_TO_DEVICE, stream), op,
              "copying the tiling to the device");
    return std::make_unique<DeviceTiling>(DeviceTiling{slot.device});
  });
  return copy->device;
}

}  // namespace npu
AOP_NAMESPACE_END
