// Runtime state of a launch and of each emulated block (private to the library).
#pragma once
#include <array>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ascendc_cpu/launch.h"
#include "ascendc_cpu/runtime.h"

namespace ascendc_cpu::detail {

class Scheduler;

constexpr uint8_t kPoison = 0xCD;   // fresh, never-written local memory
constexpr uint8_t kGarbage = 0x7F;  // written by hardware with unspecified content

struct Arena {
  uint64_t size = 0;
  std::vector<uint8_t> data;
  std::vector<uint8_t> written;  // 1 per byte once written
  uint64_t top = 0;              // next free byte for InitBuffer
  uint64_t high = 0;             // high-water mark of top
  std::vector<std::string> allocations;  // "InitBuffer at file:line: n x len B @offset", for errors
};

enum class BufState : uint8_t { kFree, kAllocated, kEnqueued };

struct BufferRec {
  Mem mem;
  AscendC::TPosition pos;
  uint32_t offset;
  uint32_t bytes;
  int32_t queue;
  BufState state = BufState::kFree;
  uint32_t generation = 0;
  SrcLoc site{"", 0};   // last AllocTensor
  SrcLoc freed{"", 0};  // last FreeTensor
};

struct QueueRec {
  bool is_tbuf = false;
  bool alive = true;
  int32_t depth = 0;
  int32_t pipe = -1;
  AscendC::TPosition pos = AscendC::TPosition::MAX;
  std::vector<int32_t> buffers;
  std::deque<int32_t> fifo;
  SrcLoc site{"", 0};  // InitBuffer
};

struct PipeRec {
  bool alive = true;
  std::array<uint64_t, static_cast<size_t>(Mem::kCount)> base{};
};

// Which block last wrote each byte of a writable region, as (epoch << 16) | (block + 1),
// 0 = unwritten. Pages are allocated on first write: kernels like a KV-cache update touch a
// small part of a large output.
class OwnerMap {
 public:
  static constexpr uint64_t kPage = 4096;
  void Reset(uint64_t bytes) {
    pages_.clear();
    pages_.resize((bytes + kPage - 1) / kPage);
  }
  uint32_t Get(uint64_t i) const {
    const auto& p = pages_[i / kPage];
    return p ? p[i % kPage] : 0;
  }
  uint32_t& At(uint64_t i) {
    auto& p = pages_[i / kPage];
    if (!p) p.reset(new uint32_t[kPage]());
    return p[i % kPage];
  }

 private:
  std::vector<std::unique_ptr<uint32_t[]>> pages_;
};

struct RegionState {
  GmRegion region;
  uintptr_t begin = 0, end = 0;
  OwnerMap owner;  // writable regions only
};

struct LaunchState {
  LaunchConfig config;
  std::vector<RegionState> regions;  // sorted by begin, non-overlapping
  uint32_t epoch = 1;                // bumped by every SyncAll
  std::string run_label;             // "in-order" / "shuffled (seed 7)"
  std::vector<int32_t> order;
  Scheduler* scheduler = nullptr;
};

struct BlockState {
  int32_t idx = 0;
  int32_t num = 1;
  LaunchState* launch = nullptr;
  std::array<Arena, static_cast<size_t>(Mem::kCount)> arenas;
  std::vector<BufferRec> buffers;
  std::vector<QueueRec> queues;
  std::vector<PipeRec> pipes;
  Counters counters;
  std::map<int, int32_t> flags;  // (event << 8 | id) -> pending SetFlag count
  std::vector<uint8_t> pad_value;  // SetPadValue bytes, empty if never set
};

// The block the calling thread is emulating; Fail()s with a clear message outside a launch.
BlockState& Block(SrcLoc loc);
BlockState* CurrentBlockOrNull();
void SetCurrentBlock(BlockState* b);

Arena& ArenaOf(BlockState& b, Mem mem, SrcLoc loc);
std::string Where(SrcLoc loc);
// Checks at the end of a block's kernel: queues still holding buffers.
void CheckBlockEnd(BlockState& b);

}  // namespace ascendc_cpu::detail
