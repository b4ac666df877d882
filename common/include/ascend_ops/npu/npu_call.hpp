// The frame of every op's run_npu: before the call, raise an error an earlier call's kernel
// recorded (no synchronisation: the record is host memory); after queuing the call's work,
// nothing, unless the debug switch ASCEND_OPS_NPU_SYNC_CHECKS=1 asks for synchronous checks:
// then wait for the stream and raise this call's error here.
#pragma once
#include "acl/acl.h"
#include "ascend_ops/async_error.hpp"
#include "ascend_ops/npu/acl_check.hpp"
#include "ascend_ops/npu/error_record.hpp"
#include "ascend_ops/npu/sync_checks.hpp"

AOP_NAMESPACE_BEGIN
namespace npu {

// `records`: the op's error records (nullptr while its kernel records no errors).
inline void begin_call(ErrorRecords* records = nullptr) {
  if (records != nullptr) records->poll(false);
  raise_pending_async_error();
}

// After the call's work was handed to the stream (on the calling thread: with the debug switch
// the adapters run it at once instead of queuing it).
inline void end_call(const char* op, aclrtStream stream, ErrorRecords* records = nullptr) {
  if (!sync_checks()) return;
  acl_check(aclrtSynchronizeStream(stream), op, "synchronizing the stream (ASCEND_OPS_NPU_SYNC_CHECKS=1)");
  if (records != nullptr) records->poll(false);
  raise_pending_async_error();
}

}  // namespace npu
AOP_NAMESPACE_END
