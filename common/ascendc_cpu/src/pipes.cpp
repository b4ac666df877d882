// Asynchronous pipes: every access belongs to an instruction of one pipe of one core. Functionally
// the emulator still executes in program order; this file keeps what the hardware would NOT
// guarantee:
//  * happens-before: per core and pipe a vector clock over all (core, pipe) threads. Edges come
//    only from queue events, SetFlag/WaitFlag, PipeBarrier, SyncAll, cross-core flags and the
//    compiler's documented auto-sync (AIV only: S<->V, S<->MTE2, S<->MTE3, V<->V; nothing on AIC;
//    DK docs/zh/api/SIMD-API/基础API/同步控制/核内同步/关键特性说明.md, table 3). MTE2 and MTE3 do not
//    order their own overlapping accesses (same doc: "PIPE_MTE2/PIPE_MTE3在搬运地址有重叠的情况下需要
//    开发者插入同步"); S, V (AIV), M, MTE1 and FIX execute in order.
//  * a shadow cell per byte of local memory and of writable GM: last write and up to two
//    unordered reads; two accesses from different threads, one a write, with no edge = pipe-race.
//  * the scalar data cache: GlobalTensor::SetValue stays in the core's cache until
//    DataCacheCleanAndInvalid; a GetValue of a line written by someone else since it was cached,
//    or any other access to bytes a core holds unflushed, is dcache-stale.
//  * the timing model: each instruction starts when its pipe is free, the scalar unit has issued
//    it and the sync edges into its pipe have fired (timing_model.h holds the costs).
#include <algorithm>
#include <sstream>

#include "ascendc_cpu/timing_model.h"
#include "state.h"

