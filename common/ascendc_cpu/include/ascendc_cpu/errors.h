// EmulatorError: what every emulator check throws. what() reads
//   [check] kernel 'name' block b/N at file:line: detail
// and the parts are available one by one for tests and the Python translator.
#pragma once
#include <cstdint>
#include <stdexcept>
#include <string>

namespace ascendc_cpu {

// Check names, one per thing the hardware would do silently.
namespace check {
inline constexpr char kUbOverflow[] = "ub-overflow";                  // InitBuffer beyond the UB size
inline constexpr char kDataCopyUnaligned[] = "datacopy-unaligned";    // count bytes % 32 != 0
inline constexpr char kUbUnaligned[] = "ub-unaligned";                // local tensor not 32-byte aligned
inline constexpr char kGmOutOfBounds[] = "gm-out-of-bounds";          // outside every registered region
inline constexpr char kGmReadOnly[] = "gm-write-readonly";            // write into an input region
inline constexpr char kUbOutOfBounds[] = "ub-out-of-bounds";          // past the tensor's buffer
inline constexpr char kUbUninitialized[] = "ub-uninitialized-read";   // read of bytes never written
inline constexpr char kQueueDeQueEmpty[] = "queue-deque-empty";
inline constexpr char kQueueDoubleFree[] = "queue-double-free";
inline constexpr char kQueueLeak[] = "queue-leak";                    // not freed at kernel end
inline constexpr char kQueueMisuse[] = "queue-misuse";                // any other queue/buffer misuse
inline constexpr char kCrossBlockWrite[] = "gm-cross-block-write";    // two blocks, same GM bytes
inline constexpr char kOrderDependence[] = "block-order-dependence";  // result changes with order
inline constexpr char kSyncMismatch[] = "sync-mismatch";              // SyncAll/WaitFlag that would hang
inline constexpr char kApiConstraint[] = "api-constraint";            // documented parameter range
inline constexpr char kKernelException[] = "kernel-exception";        // a C++ exception from the kernel
inline constexpr char kCoreType[] = "core-type";                      // API / memory of the other core type
inline constexpr char kKernelType[] = "kernel-type";                  // KERNEL_TASK_TYPE_DEFAULT vs the launch
inline constexpr char kBlockDim[] = "block-dim";                      // block_dim beyond the platform's cores
inline constexpr char kPipeRace[] = "pipe-race";                      // two pipes/cores, same bytes, unordered
inline constexpr char kHang[] = "hang";                               // a wait no core will ever satisfy
inline constexpr char kDcacheStale[] = "dcache-stale";                // scalar data cache out of date / unflushed
inline constexpr char kEventIdExhausted[] = "event-id-exhausted";     // HardEvent id pool (QUE_MAX_EVENT) empty
}  // namespace check

class EmulatorError : public std::runtime_error {
 public:
  EmulatorError(std::string check, std::string kernel, int32_t block, int32_t block_num,
                std::string file, int line, std::string detail);

  const std::string& check() const noexcept { return check_; }
  const std::string& kernel() const noexcept { return kernel_; }
  int32_t block() const noexcept { return block_; }  // -1 when no single block is at fault
  int32_t block_num() const noexcept { return block_num_; }
  const std::string& file() const noexcept { return file_; }
  int line() const noexcept { return line_; }
  const std::string& detail() const noexcept { return detail_; }

 private:
  std::string check_, kernel_;
  int32_t block_, block_num_;
  std::string file_;
  int line_;
  std::string detail_;
};

}  // namespace ascendc_cpu
