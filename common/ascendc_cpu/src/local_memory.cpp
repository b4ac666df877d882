// Local (UB / L1 / L0) memory: bounds, alignment, liveness and written-byte shadow checks.
#include <algorithm>
#include <cstring>
#include <sstream>

#include "state.h"

namespace ascendc_cpu::detail {
namespace {

thread_local BlockState* tls_block = nullptr;

// The checks every local access shares; returns the arena the tensor lives in.
Arena& Check(BlockState& b, const TensorDesc& t, int64_t off, int64_t bytes, uint32_t align,
             const char* api, SrcLoc loc) {
  if (t.mem == Mem::kNone) {
    Fail(check::kQueueMisuse, loc,
         std::string(api) + ": the LocalTensor was never allocated (default-constructed)");
  }
  if (t.buffer >= 0) {
    const BufferRec& buf = b.buffers.at(static_cast<size_t>(t.buffer));
    const QueueRec& q = b.queues.at(static_cast<size_t>(buf.queue));
    if (!q.alive) {
      Fail(check::kQueueMisuse, loc, std::string(api) + ": tensor of a queue whose TPipe was destroyed");
    }
    if (!q.is_tbuf && (buf.state == BufState::kFree || buf.generation != t.generation)) {
      Fail(check::kQueueMisuse, loc,
           std::string(api) + ": tensor used after FreeTensor at " + Where(buf.freed) + " (allocated at " +
               Where(buf.site) + ")");
    }
  }
  Arena& a = ArenaOf(b, t.mem, loc);
  if (off < 0 || bytes < 0 || off + bytes > t.extent) {
    std::ostringstream os;
    os << api << ": " << MemName(t.mem) << " access of bytes [" << off << ", " << off + bytes
       << ") of a tensor at offset " << t.offset << " whose buffer has " << std::max<int64_t>(t.extent, 0)
       << " bytes left";
    Fail(check::kUbOutOfBounds, loc, os.str());
  }
  const uint64_t start = t.offset + static_cast<uint64_t>(off);
  if (align > 1 && start % align != 0) {
    std::ostringstream os;
    os << api << ": " << MemName(t.mem) << " address " << start << " is not " << align
       << "-byte aligned";
    Fail(check::kUbUnaligned, loc, os.str());
  }
  if (start + static_cast<uint64_t>(bytes) > a.size) {
    Fail(check::kUbOutOfBounds, loc, std::string(api) + ": access past the end of " + MemName(t.mem));
  }
  return a;
}

}  // namespace

BlockState* CurrentBlockOrNull() { return tls_block; }
void SetCurrentBlock(BlockState* b) { tls_block = b; }

BlockState& Block(SrcLoc loc) {
  if (tls_block == nullptr) {
    throw EmulatorError(check::kApiConstraint, "?", -1, 0, Where(loc), loc.line,
                        "AscendC API called outside ascendc_cpu::Launch");
  }
  return *tls_block;
}

Mem MemOf(AscendC::TPosition pos) {
  using AscendC::TPosition;
  switch (pos) {
    case TPosition::VECIN:
    case TPosition::VECOUT:
    case TPosition::VECCALC:
    case TPosition::CO2:
      return Mem::kUB;
    case TPosition::A1:
    case TPosition::B1:
    case TPosition::C1:
    case TPosition::C2:
    case TPosition::TSCM:
      return Mem::kL1;
    case TPosition::A2:
      return Mem::kL0A;
    case TPosition::B2:
      return Mem::kL0B;
    case TPosition::CO1:
      return Mem::kL0C;
    default:
      return Mem::kNone;
  }
}

const char* MemName(Mem mem) {
  switch (mem) {
    case Mem::kUB: return "UB";
    case Mem::kL1: return "L1";
    case Mem::kL0A: return "L0A";
    case Mem::kL0B: return "L0B";
    case Mem::kL0C: return "L0C";
    default: return "none";
  }
}

Arena& ArenaOf(BlockState& b, Mem mem, SrcLoc loc) {
  const bool vector_mem = mem == Mem::kUB;
  if (mem != Mem::kNone && vector_mem != (b.type == CoreType::kAiv)) {
    Fail(check::kCoreType, loc,
         std::string(MemName(mem)) + " is a memory of the " + (vector_mem ? "AIV (vector)" : "AIC (cube)") +
             " core, and this is " + CoreName(b) + " of a " + KernelTypeName(b.launch->config.kernel_type) +
             " launch: each core has only its own memories; guard the code with `if " +
             (vector_mem ? "ASCEND_IS_AIV" : "ASCEND_IS_AIC") + "` or launch the kernel as the right type");
  }
  Arena& a = b.arenas[static_cast<size_t>(mem)];
  if (a.data.empty()) {  // cube memories are only materialised when a kernel uses them
    const LaunchConfig& c = b.launch->config;
    int64_t size = 0;
    switch (mem) {
      case Mem::kUB: size = c.ub_bytes; break;
      case Mem::kL1: size = c.l1_bytes; break;
      case Mem::kL0A: size = c.l0a_bytes; break;
      case Mem::kL0B: size = c.l0b_bytes; break;
      case Mem::kL0C: size = c.l0c_bytes; break;
      default: Fail(check::kApiConstraint, loc, "no local memory at this position");
    }
    a.size = static_cast<uint64_t>(size);
    a.data.assign(a.size, kPoison);
    a.written.assign(a.size, 0);
  }
  return a;
}

uint8_t* ReadLocal(const TensorDesc& t, int64_t off, int64_t bytes, uint32_t align, const char* api,
                   SrcLoc loc) {
  BlockState& b = Block(loc);
  Arena& a = Check(b, t, off, bytes, align, api, loc);
  const uint64_t start = t.offset + static_cast<uint64_t>(off);
  const uint8_t* w = a.written.data() + start;
  const void* hole = std::memchr(w, 0, static_cast<size_t>(bytes));
  if (hole != nullptr) {
    const int64_t first = static_cast<const uint8_t*>(hole) - w;
    int64_t last = bytes - 1;
    while (last > first && w[last] != 0) --last;
    std::ostringstream os;
    os << api << ": reads " << MemName(t.mem) << " bytes never written: tensor bytes [" << off + first
       << ", " << off + last + 1 << ") (" << MemName(t.mem) << " offset " << start + first << ")";
    Fail(check::kUbUninitialized, loc, os.str());
  }
  if (bytes > 0) {
    CurrentPipe(b, Pipe::kV, api, loc);
    ShadowLocal(b, a, t.mem, start, static_cast<uint64_t>(bytes), false);
  }
  return a.data.data() + start;
}

uint8_t* WriteLocal(const TensorDesc& t, int64_t off, int64_t bytes, uint32_t align, const char* api,
                    SrcLoc loc) {
  BlockState& b = Block(loc);
  Arena& a = Check(b, t, off, bytes, align, api, loc);
  const uint64_t start = t.offset + static_cast<uint64_t>(off);
  std::memset(a.written.data() + start, 1, static_cast<size_t>(bytes));
  if (bytes > 0) {
    CurrentPipe(b, Pipe::kV, api, loc);
    ShadowLocal(b, a, t.mem, start, static_cast<uint64_t>(bytes), true);
  }
  return a.data.data() + start;
}

uint8_t* LocalHostPtr(const TensorDesc& t) {
  BlockState& b = Block(SrcLoc{"", 0});
  if (t.mem == Mem::kNone) return nullptr;
  return ArenaOf(b, t.mem, SrcLoc{"", 0}).data.data() + t.offset;
}

Counters& BlockCounters(SrcLoc loc) { return Block(loc).counters; }

void SetPadValueBytes(const void* value, uint32_t size) {
  BlockState& b = Block(SrcLoc{"", 0});
  const auto* p = static_cast<const uint8_t*>(value);
  b.pad_value.assign(p, p + size);
}

bool PadValueBytes(void* out, uint32_t size) {
  BlockState& b = Block(SrcLoc{"", 0});
  if (b.pad_value.size() < size) return false;  // never set, or set narrower: upper bytes unknown
  std::memcpy(out, b.pad_value.data(), size);
  return true;
}

void WriteGarbage(const TensorDesc& t, int64_t byte_off, int64_t bytes, const char* api, SrcLoc loc) {
  if (bytes <= 0) return;
  std::memset(WriteLocal(t, byte_off, bytes, 1, api, loc), kGarbage, static_cast<size_t>(bytes));
}

}  // namespace ascendc_cpu::detail
