// The NPU backend: host checks, tiling copied to device memory from the workspace pool, the
// AscendC kernel launched on the caller's stream. Built only where CANN is found.
#include <vector>

#include "acl/acl.h"
#include "ascend_ops/error.hpp"
#include "ascend_ops/platform.hpp"
#include "ascend_ops/workspace.hpp"
#include "host/reshape_and_cache.h"
#include "kernel/reshape_and_cache_launch.h"

namespace aop::reshape_and_cache {
namespace {

void acl_check(aclError rc, const char* what) {
  if (rc != ACL_SUCCESS) {
    throw aop::Error(AOP_RUNTIME_ERROR, std::string("reshape_and_cache: ") + what +
                                            " failed with aclError " + std::to_string(rc));
  }
}

void* npu_allocate(size_t bytes, size_t /*alignment*/, void* /*ctx*/) {
  void* p = nullptr;
  return aclrtMalloc(&p, bytes, ACL_MEM_MALLOC_HUGE_FIRST) == ACL_SUCCESS ? p : nullptr;
}

void npu_deallocate(void* p, size_t /*bytes*/, void* /*ctx*/) { aclrtFree(p); }

Pool& npu_pool() {
  static const aop_allocator allocator{npu_allocate, npu_deallocate, nullptr, "aclrtMalloc"};
  static Pool pool = Pool::create("reshape_and_cache npu", uint64_t{64} << 20, &allocator);
  return pool;
}

// slot_mapping lives on the device: the range check needs a host copy, taken on `stream` so
// it sees the slots the caller's earlier work produced.
void check_slots_on_device(const Args& a, aclrtStream stream) {
  const size_t bytes = static_cast<size_t>(a.slot_mapping.shape[0]) * aop_dtype_size(a.slot_mapping.dtype);
  if (bytes == 0) return;
  std::vector<unsigned char> host(bytes);
  acl_check(aclrtMemcpyAsync(host.data(), bytes, a.slot_mapping.data, bytes,
                             ACL_MEMCPY_DEVICE_TO_HOST, stream), "copying slot_mapping to host");
  acl_check(aclrtSynchronizeStream(stream), "synchronizing the stream");
  Args on_host = a;
  on_host.slot_mapping.data = host.data();
  check_slots(on_host);
}

}  // namespace

void run_npu(const Args& args, const aop::NpuContext& ctx) {
  const Args a = validated(args);
  auto stream = static_cast<aclrtStream>(ctx.stream);
  check_slots_on_device(a, stream);
  if (a.slot_mapping.shape[0] == 0) return;
  const ReshapeAndCacheTiling t = tiling(a, current_platform());
  Block tiling_block = npu_pool().acquire(sizeof(t));
  acl_check(aclrtMemcpyAsync(tiling_block.data(), sizeof(t), &t, sizeof(t),
                             ACL_MEMCPY_HOST_TO_DEVICE, stream), "copying the tiling");
  reshape_and_cache_launch(static_cast<uint32_t>(t.block_dim), stream,
                           static_cast<uint8_t*>(a.key.data),
                           a.has_value ? static_cast<uint8_t*>(a.value.data) : nullptr,
                           static_cast<uint8_t*>(a.key_cache.data),
                           a.has_value ? static_cast<uint8_t*>(a.value_cache.data) : nullptr,
                           static_cast<uint8_t*>(a.slot_mapping.data), static_cast<uint8_t*>(tiling_block.data()));
  // The tiling block must outlive the kernel: hold it until the stream reaches this point.
  acl_check(aclrtSynchronizeStream(stream), "waiting for the kernel");
}

}  // namespace aop::reshape_and_cache
