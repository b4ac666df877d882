// The in-kernel error record of one op on one device, and the asynchronous-error poller that
// turns it into the op's exception (async_error.h).
//
// Each op module keeps, per device it ran on, 64 bytes of pinned host memory mapped for the
// device (aclrtMallocHost + aclrtHostRegister(..., ACL_HOST_REGISTER_MAPPED, &device_ptr)),
// zero at start. The kernel writes it (8 int64 words: [0] code, 0 = no error; [1] index,
// [2] value, [3] aux, [4..7] context the message needs) only if word 0 is 0, after checking
// everything and writing nothing. The
// host reads it without copying or synchronising: a nonzero code becomes the op's exception
// (its kernel_error(record), the same class and message as the synchronous check), posted as
// the pending asynchronous error, and the record is cleared.
//
// The poller (registered on the first NPU call) runs when ascend_ops.common.check_errors()
// asks; with synchronize it first waits for every device the op used. Each NPU call of the op
// polls without synchronising (a few loads) and raises any pending error before it runs.
#pragma once
#include <cstdint>
#include <cstring>
#include <map>
#include <mutex>

#include "acl/acl.h"
#include "ascend_ops/async_error.hpp"
#include "ascend_ops/npu/acl_check.hpp"

AOP_NAMESPACE_BEGIN
namespace npu {

constexpr size_t kErrorRecordBytes = 64;
constexpr int kErrorRecordWords = 8;
using KernelErrorFn = Error (*)(const int64_t record[kErrorRecordWords]);

class ErrorRecords {
 public:
  ErrorRecords(const char* op, KernelErrorFn decode) : op_(op), decode_(decode) {}

  // The device address of `device`'s record (made on first use; registers the poller).
  void* device_record(int device) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = records_.find(device);
    if (it == records_.end()) {
      Record r;
      acl_check(aclrtMallocHost(&r.host, kErrorRecordBytes), op_, "allocating the error record");
      std::memset(r.host, 0, kErrorRecordBytes);
      acl_check(aclrtHostRegister(r.host, kErrorRecordBytes, ACL_HOST_REGISTER_MAPPED, &r.device), op_,
                "mapping the error record for the device");
      it = records_.emplace(device, r).first;
      aop_async_error_add_poller(&ErrorRecords::poll_entry, this);
    }
    return it->second.device;
  }

  // Posts every nonzero record as the op's exception and clears it; with `synchronize`, waits
  // for the devices first. Never throws (runs inside check_errors()).
  void poll(bool synchronize) noexcept {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto& [device, r] : records_) {
      if (synchronize) synchronize_device(device);
      volatile int64_t* words = static_cast<volatile int64_t*>(r.host);
      if (words[0] == 0) continue;
      int64_t record[kErrorRecordWords];
      for (int i = 0; i < kErrorRecordWords; ++i) record[i] = words[i];
      try {
        post_async_error(decode_(record));
      } catch (...) {
        aop_async_error_post(AOP_RUNTIME_ERROR, "an NPU kernel reported an error that could not be decoded");
      }
      for (int i = 0; i < kErrorRecordWords; ++i) words[i] = 0;
    }
  }

 private:
  struct Record {
    void* host = nullptr;
    void* device = nullptr;
  };
  static void poll_entry(int synchronize, void* self) { static_cast<ErrorRecords*>(self)->poll(synchronize != 0); }
  void synchronize_device(int device) noexcept {
    int32_t current = 0;
    const bool restore = aclrtGetDevice(&current) == ACL_SUCCESS && current != device;
    if (aclrtSetDevice(device) != ACL_SUCCESS) return;
    const aclError rc = aclrtSynchronizeDevice();
    if (rc != ACL_SUCCESS) {
      aop_async_error_post(AOP_RUNTIME_ERROR, (std::string(op_) + ": synchronizing the device failed with aclError " +
                                               std::to_string(rc)).c_str());
    }
    if (restore) aclrtSetDevice(current);
  }

  const char* op_;
  KernelErrorFn decode_;
  std::mutex mutex_;
  std::map<int, Record> records_;
};

}  // namespace npu
AOP_NAMESPACE_END