namespace ascendc_cpu::detail {
namespace {

constexpr uint64_t kLine = 64;

int Tid(int32_t core, Pipe p) { return core * kPipes + static_cast<int>(p); }
Pipe PipeOfTid(int tid) { return static_cast<Pipe>(tid % kPipes); }
int32_t CoreOfTid(int tid) { return tid / kPipes; }
size_t P(Pipe p) { return static_cast<size_t>(p); }

bool InOrder(Pipe p) { return p != Pipe::kMte2 && p != Pipe::kMte3; }

bool AutoSync(const BlockState& b, Pipe a, Pipe c) {
  if (b.type != CoreType::kAiv) return false;  // "Cube计算单元中，毕昇编译器不支持自动插入任何类型的同步"
  auto pair = [&](Pipe x, Pipe y) { return (a == x && c == y) || (a == y && c == x); };
  return pair(Pipe::kS, Pipe::kV) || pair(Pipe::kS, Pipe::kMte2) || pair(Pipe::kS, Pipe::kMte3) ||
         (a == Pipe::kV && c == Pipe::kV);
}

struct EventDef {
  const char* name;
  Pipe src, dst;
};
// HardEvent enumerators in types.h order.
constexpr EventDef kEvents[] = {
    {"MTE2_MTE1", Pipe::kMte2, Pipe::kMte1}, {"MTE1_MTE2", Pipe::kMte1, Pipe::kMte2},
    {"MTE1_M", Pipe::kMte1, Pipe::kM},       {"M_MTE1", Pipe::kM, Pipe::kMte1},
    {"MTE2_V", Pipe::kMte2, Pipe::kV},       {"V_MTE2", Pipe::kV, Pipe::kMte2},
    {"MTE3_V", Pipe::kMte3, Pipe::kV},       {"V_MTE3", Pipe::kV, Pipe::kMte3},
    {"M_V", Pipe::kM, Pipe::kV},             {"V_M", Pipe::kV, Pipe::kM},
    {"V_V", Pipe::kV, Pipe::kV},             {"MTE3_MTE1", Pipe::kMte3, Pipe::kMte1},
    {"MTE1_MTE3", Pipe::kMte1, Pipe::kMte3}, {"MTE1_V", Pipe::kMte1, Pipe::kV},
    {"MTE2_M", Pipe::kMte2, Pipe::kM},       {"M_MTE2", Pipe::kM, Pipe::kMte2},
    {"V_MTE1", Pipe::kV, Pipe::kMte1},       {"M_FIX", Pipe::kM, Pipe::kFix},
    {"FIX_M", Pipe::kFix, Pipe::kM},         {"MTE3_MTE2", Pipe::kMte3, Pipe::kMte2},
    {"MTE2_MTE3", Pipe::kMte2, Pipe::kMte3}, {"S_V", Pipe::kS, Pipe::kV},
    {"V_S", Pipe::kV, Pipe::kS},             {"S_MTE2", Pipe::kS, Pipe::kMte2},
    {"MTE2_S", Pipe::kMte2, Pipe::kS},       {"S_MTE3", Pipe::kS, Pipe::kMte3},
    {"MTE3_S", Pipe::kMte3, Pipe::kS},       {"MTE2_FIX", Pipe::kMte2, Pipe::kFix},
    {"FIX_MTE2", Pipe::kFix, Pipe::kMte2},   {"FIX_S", Pipe::kFix, Pipe::kS},
    {"M_S", Pipe::kM, Pipe::kS},             {"FIX_MTE3", Pipe::kFix, Pipe::kMte3},
    {"MTE1_FIX", Pipe::kMte1, Pipe::kFix},   {"FIX_MTE1", Pipe::kFix, Pipe::kMte1},
    {"FIX_FIX", Pipe::kFix, Pipe::kFix},
};
constexpr int kEventCount = static_cast<int>(sizeof(kEvents) / sizeof(kEvents[0]));
static_assert(kEventCount == static_cast<int>(AscendC::HardEvent::MAX), "kEvents lists every HardEvent, in order");

std::string EventFor(Pipe src, Pipe dst) {
  for (const EventDef& e : kEvents) {
    if (e.src == src && e.dst == dst) return std::string("SetFlag/WaitFlag<HardEvent::") + e.name + ">";
  }
  return std::string("a sync from PIPE_") + PipeName(src) + " to PIPE_" + PipeName(dst);
}

uint32_t Intern(BlockState& b, const char* api, SrcLoc loc) {
  LaunchState& l = *b.launch;
  auto key = std::make_tuple(static_cast<const void*>(api), static_cast<const void*>(loc.file), loc.line, b.core);
  auto it = l.site_ids.find(key);
  if (it != l.site_ids.end()) return it->second;
  if (l.sites.empty()) l.sites.push_back(Site{"", SrcLoc{"", 0}, -1});
  l.sites.push_back(Site{api, loc, b.core});
  const auto id = static_cast<uint32_t>(l.sites.size() - 1);
  l.site_ids.emplace(key, id);
  return id;
}

std::string SiteText(const LaunchState& l, uint32_t site) {
  if (site == 0 || site >= l.sites.size()) return "?";
  const Site& s = l.sites[site];
  return std::string(s.api) + " at " + Where(s.loc);
}

const BlockState& CoreAt(const LaunchState& l, int32_t core) { return (*l.cores)[static_cast<size_t>(core)]; }

void CheckPipeOnCore(const BlockState& b, Pipe p, const char* api, SrcLoc loc) {
  if (b.type == CoreType::kAic && p == Pipe::kV) {
    Fail(check::kCoreType, loc,
         std::string(api) + ": a vector (PIPE_V) instruction on " + CoreName(b) +
             "; the cube core has no vector unit (the AIC build turns vector APIs into no-ops): guard the "
             "vector code with `if ASCEND_IS_AIV` or launch the kernel as AIV");
  }
  if (b.type == CoreType::kAiv && (p == Pipe::kM || p == Pipe::kMte1 || p == Pipe::kFix)) {
    Fail(check::kCoreType, loc,
         std::string(api) + ": a cube (PIPE_" + PipeName(p) + ") instruction on " + CoreName(b) +
             "; the vector core has no cube unit (the AIV build turns cube APIs into no-ops): guard the cube "
             "code with `if ASCEND_IS_AIC` and launch the kernel as KERNEL_TYPE_MIX_AIC_1_2 or AIC-only");
  }
}

void BeginInstr(BlockState& b, Pipe p, const char* api, SrcLoc loc) {
  CheckPipeOnCore(b, p, api, loc);
  Instr& in = b.instr;
  const int depth = in.depth;
  in = Instr{};
  in.depth = depth;
  in.open = true;
  in.pipe = p;
  in.clk = ++b.cur[P(p)];
  if (InOrder(p)) b.vc[P(p)][static_cast<size_t>(Tid(b.core, p))] = in.clk;
  in.site = Intern(b, api, loc);
  in.macs0 = b.counters.cube_macs;
  in.int8_macs0 = b.counters.cube_int8_macs;
}

void EndInstr(BlockState& b) noexcept {
  Instr& in = b.instr;
  if (!in.open) return;
  in.open = false;
  using namespace timing;
  const Pipe p = in.pipe;
  double cost = 0, fixed = 0, latency = 0;  // latency: delays completion, does not hold the pipe
  const double local = static_cast<double>(std::max(in.local_read, in.local_write));
  switch (p) {
    case Pipe::kS:
      cost = kScalarLocalCycles + static_cast<double>(in.dcache_misses) * kScalarGmCycles;
      break;
    case Pipe::kV:
      fixed = kVectorStartCycles;
      cost = fixed + local / kVectorBytesPerCycle;
      break;
    case Pipe::kM:
      fixed = kCubeStartCycles;
      {
        const double int8 = static_cast<double>(b.counters.cube_int8_macs - in.int8_macs0);
        const double other = static_cast<double>(b.counters.cube_macs - in.macs0) - int8;
        cost = fixed + other / kCubeMacsPerCycle + int8 / kCubeInt8MacsPerCycle;
      }
      break;
    case Pipe::kMte1:
      fixed = kMte1StartCycles;
      cost = fixed + local / kMte1BytesPerCycle;
      break;
    case Pipe::kMte2:
    case Pipe::kMte3:
    case Pipe::kFix:
      if (in.gm_bytes > 0) {
        fixed = static_cast<double>(in.gm_accesses > 0 ? in.gm_accesses - 1 : 0) * kDmaBurstCycles;
        cost = fixed + static_cast<double>(in.gm_bytes) / kDmaBytesPerCycle;
        latency = kDmaLatencyCycles;
      } else {
        fixed = kMte1StartCycles;
        cost = fixed + local / kMte1BytesPerCycle;  // local <-> local moves
      }
      break;
    default:
      break;
  }
  const size_t i = P(p);
  const double start = std::max({b.pipe_free[i], b.ready[i], b.issue});
  const double end = start + cost;
  const double done = std::max(b.pipe_done[i], end + latency);  // a pipe completes in order
  if (p == Pipe::kS) {
    b.issue = end;
  } else {
    b.issue += kIssueCycles;
  }
  b.pipe_free[i] = end;
  b.pipe_done[i] = done;
  b.busy[i] += cost;
  b.fixed[i] += fixed;
  b.end_time = std::max({b.end_time, done, b.issue});
  if (b.launch->tracing) b.launch->trace.push_back({b.core, p, false, in.site, start, end, done});
}

bool Ordered(BlockState& b, Pipe p, const Access& a) {
  if (a.tid1 == 0) return true;
  const int t = a.tid1 - 1;
  const int me = Tid(b.core, p);
  VClock& vc = b.vc[P(p)];
  if (t == me) return a.clk == b.instr.clk || a.clk <= vc[static_cast<size_t>(me)];
  if (CoreOfTid(t) == b.core && AutoSync(b, PipeOfTid(t), p)) {
    uint32_t& v = vc[static_cast<size_t>(t)];
    v = std::max(v, a.clk);  // the compiler's sync: the earlier instruction completes first
    return true;
  }
  return a.clk <= vc[static_cast<size_t>(t)];
}

[[noreturn]] void Race(BlockState& b, const Access& other, bool other_write, bool write, const std::string& what,
                       bool gm) {
  const LaunchState& l = *b.launch;
  const int t = other.tid1 - 1;
  const Pipe op = PipeOfTid(t), p = b.instr.pipe;
  const int32_t oc = CoreOfTid(t);
  const Site& mine = l.sites[b.instr.site];
  std::ostringstream os;
  os << mine.api << " (PIPE_" << PipeName(p) << ") " << (write ? "writes " : "reads ") << what << " that "
     << SiteText(l, other.site) << " (PIPE_" << PipeName(op);
  if (oc != b.core) os << " on " << CoreName(CoreAt(l, oc));
  os << ") " << (other_write ? "wrote" : "read") << ", and nothing orders the two";
  if (oc != b.core) {
    os << ": the cores meet only through SyncAll or CrossCoreSetFlag/CrossCoreWaitFlag";
  } else if (op == p) {
    os << ": PIPE_" << PipeName(p) << " does not order overlapping moves; add PipeBarrier<PIPE_" << PipeName(p) << ">()";
  } else {
    os << ": add " << EventFor(op, p) << " between them (or pass the tensor through a TQue)";
  }
  const bool cross_write = gm && write && other_write && oc != b.core;
  Fail(cross_write ? check::kCrossBlockWrite : check::kPipeRace, mine.loc, os.str());
}

template <class CellAt, class Describe>
void ShadowRange(BlockState& b, uint64_t bytes, bool write, bool gm, CellAt cell_at, Describe describe) {
  const Pipe p = b.instr.pipe;
  const int me = Tid(b.core, p);
  Access mine;
  mine.tid1 = static_cast<uint16_t>(me + 1);
  mine.clk = b.instr.clk;
  mine.site = b.instr.site;
  Cell prev_in, prev_out;
  bool have_prev = false;
  for (uint64_t i = 0; i < bytes; ++i) {
    Cell& c = cell_at(i);
    if (have_prev && c == prev_in) {
      c = prev_out;
      continue;
    }
    const Cell in = c;
    if (!Ordered(b, p, c.w)) Race(b, c.w, true, write, describe(i), gm);
    if (write) {
      if (!Ordered(b, p, c.r0)) Race(b, c.r0, false, true, describe(i), gm);
      if (!Ordered(b, p, c.r1)) Race(b, c.r1, false, true, describe(i), gm);
      c.w = mine;
      c.r0 = Access{};
      c.r1 = Access{};
    } else if (c.r0.tid1 == mine.tid1) {
      c.r0 = mine;
    } else if (c.r1.tid1 == mine.tid1) {
      c.r1 = mine;
    } else if (c.r0.tid1 == 0 || Ordered(b, p, c.r0)) {
      c.r0 = mine;
    } else {
      c.r1 = mine;  // a third unordered reader replaces the second (documented limit)
    }
    prev_in = in;
    prev_out = c;
    have_prev = true;
  }
}

}  // namespace

const char* PipeName(Pipe p) {
  switch (p) {
    case Pipe::kS: return "S";
    case Pipe::kV: return "V";
    case Pipe::kM: return "M";
    case Pipe::kMte1: return "MTE1";
    case Pipe::kMte2: return "MTE2";
    case Pipe::kMte3: return "MTE3";
    case Pipe::kFix: return "FIX";
    default: return "?";
  }
}

const char* EventName(int event) { return event >= 0 && event < kEventCount ? kEvents[event].name : "?"; }

bool EventPipes(int event, Pipe* src, Pipe* dst) {
  if (event < 0 || event >= kEventCount) return false;
  *src = kEvents[event].src;
  *dst = kEvents[event].dst;
  return true;
}

Pipe PipeOfPipeT(int v, SrcLoc loc) {
  switch (v) {  // pipe_t: PIPE_S, PIPE_V, PIPE_M, PIPE_MTE1, PIPE_MTE2, PIPE_MTE3, PIPE_ALL, PIPE_FIX
    case 0: return Pipe::kS;
    case 1: return Pipe::kV;
    case 2: return Pipe::kM;
    case 3: return Pipe::kMte1;
    case 4: return Pipe::kMte2;
    case 5: return Pipe::kMte3;
    case 7: return Pipe::kFix;
    default: Fail(check::kApiConstraint, loc, "pipe_t value " + std::to_string(v) + " names no single pipe");
  }
}

std::string CoreName(const BlockState& b) {
  std::ostringstream os;
  if (b.type == CoreType::kAic) {
    os << "AIC " << b.idx;
    if (b.launch != nullptr && b.launch->mix) os << " (block " << b.group << ")";
  } else {
    os << "AIV " << b.idx;
    if (b.launch != nullptr && b.launch->mix) os << " (block " << b.group << ", sub " << b.sub << ")";
  }
  return os.str();
}

void InitCorePipes(BlockState& b, int32_t ncores) {
  for (VClock& v : b.vc) v.assign(static_cast<size_t>(ncores) * kPipes, 0);
}

PipeScope::PipeScope(Pipe pipe, const char* api, SrcLoc loc) {
  BlockState* b = CurrentBlockOrNull();
  if (b == nullptr) return;
  if (b->instr.depth == 0) {
    if (b->instr.open) EndInstr(*b);
    BeginInstr(*b, pipe, api, loc);
  }
  ++b->instr.depth;
  active_ = true;
}

PipeScope::~PipeScope() {
  if (!active_) return;
  BlockState* b = CurrentBlockOrNull();
  if (b == nullptr) return;
  if (--b->instr.depth == 0) EndInstr(*b);
}

void VectorOpDone(SrcLoc loc) {
  BlockState& b = Block(loc);
  ++b.counters.vector_ops;
  if (b.instr.open && b.instr.implicit) EndInstr(b);
}

void CloseImplicit(BlockState& b) {
  if (b.instr.open && b.instr.implicit) EndInstr(b);
}

Pipe CurrentPipe(BlockState& b, Pipe implicit_pipe, const char* api, SrcLoc loc) {
  if (!b.instr.open) {
    BeginInstr(b, implicit_pipe, api, loc);
    b.instr.implicit = true;
  }
  return b.instr.pipe;
}

VClock Signature(const BlockState& b, Pipe p) {
  VClock s = b.vc[P(p)];
  s[static_cast<size_t>(Tid(b.core, p))] = b.cur[P(p)];
  return s;
}

void TraceWait(BlockState& b, const char* api, SrcLoc loc, double until) {
  if (!b.launch->tracing || until <= b.issue) return;
  b.launch->trace.push_back({b.core, Pipe::kS, true, Intern(b, api, loc), b.issue, until, until});
}

double PipeDoneTime(const BlockState& b, Pipe p) { return std::max(b.pipe_done[P(p)], b.issue); }

void JoinInto(BlockState& b, Pipe p, const VClock& vc, double time) {
  VClock& mine = b.vc[P(p)];
  for (size_t i = 0; i < mine.size() && i < vc.size(); ++i) mine[i] = std::max(mine[i], vc[i]);
  b.ready[P(p)] = std::max(b.ready[P(p)], time);
}

void JoinAll(BlockState& b, const VClock& vc, double time) {
  for (int p = 0; p < kPipes; ++p) JoinInto(b, static_cast<Pipe>(p), vc, time);
  b.issue = std::max(b.issue, time);
}

void BarrierAll(BlockState& b) {
  VClock j = Signature(b, Pipe::kS);
  double t = b.issue;
  for (int p = 0; p < kPipes; ++p) {
    const VClock s = Signature(b, static_cast<Pipe>(p));
    for (size_t i = 0; i < j.size(); ++i) j[i] = std::max(j[i], s[i]);
    t = std::max(t, b.pipe_done[static_cast<size_t>(p)]);
  }
  JoinAll(b, j, t);
}

void ShadowLocal(BlockState& b, Arena& a, Mem mem, uint64_t start, uint64_t bytes, bool write) {
  if (write) {
    b.instr.local_write += bytes;
  } else {
    b.instr.local_read += bytes;
  }
  if (!b.launch->config.detect_races) return;
  if (a.shadow.Empty()) a.shadow.Reset(a.size);
  ShadowRange(
      b, bytes, write, false, [&](uint64_t i) -> Cell& { return a.shadow.At(start + i); },
      [&](uint64_t i) {
        std::ostringstream os;
        os << MemName(mem) << " byte " << start + i;
        return os.str();
      });
}

namespace {

[[noreturn]] void Stale(BlockState& b, const std::string& detail) {
  Fail(check::kDcacheStale, b.launch->sites[b.instr.site].loc, std::string(b.launch->sites[b.instr.site].api) + ": " + detail);
}

void ShadowGmBytes(BlockState& b, RegionState& r, uint64_t first, uint64_t bytes, bool write) {
  if (r.shadow.Empty()) r.shadow.Reset(r.region.bytes);
  ShadowRange(
      b, bytes, write, true, [&](uint64_t i) -> Cell& { return r.shadow.At(first + i); },
      [&](uint64_t i) {
        std::ostringstream os;
        os << "byte " << first + i << " of '" << r.region.name << "'";
        return os.str();
      });
}

uint64_t LineMask(uint64_t line, uint64_t addr, uint64_t bytes) {
  const uint64_t lo = std::max(line * kLine, addr), hi = std::min(line * kLine + kLine, addr + bytes);
  if (hi <= lo) return 0;
  const uint64_t n = hi - lo, sh = lo - line * kLine;
  return (n >= 64 ? ~uint64_t{0} : ((uint64_t{1} << n) - 1)) << sh;
}

}  // namespace

void ShadowGm(BlockState& b, RegionState& r, uint64_t first, uint64_t bytes, bool write) {
  LaunchState& l = *b.launch;
  b.instr.gm_bytes += bytes;
  ++b.instr.gm_accesses;
  const uint64_t addr = r.begin + first;
  l.gm_bytes += bytes;
  l.hbm_bytes += l.l2.Access(addr, bytes, write);
  if (b.instr.pipe == Pipe::kS && b.dcache_timing.Access(addr, bytes, write) > 0) ++b.instr.dcache_misses;
  if (r.region.kind == GmKind::kInput || !l.config.detect_races) return;
  const Pipe p = b.instr.pipe;
  const uint64_t line0 = addr / kLine, line1 = (addr + bytes - 1) / kLine;
  if (!l.dirty.empty()) {
    for (uint64_t line = line0; line <= line1; ++line) {
      auto it = l.dirty.find(line);
      if (it == l.dirty.end()) continue;
      const DirtyLine& d = it->second;
      if (p == Pipe::kS && d.core == b.core) continue;  // this core's own cache
      const uint64_t mask = LineMask(line, addr, bytes);
      if (p == Pipe::kS && write) {
        std::ostringstream os;
        os << "writes a GM line of '" << r.region.name << "' that " << CoreName(CoreAt(l, d.core))
           << " holds dirty in its data cache (" << SiteText(l, d.site)
           << ", not flushed): the two lines are written back in an order nobody controls; flush with "
              "DataCacheCleanAndInvalid and order the cores";
        Stale(b, os.str());
      }
      if ((mask & d.mask) == 0 && !write) continue;
      std::ostringstream os;
      os << (write ? "writes" : "reads") << " GM bytes of '" << r.region.name << "' that "
         << (d.core == b.core ? std::string("this core") : CoreName(CoreAt(l, d.core))) << " wrote with "
         << SiteText(l, d.site) << " into its scalar data cache and never flushed: call DataCacheCleanAndInvalid "
         << "after the SetValue (and order the accesses)";
      Stale(b, os.str());
    }
  }
  if (p == Pipe::kS) {
    for (uint64_t line = line0; line <= line1; ++line) {
      LineInfo& li = l.lines[line];
      auto it = b.dcache.find(line);
      if (it != b.dcache.end() && it->second != li.version) {
        std::ostringstream os;
        os << (write ? "writes" : "reads") << " a GM line of '" << r.region.name
           << "' through this core's scalar data cache, which holds a copy older than " << SiteText(l, li.site)
           << ": the scalar unit sees stale data; call DataCacheCleanAndInvalid before reading GM that DMA or "
              "another core wrote";
        Stale(b, os.str());
      }
      b.dcache[line] = li.version;
    }
    if (write) {  // stays in the cache until DataCacheCleanAndInvalid
      for (uint64_t line = line0; line <= line1; ++line) {
        DirtyLine& d = l.dirty[line];
        d.core = b.core;
        d.site = b.instr.site;
        d.mask |= LineMask(line, addr, bytes);
      }
      return;
    }
  } else if (write && !l.lines.empty()) {
    for (uint64_t line = line0; line <= line1; ++line) {
      auto it = l.lines.find(line);
      if (it == l.lines.end()) continue;
      ++it->second.version;
      it->second.site = b.instr.site;
    }
  }
  ShadowGmBytes(b, r, first, bytes, write);
}

// The flush: dirty bytes reach GM now, as a write of this core's scalar pipe.
void FlushLines(BlockState& b, const std::vector<uint64_t>& lines) {
  LaunchState& l = *b.launch;
  for (uint64_t line : lines) {
    auto it = l.dirty.find(line);
    if (it != l.dirty.end() && it->second.core == b.core) {
      const uint64_t mask = it->second.mask;
      l.dirty.erase(it);
      for (uint64_t i = 0; i < kLine; ++i) {
        if (((mask >> i) & 1) == 0) continue;
        const uintptr_t a = static_cast<uintptr_t>(line * kLine + i);
        for (RegionState& r : l.regions) {
          if (a >= r.begin && a < r.end) {
            ShadowGmBytes(b, r, a - r.begin, 1, true);
            break;
          }
        }
      }
      LineInfo& li = l.lines[line];
      ++li.version;
      li.site = b.instr.site;
    }
    b.dcache.erase(line);
  }
}

int32_t TakeEventId(BlockState& b, int event, const char* api, SrcLoc loc) {
  uint8_t& mask = b.event_ids[event];
  for (int32_t id = 0; id < 8; ++id) {
    if (((mask >> id) & 1) == 0) {
      mask = static_cast<uint8_t>(mask | (1u << id));
      return id;
    }
  }
  Fail(check::kEventIdExhausted, loc,
       std::string(api) + ": all 8 event ids of HardEvent::" + EventName(event) +
           " are taken (QUE_MAX_EVENT = 8 on Atlas A2; ids are held by AllocEventID until ReleaseEventID, by "
           "every EnQue'd tensor until DeQue and by every freed queue buffer until its next AllocTensor)");
}

void GiveEventId(BlockState& b, int event, int32_t id) {
  if (id < 0 || id >= 8) return;
  b.event_ids[event] = static_cast<uint8_t>(b.event_ids[event] & ~(1u << id));
}

}  // namespace ascendc_cpu::detail
