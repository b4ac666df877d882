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

// Block identity and synchronisation.
int64_t BlockIdx();
int64_t BlockNum();
void SyncAllBlocks(SrcLoc loc);
void FlagSet(int event, int id, SrcLoc loc);
void FlagWait(int event, int id, SrcLoc loc);

// DataCopyPad padding value set by SetPadValue (raw bytes of the element).
void SetPadValueBytes(const void* value, uint32_t size);
bool PadValueBytes(void* out, uint32_t size);  // false if never set

}  // namespace ascendc_cpu::detail
