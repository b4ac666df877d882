// Runtime state of a launch and of each emulated block (private to the library).
#pragma once
#include <array>
#include <cstdint>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "ascendc_cpu/launch.h"
#include "ascendc_cpu/runtime.h"
#include "line_cache.h"

namespace ascendc_cpu::detail {

class Scheduler;

constexpr uint8_t kPoison = 0xCD;   // fresh, never-written local memory
constexpr uint8_t kGarbage = 0x7F;  // written by hardware with unspecified content

// ---- happens-before shadow state --------------------------------------------------------------
constexpr int kPipes = static_cast<int>(Pipe::kCount);
using VClock = std::vector<uint32_t>;  // one entry per (core, pipe) thread: core * kPipes + pipe

// One remembered access: thread + 1 (0 = none), that thread's instruction clock, call site.
struct Access {
  uint16_t tid1 = 0;
  uint16_t pad = 0;
  uint32_t clk = 0;
  uint32_t site = 0;
};
// Shadow of one byte: the last write and up to two unordered reads since.
struct Cell {
  Access w, r0, r1;
  bool operator==(const Cell& o) const { return std::memcmp(this, &o, sizeof(Cell)) == 0; }
};
// Byte shadow allocated page by page on first touch.
class ShadowMap {
 public:
  static constexpr uint64_t kPage = 4096;
  void Reset(uint64_t bytes) {
    pages_.clear();
    pages_.resize((bytes + kPage - 1) / kPage);
  }
  Cell& At(uint64_t i) {
    auto& p = pages_[i / kPage];
    if (!p) p.reset(new Cell[kPage]());
    return p[i % kPage];
  }
  bool Empty() const { return pages_.empty(); }

