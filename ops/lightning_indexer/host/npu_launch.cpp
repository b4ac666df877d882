// The NPU backend: host checks (lengths and block ids on host copies), tiling and the score
// workspace in device memory from the workspace pool, the AscendC kernel launched on the
// caller's stream. Built only where CANN is found.
#include <vector>

#include "acl/acl.h"
#include "ascend_ops/error.hpp"
#include "ascend_ops/platform.hpp"
#include "ascend_ops/tensor.hpp"
#include "ascend_ops/workspace.hpp"
#include "host/lightning_indexer.h"
#include "kernel/lightning_indexer_launch.h"

namespace aop::lightning_indexer {
namespace {

void acl_check(aclError rc, const char* what) {
  if (rc != ACL_SUCCESS) {
    throw aop::Error(AOP_RUNTIME_ERROR, std::string("lightning_indexer: ") + what + " failed with aclError " +
                                            std::to_string(rc));
  }
}

void* npu_allocate(size_t bytes, size_t /*alignment*/, void* /*ctx*/) {
  void* p = nullptr;
  return aclrtMalloc(&p, bytes, ACL_MEM_MALLOC_HUGE_FIRST) == ACL_SUCCESS ? p : nullptr;
}

void npu_deallocate(void* p, size_t /*bytes*/, void* /*ctx*/) { aclrtFree(p); }

Pool& npu_pool() {
  static const aop_allocator allocator{npu_allocate, npu_deallocate, nullptr, "aclrtMalloc"};
  static Pool pool = Pool::create("lightning_indexer npu", uint64_t{64} << 20, &allocator);
  return pool;
}

uint8_t* bytes(void* p) { return static_cast<uint8_t*>(p); }
uint8_t* bytes_or_null(const std::optional<aop_tensor>& t) { return t ? static_cast<uint8_t*>(t->data) : nullptr; }

// The lengths and the block table live on the device: check_data reads host copies, taken on
// `stream` so they hold what the caller's earlier work wrote.
void check_data_on_device(const Args& a, const Dims& d, aclrtStream stream) {
  Args on_host = a;
  std::vector<std::vector<unsigned char>> copies;
  const auto copy = [&](std::optional<aop_tensor>& t, const char* what) {
    if (!t) return;
    const size_t n = static_cast<size_t>(TensorView(*t).numel()) * aop_dtype_size(t->dtype);
    copies.emplace_back(n);
    if (n > 0) {
      acl_check(aclrtMemcpyAsync(copies.back().data(), n, t->data, n, ACL_MEMCPY_DEVICE_TO_HOST, stream), what);
    }
    t->data = copies.back().data();
  };
  copies.reserve(3);
  copy(on_host.actual_seq_lengths_query, "copying actual_seq_lengths_query to host");
  copy(on_host.actual_seq_lengths_key, "copying actual_seq_lengths_key to host");
  copy(on_host.block_table, "copying block_table to host");
  acl_check(aclrtSynchronizeStream(stream), "synchronizing the stream");
  check_data(on_host, d);
}

}  // namespace

void run_npu(const Args& a, const aop::NpuContext& ctx) {
  const Dims d = validate(a);
  check_npu_limits(a, d);
  auto stream = static_cast<aclrtStream>(ctx.stream);
  check_data_on_device(a, d, stream);
  const LightningIndexerTiling t = kernel_tiling(a, d, current_platform());
  if (t.items == 0 || TensorView(a.sparse_indices).numel() == 0) return;
  // MIX 1:2 launch: block_dim (<= the AIC count) groups of 1 AIC + 2 AIVs; two GM score slots per AIC, then the partial lists of split items.
  const size_t workspace_bytes = static_cast<size_t>(t.workspace_floats) * sizeof(float);
  Block tiling_block = npu_pool().acquire(sizeof(t));
  Block workspace = npu_pool().acquire(workspace_bytes);
  acl_check(aclrtMemcpyAsync(tiling_block.data(), sizeof(t), &t, sizeof(t), ACL_MEMCPY_HOST_TO_DEVICE, stream),
            "copying the tiling");
  lightning_indexer_launch(static_cast<uint32_t>(t.block_dim), stream, bytes(a.query.data), bytes(a.key.data),
                           bytes(a.weights.data), bytes_or_null(a.actual_seq_lengths_query),
                           bytes_or_null(a.actual_seq_lengths_key), bytes_or_null(a.block_table),
                           bytes(a.sparse_indices.data), bytes_or_null(a.sparse_values),
                           static_cast<uint8_t*>(workspace.data()), static_cast<uint8_t*>(tiling_block.data()));
  // The tiling and workspace blocks must outlive the kernel: hold them until the stream gets here.
  acl_check(aclrtSynchronizeStream(stream), "waiting for the kernel");
}

}  // namespace aop::lightning_indexer
