// TPipe / TQue / TBuf bookkeeping. Buffers are carved from the block's arenas at InitBuffer
// (32-byte granules, like the hardware allocator); queue state lives in the block, not in the
// kernel's objects, so leaks can be checked after the kernel's destructors have run.
#include <sstream>

#include "state.h"

namespace ascendc_cpu::detail {
namespace {

constexpr uint64_t kGranule = 32;

// HardEvent enumerator values (types.h order).
enum Ev : int {
  kMte2Mte1 = 0, kMte1Mte2 = 1, kMte1M = 2, kMMte1 = 3, kMte2V = 4, kVMte2 = 5, kMte3V = 6, kVMte3 = 7,
  kMte3Mte1 = 11, kMte1Mte3 = 12, kMte1V = 13, kVMte1 = 16, kMFix = 17, kFixM = 18, kMte3Mte2 = 19, kMte2Mte3 = 20,
};
enum class Hw { kGm, kUb, kL1, kL0a, kL0b, kL0c, kNone };

Hw HwOf(AscendC::TPosition p) {
  using AscendC::TPosition;
  switch (p) {
    case TPosition::GM: return Hw::kGm;
    case TPosition::VECIN: case TPosition::VECOUT: case TPosition::VECCALC: return Hw::kUb;
    case TPosition::A1: case TPosition::B1: case TPosition::C1: case TPosition::TSCM: return Hw::kL1;
    case TPosition::A2: return Hw::kL0a;
    case TPosition::B2: return Hw::kL0b;
    case TPosition::CO1: return Hw::kL0c;
    default: return Hw::kNone;
  }
}

// The (EnQue, FreeTensor) events of a queue from its logical data flow, as kernel_event.h's
// GetBufferLogicPos / GetQueEvt map them for Atlas A2 (NPU arch 2201).
void QueueEvents(AscendC::TPosition src, AscendC::TPosition dst, int* enq, int* fre) {
  using AscendC::TPosition;
  *enq = *fre = -1;
  Hw from = Hw::kNone, to = Hw::kNone;
  if (src == dst) {
    switch (src) {
      case TPosition::VECIN: from = Hw::kGm; to = Hw::kUb; break;
      case TPosition::VECOUT: from = Hw::kUb; to = Hw::kGm; break;
      case TPosition::A1: case TPosition::B1: case TPosition::C1: from = Hw::kGm; to = Hw::kL1; break;
      case TPosition::A2: from = Hw::kL1; to = Hw::kL0a; break;
      case TPosition::B2: from = Hw::kL1; to = Hw::kL0b; break;
      case TPosition::CO1: from = Hw::kL0c; to = Hw::kGm; break;
      default: return;  // VECCALC and the rest: no queue events
    }
  } else {
    from = HwOf(src);
    to = HwOf(dst);
  }
  auto set = [&](int e, int f) { *enq = e; *fre = f; };
  if (from == Hw::kGm && to == Hw::kUb) set(kMte2V, kVMte2);
  else if (from == Hw::kGm && to == Hw::kL1) set(kMte2Mte1, kMte1Mte2);
  else if (from == Hw::kUb && to == Hw::kGm) set(kVMte3, kMte3V);
  else if (from == Hw::kUb && to == Hw::kL1) set(kMte3Mte1, kMte1Mte3);
  else if (from == Hw::kUb && to == Hw::kUb) set(kMte2Mte3, kMte3Mte2);
  else if (from == Hw::kL1 && to == Hw::kUb) set(kMte1V, kVMte1);
  else if (from == Hw::kL1 && (to == Hw::kL0a || to == Hw::kL0b)) set(kMte1M, kMMte1);
  else if (from == Hw::kL0c) set(kMFix, kFixM);
}

void ReleaseQueueIds(BlockState& b, int32_t pipe) {
  for (QueueRec& q : b.queues) {
    if (q.pipe != pipe) continue;
    for (int32_t id : q.buffers) {
      BufferRec& buf = b.buffers[static_cast<size_t>(id)];
      if (buf.enq_id >= 0) GiveEventId(b, q.enq_event, buf.enq_id);
      if (buf.free_id >= 0) GiveEventId(b, q.free_event, buf.free_id);
      buf.enq_id = buf.free_id = -1;
    }
  }
}

QueueRec& Queue(BlockState& b, int32_t q, const char* api, SrcLoc loc) {
  if (q < 0 || static_cast<size_t>(q) >= b.queues.size()) {
    Fail(check::kQueueMisuse, loc, std::string(api) + " on a queue/buffer that InitBuffer never set up");
  }
  QueueRec& rec = b.queues[static_cast<size_t>(q)];
  if (!rec.alive) Fail(check::kQueueMisuse, loc, std::string(api) + " on a queue whose TPipe was destroyed");
  return rec;
}

TensorDesc Desc(const BufferRec& buf, int32_t id) {
  TensorDesc t;
  t.mem = buf.mem;
  t.pos = buf.pos;
  t.offset = buf.offset;
  t.extent = buf.bytes;
  t.buffer = id;
  t.generation = buf.generation;
  return t;
}

int32_t Owned(BlockState& b, int32_t qid, const TensorDesc& t, const char* api, SrcLoc loc) {
  if (t.buffer < 0 || static_cast<size_t>(t.buffer) >= b.buffers.size() ||
      b.buffers[static_cast<size_t>(t.buffer)].queue != qid) {
    Fail(check::kQueueMisuse, loc, std::string(api) + ": the tensor does not belong to this queue");
  }
  const BufferRec& buf = b.buffers[static_cast<size_t>(t.buffer)];
  if (t.offset != buf.offset) {
    Fail(check::kQueueMisuse, loc, std::string(api) + ": pass the tensor AllocTensor returned, not a slice of it");
  }
  return t.buffer;
}

void Poison(BlockState& b, const BufferRec& buf, SrcLoc loc) {
  Arena& a = ArenaOf(b, buf.mem, loc);
  std::fill_n(a.data.begin() + buf.offset, buf.bytes, kPoison);
  std::fill_n(a.written.begin() + buf.offset, buf.bytes, 0);
}

}  // namespace

int32_t PipeCreate(SrcLoc loc) {
  BlockState& b = Block(loc);
  PipeRec p;
  for (size_t m = 0; m < p.base.size(); ++m) p.base[m] = b.arenas[m].top;
  b.pipes.push_back(p);
  // A TPipe resets the event pool; on the AIC it keeps three M_MTE1 ids for the matmul macros
  // (kernel_tpipe_impl.h, NPU arch 2201).
  b.event_ids.clear();
  if (b.type == CoreType::kAic) {
    for (int i = 0; i < 3; ++i) TakeEventId(b, kMMte1, "TPipe", loc);
  }
  return static_cast<int32_t>(b.pipes.size() - 1);
}

void PipeRelease(int32_t pipe) noexcept {
  BlockState* b = CurrentBlockOrNull();
  if (b != nullptr && pipe >= 0 && static_cast<size_t>(pipe) < b->pipes.size()) {
    b->pipes[static_cast<size_t>(pipe)].alive = false;
    ReleaseQueueIds(*b, pipe);
  }
}

void PipeDestroy(int32_t pipe, SrcLoc loc) {
  BlockState& b = Block(loc);
  if (pipe < 0 || static_cast<size_t>(pipe) >= b.pipes.size() || !b.pipes[static_cast<size_t>(pipe)].alive) {
    Fail(check::kQueueMisuse, loc, "TPipe::Destroy on a pipe that is not alive");
  }
  for (size_t qi = 0; qi < b.queues.size(); ++qi) {
    QueueRec& q = b.queues[qi];
    if (q.pipe != pipe || !q.alive || q.is_tbuf) continue;
    for (int32_t id : q.buffers) {
      const BufferRec& buf = b.buffers[static_cast<size_t>(id)];
      if (buf.state != BufState::kFree) {
        Fail(check::kQueueLeak, buf.site,
             "TPipe::Destroy while a tensor allocated here is still " +
                 std::string(buf.state == BufState::kEnqueued ? "enqueued" : "not freed"));
      }
    }
  }
  ReleaseQueueIds(b, pipe);
  PipeRec& p = b.pipes[static_cast<size_t>(pipe)];
  for (QueueRec& q : b.queues) {
    if (q.pipe == pipe) q.alive = false;
  }
  for (size_t m = 0; m < p.base.size(); ++m) b.arenas[m].top = p.base[m];
  p.alive = false;
}

int32_t QueueInit(int32_t pipe, int32_t queue, bool is_tbuf, AscendC::TPosition pos, int32_t depth,
                  uint32_t num, uint32_t len, SrcLoc loc) {
  BlockState& b = Block(loc);
  const char* api = "TPipe::InitBuffer";
  if (pipe < 0 || static_cast<size_t>(pipe) >= b.pipes.size() || !b.pipes[static_cast<size_t>(pipe)].alive) {
    Fail(check::kQueueMisuse, loc, "InitBuffer on a TPipe that is not alive");
  }
  if (queue >= 0) Fail(check::kQueueMisuse, loc, "InitBuffer called twice for the same queue/buffer");
  if (num == 0 || len == 0) Fail(check::kApiConstraint, loc, "InitBuffer with zero buffers or zero length");
  const Mem mem = MemOf(pos);
  if (mem == Mem::kNone) Fail(check::kApiConstraint, loc, "InitBuffer at a position with no local memory");
  Arena& a = ArenaOf(b, mem, loc);
  const uint64_t each = (len + kGranule - 1) / kGranule * kGranule;
  const uint64_t need = each * num;
  if (a.top + need > a.size) {
    std::ostringstream os;
    os << api << " of " << num << " x " << len << " B (" << need << " B after 32-byte rounding) at "
       << MemName(mem) << " offset " << a.top << " needs " << a.top + need << " B; " << MemName(mem)
       << " has " << a.size << " B";
    if (!a.allocations.empty()) {
      os << "; already allocated:";
      for (const std::string& s : a.allocations) os << " " << s << ";";
    }
    Fail(check::kUbOverflow, loc, os.str());
  }
  QueueRec q;
  q.is_tbuf = is_tbuf;
  q.depth = depth;
  q.pipe = pipe;
  q.pos = pos;
  q.site = loc;
  const auto qid = static_cast<int32_t>(b.queues.size());
  for (uint32_t i = 0; i < num; ++i) {
    BufferRec buf;
    buf.mem = mem;
    buf.pos = pos;
    buf.offset = static_cast<uint32_t>(a.top + i * each);
    buf.bytes = static_cast<uint32_t>(each);
    buf.queue = qid;
    q.buffers.push_back(static_cast<int32_t>(b.buffers.size()));
    b.buffers.push_back(buf);
  }
  std::ostringstream os;
  os << num << " x " << each << " B at " << Where(loc);
  a.allocations.push_back(os.str());
  a.top += need;
  a.high = std::max(a.high, a.top);
  b.queues.push_back(q);
  return qid;
}

void QueueSetPositions(int32_t qid, AscendC::TPosition src, AscendC::TPosition dst) {
  BlockState& b = Block(SrcLoc{"", 0});
  QueueRec& q = b.queues.at(static_cast<size_t>(qid));
  QueueEvents(src, dst, &q.enq_event, &q.free_event);
}

TensorDesc QueueAlloc(int32_t qid, SrcLoc loc) {
  BlockState& b = Block(loc);
  CloseImplicit(b);
  QueueRec& q = Queue(b, qid, "AllocTensor", loc);
  // Round robin: AscendC's TQueBind::AllocTensor advances its buffer cursor on every try, so a
  // queue of two buffers alternates them (double buffering) instead of reusing the first free one.
  for (size_t tries = 0; tries < q.buffers.size(); ++tries) {
    const int32_t id = q.buffers[q.cursor];
    q.cursor = (q.cursor + 1) % q.buffers.size();
    BufferRec& buf = b.buffers[static_cast<size_t>(id)];
    if (buf.state != BufState::kFree) continue;
    if (buf.free_id >= 0) {  // WaitFlag<freeBufEvt>: the consumer is done with the buffer
      Pipe s, d;
      EventPipes(q.free_event, &s, &d);
      JoinInto(b, d, buf.free_vc, buf.free_time);
      GiveEventId(b, q.free_event, buf.free_id);
      buf.free_id = -1;
    }
    buf.state = BufState::kAllocated;
    ++buf.generation;
    buf.site = loc;
    Poison(b, buf, loc);  // stale data of an earlier tile is as wrong as never-written data
    return Desc(buf, id);
  }
  std::ostringstream os;
  os << "AllocTensor with all " << q.buffers.size()
     << " buffers of the queue in use (the hardware would wait forever); allocated at:";
  for (int32_t id : q.buffers) os << " " << Where(b.buffers[static_cast<size_t>(id)].site);
  Fail(check::kQueueMisuse, loc, os.str());
}

void QueueEnQue(int32_t qid, const TensorDesc& t, SrcLoc loc) {
  BlockState& b = Block(loc);
  QueueRec& q = Queue(b, qid, "EnQue", loc);
  BufferRec& buf = b.buffers[static_cast<size_t>(Owned(b, qid, t, "EnQue", loc))];
  if (buf.state != BufState::kAllocated || buf.generation != t.generation) {
    Fail(check::kQueueMisuse, loc,
         std::string("EnQue of a tensor that is ") + (buf.state == BufState::kEnqueued ? "already enqueued" : "not allocated"));
  }
  if (static_cast<int32_t>(q.fifo.size()) >= q.depth) {
    std::ostringstream os;
    os << "EnQue into a queue of depth " << q.depth << " that already holds " << q.fifo.size() << " tensor(s)";
    Fail(check::kQueueMisuse, loc, os.str());
  }
  CloseImplicit(b);
  if (q.enq_event >= 0) {  // SetFlag<enQueEvt>: what the producer pipe wrote so far
    Pipe s, d;
    EventPipes(q.enq_event, &s, &d);
    buf.enq_id = TakeEventId(b, q.enq_event, "EnQue", loc);
    buf.enq_vc = Signature(b, s);
    buf.enq_time = PipeDoneTime(b, s);
  }
  buf.state = BufState::kEnqueued;
  q.fifo.push_back(t.buffer);
}

TensorDesc QueueDeQue(int32_t qid, SrcLoc loc) {
  BlockState& b = Block(loc);
  QueueRec& q = Queue(b, qid, "DeQue", loc);
  if (q.fifo.empty()) {
    Fail(check::kQueueDeQueEmpty, loc, "DeQue of an empty queue (the hardware would wait forever)");
  }
  const int32_t id = q.fifo.front();
  q.fifo.pop_front();
  BufferRec& buf = b.buffers[static_cast<size_t>(id)];
  CloseImplicit(b);
  if (buf.enq_id >= 0) {  // WaitFlag<enQueEvt> in the consumer pipe
    Pipe s, d;
    EventPipes(q.enq_event, &s, &d);
    JoinInto(b, d, buf.enq_vc, buf.enq_time);
    GiveEventId(b, q.enq_event, buf.enq_id);
    buf.enq_id = -1;
  }
  buf.state = BufState::kAllocated;
  return Desc(buf, id);
}

void QueueFree(int32_t qid, const TensorDesc& t, SrcLoc loc) {
  BlockState& b = Block(loc);
  QueueRec& q = Queue(b, qid, "FreeTensor", loc);
  BufferRec& buf = b.buffers[static_cast<size_t>(Owned(b, qid, t, "FreeTensor", loc))];
  if (buf.state == BufState::kFree || buf.generation != t.generation) {
    Fail(check::kQueueDoubleFree, loc,
         "FreeTensor of a tensor already freed at " + Where(buf.freed) + " (allocated at " + Where(buf.site) + ")");
  }
  if (buf.state == BufState::kEnqueued) {
    Fail(check::kQueueMisuse, loc, "FreeTensor of a tensor still in the queue (DeQue it first)");
  }
  CloseImplicit(b);
  if (q.free_event >= 0) {  // SetFlag<freeBufEvt>: what the consumer pipe did with the buffer
    Pipe s, d;
    EventPipes(q.free_event, &s, &d);
    buf.free_id = TakeEventId(b, q.free_event, "FreeTensor", loc);
    buf.free_vc = Signature(b, s);
    buf.free_time = PipeDoneTime(b, s);
  }
  buf.state = BufState::kFree;
  buf.freed = loc;
}

int32_t QueueCount(int32_t qid, SrcLoc loc) {
  BlockState& b = Block(loc);
  return static_cast<int32_t>(Queue(b, qid, "GetTensorCountInQue", loc).fifo.size());
}

bool QueueVacant(int32_t qid, SrcLoc loc) {
  BlockState& b = Block(loc);
  QueueRec& q = Queue(b, qid, "VacantInQue", loc);
  return static_cast<int32_t>(q.fifo.size()) < q.depth;
}

TensorDesc TBufGet(int32_t qid, uint32_t bytes, uint32_t offset, SrcLoc loc) {
  BlockState& b = Block(loc);
  QueueRec& q = Queue(b, qid, "TBuf::Get", loc);
  const int32_t id = q.buffers.front();
  const BufferRec& buf = b.buffers[static_cast<size_t>(id)];
  if (static_cast<uint64_t>(offset) + bytes > buf.bytes) {
    std::ostringstream os;
    os << "TBuf::Get of " << bytes << " bytes at byte offset " << offset << " from a buffer of " << buf.bytes << " bytes";
    Fail(check::kUbOutOfBounds, loc, os.str());
  }
  TensorDesc t = Desc(buf, id);
  t.offset += offset;
  t.extent = bytes == 0 ? buf.bytes - offset : bytes;
  return t;
}

void CheckBlockEnd(BlockState& b) {
  for (const QueueRec& q : b.queues) {
    if (!q.alive || q.is_tbuf) continue;
    for (int32_t id : q.buffers) {
      const BufferRec& buf = b.buffers[static_cast<size_t>(id)];
      if (buf.state == BufState::kAllocated) {
        Fail(check::kQueueLeak, buf.site, "tensor allocated here was never freed by the end of the kernel");
      }
      if (buf.state == BufState::kEnqueued) {
        Fail(check::kQueueLeak, buf.site,
             "tensor allocated here is still enqueued at the end of the kernel (never dequeued and freed)");
      }
    }
  }
}

}  // namespace ascendc_cpu::detail