 private:
  std::vector<std::unique_ptr<Cell[]>> pages_;
};

struct Arena {
  ShadowMap shadow;  // happens-before state of every byte
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
  // Queue events in flight for this buffer: EnQue -> DeQue and FreeTensor -> AllocTensor.
  int32_t enq_id = -1, free_id = -1;  // ids taken from the event pool
  VClock enq_vc, free_vc;
  double enq_time = 0, free_time = 0;
};

struct QueueRec {
  bool is_tbuf = false;
  bool alive = true;
  int32_t depth = 0;
  int32_t pipe = -1;
  AscendC::TPosition pos = AscendC::TPosition::MAX;
  int enq_event = -1;   // HardEvent of EnQue/DeQue (-1: none), e.g. MTE2_V for VECIN
  int free_event = -1;  // HardEvent of FreeTensor/AllocTensor, e.g. V_MTE2 for VECIN
  std::vector<int32_t> buffers;
  size_t cursor = 0;   // AllocTensor tries buffers round robin from here, as AscendC's TQueBind does
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
  OwnerMap owner;     // writable regions only
  ShadowMap shadow;   // writable regions only: happens-before state of every byte
  std::vector<uint8_t> in_view;  // a region with a view: 1 for each byte of its elements
};

// A GM line some core's data cache holds dirty (SetValue not yet flushed).
struct DirtyLine {
  int32_t core = -1;
  uint32_t site = 0;  // the last SetValue into it
  uint64_t mask = 0;  // dirty bytes of the 64-byte line
};

// A call site of an instruction, for race reports.
struct Site {
  const char* api;
  SrcLoc loc;
  int32_t core;
};

// What one pending event carries: the setter's vector clock and the time its pipe is done.
struct Token {
  VClock vc;
  double time = 0;
};

// GM line state for the data-cache model (64-byte lines of writable regions).
struct LineInfo {
  uint32_t version = 0;  // bumped by every write that makes cached copies stale
  uint32_t site = 0;     // the write that bumped it
};

enum class CoreType : uint8_t { kAiv, kAic };

// A core blocked in the scheduler: what it waits for, for hang reports.
struct WaitInfo {
  std::string what;
  SrcLoc loc{"", 0};
  bool syncall = false;
  bool aiv_only = true;
};

struct BlockState;

struct LaunchState {
  LaunchConfig config;
  std::vector<RegionState> regions;  // sorted by begin; only regions with views overlap
  bool overlapping_views = false;    // some regions overlap (Containing scans them all)
  uint32_t epoch = 1;                // bumped by every SyncAll
  std::string run_label;             // "in-order" / "shuffled (seed 7)"
  std::vector<int32_t> order;
  Scheduler* scheduler = nullptr;
  // Everything below is touched only by the core holding the scheduler's baton.
  std::vector<BlockState>* cores = nullptr;
  int32_t sub_num = 1;               // AIVs per logical block (2 for MIX 1:2)
  bool has_aic = false, has_aiv = true, mix = false;
  std::vector<Site> sites;           // sites[0] is a placeholder
  std::unordered_map<uint64_t, LineInfo> lines;  // GM line address / 64 -> state (lines some core cached)
  std::unordered_map<uint64_t, DirtyLine> dirty; // GM line address / 64 -> unflushed scalar writes
  std::map<std::tuple<const void*, const void*, int, int32_t>, uint32_t> site_ids;
  // SyncAll barriers, one per participant set (0: every AIV, 1: every core).
  struct BarrierState {
    uint64_t generation = 0;
    int32_t arrived = 0;
    VClock vc;
    double time = 0;
    VClock released_vc;
    double released_time = 0;
  } barriers[2];
  // The hardware SyncAll's own cross-core flags 11..14 (asc-devkit dav_c220
  // kernel_operator_sync_impl.h: SYNC_AIC_FLAG 11, SYNC_AIV_FLAG 12, SYNC_AIC_AIV_FLAG 13,
  // SYNC_AIV_ONLY_ALL 14): where the launch first called the hardware SyncAll, and where the kernel
  // first used one of those ids itself (file nullptr: not yet).
  SrcLoc first_sync_all{nullptr, 0};
  SrcLoc first_reserved_flag{nullptr, 0};
  int reserved_flag = -1;
  // Cross-core flag sets waiting for the other participants: (mode, group/type, flag) -> per participant.
  std::map<std::tuple<int, int, int>, std::vector<std::deque<Token>>> pending_sets;
  uint64_t gm_bytes = 0;             // total GM traffic of the run (timing model's L2 bound)
  uint64_t hbm_bytes = 0;            // the part of it that missed the L2 (timing model's HBM bound)
  LineCache l2{0, 512};
  // Timing trace of the first run (ASCENDC_CPU_TRACE=<csv path>): one record per instruction and
  // per cross-core wait / SyncAll, written when the run ends.
  bool tracing = false;
  struct TraceRec {
    int32_t core;
    Pipe pipe;
    bool wait;  // a cross-core wait or SyncAll: [start, end) is the time the scalar unit was held
    uint32_t site;
    double start, end, done;  // cycles
  };
  std::vector<TraceRec> trace;
};

// The instruction a core is issuing: a PipeScope or an implicit vector instruction.
struct Instr {
  bool open = false;
  bool implicit = false;
  int depth = 0;
  Pipe pipe = Pipe::kS;
  uint32_t clk = 0;
  uint32_t site = 0;
  uint64_t gm_bytes = 0, gm_accesses = 0, local_read = 0, local_write = 0, macs0 = 0, int8_macs0 = 0;
  uint64_t dcache_misses = 0;  // scalar GM accesses that missed the core's data cache
};

struct BlockState {
  int32_t idx = 0;     // GetBlockIdx()
  int32_t num = 1;     // GetBlockNum() = block_dim
  int32_t core = 0;    // index in the launch's core list
  int32_t group = 0;   // logical block (AI Core) this core belongs to
  int32_t sub = 0;     // GetSubBlockIdx()
  CoreType type = CoreType::kAiv;
  LaunchState* launch = nullptr;
  // Happens-before: per pipe the vector clock of what that pipe's next instruction is ordered
  // after, and the pipe's own instruction counter.
  std::array<VClock, kPipes> vc;
  std::array<uint32_t, kPipes> cur{};
  Instr instr;
  // Timing model (cycles): when each pipe is free, when sync edges let it start, busy time.
  // pipe_free: the pipe can start its next instruction; pipe_done: its last one has completed
  // (a DMA's latency delays completion but does not hold the pipe).
  std::array<double, kPipes> pipe_free{}, pipe_done{}, ready{}, busy{};
  std::array<double, kPipes> fixed{};  // the part of busy that is per-instruction latency, not throughput
  double issue = 0;     // the scalar unit's issue time
  double end_time = 0;  // last instruction end
  std::map<int, std::deque<Token>> flag_tokens;        // SetFlag/WaitFlag: (event << 8 | id)
  std::array<std::deque<Token>, 16> cross_flags;       // cross-core flag counters
  std::map<int, uint8_t> event_ids;                    // HardEvent -> bitmask of taken ids
  std::unordered_map<uint64_t, uint32_t> dcache;       // GM line -> version when cached
  LineCache dcache_timing{0, 64};                      // the timing model's view of the data cache
  int declared_type = -1;                              // KERNEL_TASK_TYPE_DEFAULT seen
  WaitInfo waiting;
  std::array<Arena, static_cast<size_t>(Mem::kCount)> arenas;
  std::vector<BufferRec> buffers;
  std::vector<QueueRec> queues;
  std::vector<PipeRec> pipes;
  Counters counters;
  std::map<int, int32_t> flags;  // (event << 8 | id) -> pending SetFlag count
  std::vector<uint8_t> pad_value;  // MOV_PAD_VAL register bytes (low first), empty if never set
};

// The block the calling thread is emulating; Fail()s with a clear message outside a launch.
BlockState& Block(SrcLoc loc);
BlockState* CurrentBlockOrNull();
void SetCurrentBlock(BlockState* b);

Arena& ArenaOf(BlockState& b, Mem mem, SrcLoc loc);
std::string Where(SrcLoc loc);
std::string CoreName(const BlockState& b);  // "AIV 3 (block 1, sub 1)"

// ---- pipes.cpp: instructions, happens-before, timing, data cache -------------------------------
void InitCorePipes(BlockState& b, int32_t ncores);
void CloseImplicit(BlockState& b);           // ends an open implicit vector instruction
Pipe CurrentPipe(BlockState& b, Pipe implicit_pipe, const char* api, SrcLoc loc);  // opens one if needed
void ShadowLocal(BlockState& b, Arena& a, Mem mem, uint64_t start, uint64_t bytes, bool write);
void ShadowGm(BlockState& b, RegionState& r, uint64_t first, uint64_t bytes, bool write);
VClock Signature(const BlockState& b, Pipe p);
void JoinInto(BlockState& b, Pipe p, const VClock& vc, double time);
void JoinAll(BlockState& b, const VClock& vc, double time);
void BarrierAll(BlockState& b);              // PipeBarrier<PIPE_ALL>
Pipe PipeOfPipeT(int pipe_t_value, SrcLoc loc);
bool EventPipes(int event, Pipe* src, Pipe* dst);  // HardEvent -> (src pipe, dst pipe)
const char* EventName(int event);
int32_t TakeEventId(BlockState& b, int event, const char* api, SrcLoc loc);
void GiveEventId(BlockState& b, int event, int32_t id);
double PipeDoneTime(const BlockState& b, Pipe p);
// The trace record of a wait that holds the scalar unit until `until` (cycles), when tracing.
void TraceWait(BlockState& b, const char* api, SrcLoc loc, double until);
void FlushLines(BlockState& b, const std::vector<uint64_t>& lines);  // DataCacheCleanAndInvalid
// Checks at the end of a block's kernel: queues still holding buffers.
void CheckBlockEnd(BlockState& b);

}  // namespace ascendc_cpu::detail
