// Device and pinned host memory of the simulated runtime. Device memory is host memory the
// runtime owns, filled with garbage (0xA5) when allocated, poisoned (ASCEND_SIM_POISON) when
// freed and kept out of reuse for a while (a quarantine), so a kernel that reads freed or
// never-written memory sees it.
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>

#include "ascend_sim/ascend_sim.h"
#include "runtime.h"

namespace ascend_sim {
namespace {

enum class Kind { kDevice, kPinned, kMapped };  // aclrtMalloc / aclrtMallocHost / registered + mapped

struct Region {
  size_t size;
  Kind kind;
  bool host_allocated = false;  // aclrtMallocHost memory (freed by aclrtFreeHost even once mapped)
};

constexpr size_t kQuarantineBytes = size_t{256} << 20;

struct Table {
  std::mutex mutex;
  std::map<uintptr_t, Region> live;
  std::deque<std::pair<void*, size_t>> quarantine;  // freed device memory, poisoned, oldest first
  size_t quarantined = 0;
};

Table& table() {
  static Table* t = new Table();  // never destroyed: stream threads may outlive static destruction
  return *t;
}

// The live region holding [p, p + n), under the table's lock.
const Region* find(Table& t, const void* p, size_t n, uintptr_t* base) {
  const auto a = reinterpret_cast<uintptr_t>(p);
  auto it = t.live.upper_bound(a);
  if (it == t.live.begin()) return nullptr;
  --it;
  if (a + n > it->first + it->second.size || a < it->first) return nullptr;
  if (base != nullptr) *base = it->first;
  return &it->second;
}

aclError allocate(void** out, size_t size, Kind kind, size_t alignment) {
  if (out == nullptr || size == 0) return ACL_ERROR_INVALID_PARAM;
  if (const aclError rc = begin_allocation(); rc != ACL_SUCCESS) return rc;
  const size_t rounded = (size + alignment - 1) / alignment * alignment;
  void* p = std::aligned_alloc(alignment, rounded);
  if (p == nullptr) return ACL_ERROR_BAD_ALLOC;
  std::memset(p, 0xA5, rounded);
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mutex);
  t.live[reinterpret_cast<uintptr_t>(p)] = Region{size, kind, kind == Kind::kPinned};
  counters().allocations++;
  *out = p;
  return ACL_SUCCESS;
}

aclError release(void* p, Kind kind) {
  if (p == nullptr) return ACL_ERROR_INVALID_PARAM;
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mutex);
  auto it = t.live.find(reinterpret_cast<uintptr_t>(p));
  if (it == t.live.end()) return ACL_ERROR_INVALID_PARAM;
  if (kind == Kind::kPinned ? !it->second.host_allocated : it->second.kind != kind) return ACL_ERROR_INVALID_PARAM;
  const size_t size = it->second.size;
  t.live.erase(it);
  counters().frees++;
  if (kind == Kind::kPinned) {
    std::free(p);
    return ACL_SUCCESS;
  }
  std::memset(p, ASCEND_SIM_POISON, size);
  t.quarantine.emplace_back(p, size);
  t.quarantined += size;
  while (t.quarantined > kQuarantineBytes && t.quarantine.size() > 1) {
    t.quarantined -= t.quarantine.front().second;
    std::free(t.quarantine.front().first);
    t.quarantine.pop_front();
  }
  return ACL_SUCCESS;
}

}  // namespace

bool device_accessible(const void* p, size_t n) {
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mutex);
  const Region* r = find(t, p, n, nullptr);
  return r != nullptr && r->kind != Kind::kPinned;
}

bool pinned_host(const void* p, size_t n) {
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mutex);
  const Region* r = find(t, p, n, nullptr);
  return r != nullptr && r->kind != Kind::kDevice;
}

}  // namespace ascend_sim

using namespace ascend_sim;

extern "C" {

aclError aclrtMalloc(void** devPtr, size_t size, aclrtMemMallocPolicy /*policy*/) {
  return allocate(devPtr, size, Kind::kDevice, 512);
}

aclError aclrtFree(void* devPtr) { return release(devPtr, Kind::kDevice); }

aclError aclrtMallocHost(void** hostPtr, size_t size) { return allocate(hostPtr, size, Kind::kPinned, 64); }

aclError aclrtFreeHost(void* hostPtr) { return release(hostPtr, Kind::kPinned); }

// Registering pins the range and maps it for the device at the same address.
aclError aclrtHostRegister(void* ptr, uint64_t size, aclrtHostRegisterType type, void** devPtr) {
  if (ptr == nullptr || size == 0 || devPtr == nullptr || type != ACL_HOST_REGISTER_MAPPED) {
    return ACL_ERROR_INVALID_PARAM;
  }
  if (const aclError rc = begin_allocation(); rc != ACL_SUCCESS) return rc;
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mutex);
  uintptr_t base = 0;
  const Region* r = find(t, ptr, size, &base);
  bool host_allocated = false;
  if (r != nullptr && r->kind == Kind::kPinned && base == reinterpret_cast<uintptr_t>(ptr)) {
    host_allocated = true;  // aclrtMallocHost memory, now mapped too
    t.live.erase(base);
  } else if (r != nullptr) {
    return ACL_ERROR_INVALID_PARAM;
  }
  t.live[reinterpret_cast<uintptr_t>(ptr)] = Region{static_cast<size_t>(size), Kind::kMapped, host_allocated};
  counters().allocations++;
  *devPtr = ptr;
  return ACL_SUCCESS;
}

aclError aclrtHostUnregister(void* ptr) {
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mutex);
  auto it = t.live.find(reinterpret_cast<uintptr_t>(ptr));
  if (it == t.live.end() || it->second.kind != Kind::kMapped) return ACL_ERROR_INVALID_PARAM;
  if (it->second.host_allocated) {
    it->second.kind = Kind::kPinned;  // back to plain aclrtMallocHost memory
  } else {
    t.live.erase(it);
  }
  counters().frees++;
  return ACL_SUCCESS;
}

int ascend_sim_region(const void* ptr, void** base, size_t* size) {
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mutex);
  uintptr_t b = 0;
  const Region* r = find(t, ptr, 1, &b);
  if (r == nullptr || r->kind == Kind::kPinned) return 0;
  if (base != nullptr) *base = reinterpret_cast<void*>(b);
  if (size != nullptr) *size = r->size;
  return 1;
}

}  // extern "C"
