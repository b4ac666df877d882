// The boundary between the kernel-facing templates and the emulator runtime (src/*.cpp).
// Kernels never call these directly; every function checks and may throw EmulatorError.
#pragma once
#include <cstdint>
#include <string>

#include "ascendc_cpu/counters.h"
#include "ascendc_cpu/errors.h"
#include "ascendc_cpu/types.h"

namespace ascendc_cpu::detail {

// On-chip memories of one emulated core. UB is the vector core's; L1/L0A/L0B/L0C back the
// cube positions of the matmul path.
enum class Mem : uint8_t { kNone = 0, kUB, kL1, kL0A, kL0B, kL0C, kCount };
Mem MemOf(AscendC::TPosition pos);
const char* MemName(Mem mem);

// What a LocalTensor is: a byte range of one arena, tied to the buffer it was carved from.
struct TensorDesc {
  Mem mem = Mem::kNone;
  AscendC::TPosition pos = AscendC::TPosition::MAX;
  uint32_t offset = 0;    // bytes from the arena start
  int64_t extent = 0;     // bytes from offset to the end of the owning buffer (< 0: past it)
  int32_t buffer = -1;    // owning buffer record
  uint32_t generation = 0;  // the buffer's allocation this tensor came from
};

[[noreturn]] void Fail(const char* check, SrcLoc loc, const std::string& detail);
// An api-constraint failure unless `t` lies in the memory `want` (`what`: "src", "dst", ...).
void CheckPositionIn(const TensorDesc& t, Mem want, const char* what, const char* api, SrcLoc loc);

// Local memory access. `align` is the start alignment the API documents (1 = none).
// ReadLocal also requires every byte to have been written; WriteLocal marks them written.
uint8_t* ReadLocal(const TensorDesc& t, int64_t byte_off, int64_t bytes, uint32_t align,
                   const char* api, SrcLoc loc);
uint8_t* WriteLocal(const TensorDesc& t, int64_t byte_off, int64_t bytes, uint32_t align,
                    const char* api, SrcLoc loc);
// Host address of a tensor, no checks (GetPhyAddr).
uint8_t* LocalHostPtr(const TensorDesc& t);

// The registered GM region a GlobalTensor was set on (SetGlobalBuffer): every access through
// the tensor and its views must stay inside it, so running off the end of one buffer into the
// next registered one is caught too. Empty (end == 0) if the pointer is in no region.
struct GmBounds {
  uintptr_t begin = 0;
  uintptr_t end = 0;
  int32_t region = -1;  // the region the GlobalTensor was set on (regions with views may overlap)
};
GmBounds GmRegionOf(const void* p);

// Global memory access: bounds against the tensor's region, read-only inputs, cross-block
// write ownership, byte counters.
void GmRead(const void* p, uint64_t bytes, const GmBounds& bounds, const char* api, SrcLoc loc);
void GmWrite(const void* p, uint64_t bytes, const GmBounds& bounds, const char* api, SrcLoc loc);

Counters& BlockCounters(SrcLoc loc);

// TPipe / TQue / TBuf bookkeeping.
int32_t PipeCreate(SrcLoc loc);
void PipeDestroy(int32_t pipe, SrcLoc loc);
void PipeRelease(int32_t pipe) noexcept;  // ~TPipe
int32_t QueueInit(int32_t pipe, int32_t queue, bool is_tbuf, AscendC::TPosition pos, int32_t depth,
                  uint32_t num, uint32_t len, SrcLoc loc);
TensorDesc QueueAlloc(int32_t queue, SrcLoc loc);
void QueueEnQue(int32_t queue, const TensorDesc& t, SrcLoc loc);
TensorDesc QueueDeQue(int32_t queue, SrcLoc loc);
void QueueFree(int32_t queue, const TensorDesc& t, SrcLoc loc);
int32_t QueueCount(int32_t queue, SrcLoc loc);
bool QueueVacant(int32_t queue, SrcLoc loc);
TensorDesc TBufGet(int32_t queue, uint32_t bytes, uint32_t offset, SrcLoc loc);

// TQueBind<src, dst>: the logical positions decide which HardEvents EnQue/DeQue and
// FreeTensor/AllocTensor insert (kernel_event.h GetQueEvt, Atlas A2).
void QueueSetPositions(int32_t queue, AscendC::TPosition src, AscendC::TPosition dst);

// Core identity (GetBlockIdx, GetBlockNum, GetSubBlockIdx, GetSubBlockNum, GetTaskRatio,
// ASCEND_IS_AIC / ASCEND_IS_AIV) and synchronisation.
int64_t BlockIdx();
int64_t BlockNum();
int64_t SubBlockIdx();
int64_t SubBlockNum();
int64_t TaskRatio();
bool CoreIsAic();
bool CoreIsAiv();
void DeclareKernelType(int kernel_meta_type, SrcLoc loc);  // KERNEL_TASK_TYPE_DEFAULT
void SyncAllBlocks(SrcLoc loc, bool aiv_only = true, bool hardware = true);
void FlagSet(int event, int id, SrcLoc loc);
void FlagWait(int event, int id, SrcLoc loc);
void Barrier(int pipe, SrcLoc loc);  // PipeBarrier<pipe_t>
void CrossCoreSet(int mode, int pipe, int flag, SrcLoc loc);
void CrossCoreWait(int flag, SrcLoc loc);
void DcacheCleanInvalid(const void* gm, bool entire, SrcLoc loc);  // DataCacheCleanAndInvalid
// HardEvent id pool of the core's TPipe (QUE_MAX_EVENT = 8 ids per HardEvent on Atlas A2).
int32_t EventIdFetch(int event, SrcLoc loc);
int32_t EventIdAlloc(int event, SrcLoc loc);
void EventIdRelease(int event, int32_t id, SrcLoc loc);

// The pipe every access is attributed to. A PipeScope opened at an API's entry makes the
// accesses inside it one instruction of that pipe; local accesses outside any scope are a vector
// instruction that ends at CountVectorOp (VectorOpDone). Timing and happens-before use the pipe.
enum class Pipe : uint8_t { kS = 0, kV, kM, kMte1, kMte2, kMte3, kFix, kCount };
const char* PipeName(Pipe p);
class PipeScope {
 public:
  PipeScope(Pipe pipe, const char* api, SrcLoc loc);
  ~PipeScope();
  PipeScope(const PipeScope&) = delete;
  PipeScope& operator=(const PipeScope&) = delete;

 private:
  bool active_ = false;
};
void VectorOpDone(SrcLoc loc);

// The MOV_PAD_VAL register (dav-c220, kernel_operator_data_copy_impl.h): SetPadValue and every
// GM -> UB DataCopyPad with isPad = true write it (`size` raw bytes, low first);
// every GM -> UB DataCopyPad pads with its low sizeof(T) bytes. PadValueBytes is false while
// it was never written, or was last written with fewer bytes than asked (unspecified content).
void SetPadValueBytes(const void* value, uint32_t size);
bool PadValueBytes(void* out, uint32_t size);

// Marks `bytes` of a local tensor written by the hardware with unspecified content (the
// emulator's garbage pattern), e.g. an API's scratch area.
void WriteGarbage(const TensorDesc& t, int64_t byte_off, int64_t bytes, const char* api, SrcLoc loc);

}  // namespace ascendc_cpu::detail
