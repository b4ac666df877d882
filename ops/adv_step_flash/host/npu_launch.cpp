// The NPU backend: host checks on host copies of the data the step reads, tiling copied to
// device memory from the workspace pool, the AscendC kernel launched on the caller's stream.
// Built only where CANN is found.
#include <vector>

#include "acl/acl.h"
#include "ascend_ops/error.hpp"
#include "ascend_ops/platform.hpp"
#include "ascend_ops/tensor.hpp"
#include "ascend_ops/workspace.hpp"
#include "host/adv_step_flash.h"
#include "kernel/adv_step_flash_launch.h"

namespace aop::adv_step_flash {
namespace {

void acl_check(aclError rc, const char* what) {
  if (rc != ACL_SUCCESS) {
    throw aop::Error(AOP_RUNTIME_ERROR, std::string("advance_step_flashattn: ") + what +
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
  static Pool pool = Pool::create("adv_step_flash npu", uint64_t{16} << 20, &allocator);
  return pool;
}

// The data check reads seq_lens, sampled_token_ids and block_tables: take host copies on
// `stream`, so they are what the caller's earlier work produced, then check them on the host.
void check_data_on_device(const Args& a, aclrtStream stream) {
  Args on_host = a;
  std::vector<unsigned char> lens(TensorView(a.seq_lens).span_bytes());
  std::vector<unsigned char> sampled(TensorView(a.sampled_token_ids).span_bytes());
  std::vector<unsigned char> tables(TensorView(a.block_tables).span_bytes());
  const std::pair<aop_tensor*, std::vector<unsigned char>*> copies[] = {
      {&on_host.seq_lens, &lens}, {&on_host.sampled_token_ids, &sampled}, {&on_host.block_tables, &tables}};
  for (const auto& [tensor, host] : copies) {
    if (!host->empty()) {
      acl_check(aclrtMemcpyAsync(host->data(), host->size(), tensor->data, host->size(),
                                 ACL_MEMCPY_DEVICE_TO_HOST, stream), "copying an input to host");
    }
    tensor->data = host->data();
  }
  acl_check(aclrtSynchronizeStream(stream), "synchronizing the stream");
  check_data(on_host);
}

}  // namespace

void run_npu(const Args& a, const aop::NpuContext& ctx) {
  validate(a);
  auto stream = static_cast<aclrtStream>(ctx.stream);
  check_data_on_device(a, stream);
  const AdvStepFlashTiling t = tiling(a, current_platform());
  Block tiling_block = npu_pool().acquire(sizeof(t));
  acl_check(aclrtMemcpyAsync(tiling_block.data(), sizeof(t), &t, sizeof(t), ACL_MEMCPY_HOST_TO_DEVICE, stream),
            "copying the tiling");
  adv_step_flash_launch(static_cast<uint32_t>(t.block_dim), stream, static_cast<uint8_t*>(a.input_tokens.data),
                        static_cast<uint8_t*>(a.sampled_token_ids.data),
                        static_cast<uint8_t*>(a.input_positions.data), static_cast<uint8_t*>(a.seq_lens.data),
                        static_cast<uint8_t*>(a.slot_mapping.data), static_cast<uint8_t*>(a.block_tables.data),
                        static_cast<uint8_t*>(tiling_block.data()));
  // The tiling block must outlive the kernel: hold it until the stream reaches this point.
  acl_check(aclrtSynchronizeStream(stream), "waiting for the kernel");
}

}  // namespace aop::adv_step_flash
