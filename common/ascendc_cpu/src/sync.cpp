// Core identity, kernel type, SetFlag/WaitFlag, PipeBarrier, SyncAll, cross-core flags, the data
// cache flush and the HardEvent id pool. Every synchronisation is a happens-before edge of the
// race detector and a sync edge of the timing model (pipes.cpp); a wait nothing will satisfy is an
// error (sync-mismatch for a WaitFlag with no SetFlag and a SyncAll a finished core never reached,
// hang for a cross-core wait no running core can release).
#include <sstream>

#include "ascendc_cpu/timing_model.h"
#include "scheduler.h"

namespace ascendc_cpu::detail {
namespace {

constexpr int kMaxFlagId = 15;
constexpr size_t kMaxPendingSets = 15;  // "每一个计数器计数范围为0-15"

void CheckPipeExists(const BlockState& b, Pipe p, const char* api, SrcLoc loc) {
  const bool cube = p == Pipe::kM || p == Pipe::kMte1 || p == Pipe::kFix;
  if ((b.type == CoreType::kAic && p == Pipe::kV) || (b.type == CoreType::kAiv && cube)) {
    Fail(check::kCoreType, loc,
         std::string(api) + " names PIPE_" + PipeName(p) + ", which " + CoreName(b) + " does not have (" +
             (b.type == CoreType::kAic ? "AIC pipes: MTE1, MTE2, MTE3, M, FIX, S" : "AIV pipes: MTE2, MTE3, V, S") + ")");
  }
}

std::vector<BlockState*> CoresOf(LaunchState& l, CoreType t) {
  std::vector<BlockState*> out;
  for (BlockState& c : *l.cores) {
    if (c.type == t) out.push_back(&c);
  }
  return out;
}

std::vector<BlockState*> GroupAivs(LaunchState& l, int32_t group) {
  std::vector<BlockState*> out;
  for (BlockState& c : *l.cores) {
    if (c.type == CoreType::kAiv && c.group == group) out.push_back(&c);
  }
  return out;
}

BlockState* GroupAic(LaunchState& l, int32_t group) {
  for (BlockState& c : *l.cores) {
    if (c.type == CoreType::kAic && c.group == group) return &c;
  }
  return nullptr;
}

void Deliver(BlockState& from, BlockState& to, int flag, const Token& t, SrcLoc loc) {
  if (to.cross_flags[static_cast<size_t>(flag)].size() >= kMaxPendingSets) {
    std::ostringstream os;
    os << "CrossCoreSetFlag(" << flag << ") from " << CoreName(from) << " would raise the flag counter of "
       << CoreName(to) << " past 15 pending sets (the hardware raises an exception): the waiting side does "
       << "not keep up with CrossCoreWaitFlag";
    Fail(check::kSyncMismatch, loc, os.str());
  }
  to.cross_flags[static_cast<size_t>(flag)].push_back(t);
}

void RequireMix(const BlockState& b, const char* api, SrcLoc loc) {
  if (!b.launch->mix) {
    Fail(check::kKernelType, loc,
         std::string(api) + " in a " + KernelTypeName(b.launch->config.kernel_type) +
             " launch: for AIV_ONLY / AIC_ONLY kernels the hardware starts no cross-core scheduler "
             "(CrossCoreSetFlag(ISASI).md); declare KERNEL_TYPE_MIX_AIV_1_0 / MIX_AIC_1_0 for one core type, "
             "MIX_AIC_1_1 / MIX_AIC_1_2 for both");
  }
}

// Every core of a sync must be resident at once, or the ones waiting hold cores the others need.
void RequireResident(const BlockState& b, size_t participants, CoreType t, const char* api, SrcLoc loc) {
  const LaunchConfig& c = b.launch->config;
  const int32_t physical = t == CoreType::kAiv ? c.aiv_cores : c.aic_cores;
  if (static_cast<int64_t>(participants) > physical) {
    std::ostringstream os;
    os << api << " across " << participants << " " << (t == CoreType::kAiv ? "AIV" : "AIC")
       << " cores, but the platform has " << physical
       << ": the blocks that are not resident never start while the others wait (block_dim " << c.block_dim << ")";
    Fail(check::kHang, loc, os.str());
  }
}

}  // namespace

int64_t BlockIdx() { return Block(SrcLoc::Here()).idx; }
int64_t BlockNum() { return Block(SrcLoc::Here()).num; }
int64_t SubBlockIdx() { return Block(SrcLoc::Here()).sub; }
int64_t SubBlockNum() {
  BlockState& b = Block(SrcLoc::Here());
  return b.type == CoreType::kAiv ? b.launch->sub_num : 1;
}
int64_t TaskRatio() { return SubBlockNum(); }
bool CoreIsAic() { return Block(SrcLoc::Here()).type == CoreType::kAic; }
bool CoreIsAiv() { return Block(SrcLoc::Here()).type == CoreType::kAiv; }

void DeclareKernelType(int value, SrcLoc loc) {
  BlockState& b = Block(loc);
  KernelType t;
  switch (value) {
    case KERNEL_TYPE_AIV_ONLY: t = KernelType::kAivOnly; break;
    case KERNEL_TYPE_AIC_ONLY: t = KernelType::kAicOnly; break;
    case KERNEL_TYPE_MIX_AIV_1_0: t = KernelType::kMixAiv1_0; break;
    case KERNEL_TYPE_MIX_AIC_1_0: t = KernelType::kMixAic1_0; break;
    case KERNEL_TYPE_MIX_AIC_1_1: t = KernelType::kMixAic1_1; break;
    case KERNEL_TYPE_MIX_AIC_1_2: t = KernelType::kMixAic1_2; break;
    default:
      Fail(check::kKernelType, loc,
           "KERNEL_TASK_TYPE_DEFAULT(" + std::to_string(value) +
               "): not a kernel type of the Atlas A2 separated architecture (AIV_ONLY, AIC_ONLY, MIX_AIV_1_0, "
               "MIX_AIC_1_0, MIX_AIC_1_1, MIX_AIC_1_2)");
  }
  if (t != b.launch->config.kernel_type) {
    Fail(check::kKernelType, loc,
         std::string("the kernel declares KERNEL_TASK_TYPE_DEFAULT(") + KernelTypeName(t) + ") but is launched as " +
             KernelTypeName(b.launch->config.kernel_type) + " (LaunchConfig::kernel_type)");
  }
  b.declared_type = value;
}

// A kernel's own cross-core flag and the hardware SyncAll may not share ids 11..14: SyncAll's
// counters would take the kernel's sets (or the kernel SyncAll's). Fails at the second of the two.
void CheckReservedFlags(LaunchState& l, SrcLoc loc, int flag, bool sync_all) {
  constexpr int kFirst = 11, kLast = 14;
  if (sync_all) {
    if (l.first_sync_all.file == nullptr) l.first_sync_all = loc;
  } else if (flag >= kFirst && flag <= kLast && l.first_reserved_flag.file == nullptr) {
    l.first_reserved_flag = loc;
    l.reserved_flag = flag;
  }
  if (l.first_sync_all.file != nullptr && l.first_reserved_flag.file != nullptr) {
    Fail(check::kApiConstraint, loc,
         "cross-core flag " + std::to_string(l.reserved_flag) + " (at " + Where(l.first_reserved_flag) +
             ") is one of the ids 11..14 the hardware SyncAll uses itself (at " + Where(l.first_sync_all) +
             "; asc-devkit dav_c220 kernel_operator_sync_impl.h: SYNC_AIC_FLAG .. SYNC_AIV_ONLY_ALL): "
             "use flag ids 0..10 or 15 in a kernel that calls SyncAll()");
  }
}

void SyncAllBlocks(SrcLoc loc, bool aiv_only, bool hardware) {
  BlockState& b = Block(loc);
  LaunchState& l = *b.launch;
  CloseImplicit(b);
  if (hardware) CheckReservedFlags(l, loc, -1, true);
  if (hardware && !l.mix) {
    Fail(check::kKernelType, loc,
         std::string("SyncAll() (the hardware barrier) in a ") + KernelTypeName(l.config.kernel_type) +
             " launch: it goes through the cross-core scheduler, which AIV_ONLY / AIC_ONLY kernels do not start "
             "(SyncAll.md: a vector kernel is __mix__(0, 1); CrossCoreSetFlag(ISASI).md); declare "
             "KERNEL_TYPE_MIX_AIV_1_0, or use the software SyncAll(gmWorkspace, ubWorkspace) on a zeroed GM workspace");
  }
  if (hardware && !aiv_only && !(l.has_aic && l.has_aiv)) {
    Fail(check::kHang, loc,
         std::string("SyncAll<false>() in a ") + KernelTypeName(l.config.kernel_type) +
             " launch: it hands over between the AIC and the AIVs of each AI Core, and one side does not exist "
             "(SyncAll.md: a vector-only kernel must use isAIVOnly = true, or it hangs)");
  }
  if (aiv_only && l.mix && b.type == CoreType::kAic) {
    Fail(check::kCoreType, loc,
         "SyncAll<true> (isAIVOnly) on " + CoreName(b) +
             ": it synchronises the AIV cores only; a MIX kernel synchronises every core with SyncAll<false>()");
  }
  const int idx = (l.mix && aiv_only) ? 0 : 1;  // 0: every AIV of a MIX launch, 1: every core
  size_t participants = 0, aivs = 0, aics = 0;
  for (const BlockState& c : *l.cores) {
    if (idx == 0 && c.type != CoreType::kAiv) continue;
    ++participants;
    (c.type == CoreType::kAiv ? aivs : aics) += 1;
  }
  RequireResident(b, aivs, CoreType::kAiv, "SyncAll", loc);
  RequireResident(b, aics, CoreType::kAic, "SyncAll", loc);
  BarrierAll(b);  // SyncAll starts with PipeBarrier<PIPE_ALL>
  LaunchState::BarrierState& bs = l.barriers[idx];
  const uint64_t gen = bs.generation;
  const VClock mine = Signature(b, Pipe::kS);
  if (bs.vc.empty()) bs.vc.assign(mine.size(), 0);
  for (size_t i = 0; i < mine.size(); ++i) bs.vc[i] = std::max(bs.vc[i], mine[i]);
  bs.time = std::max(bs.time, b.issue);
  if (++bs.arrived == static_cast<int32_t>(participants)) {  // the last one opens the barrier
    bs.released_vc = bs.vc;
    bs.released_time = bs.time + timing::kSyncAllCycles;
    bs.vc.clear();
    bs.time = 0;
    bs.arrived = 0;
    ++bs.generation;
    ++l.epoch;
  } else {
    b.waiting = WaitInfo{"SyncAll", loc, true, aiv_only};
    l.scheduler->BlockUntil(b.core, [&bs, gen] { return bs.generation > gen; });
  }
  TraceWait(b, "SyncAll", loc, bs.released_time);
  JoinAll(b, bs.released_vc, bs.released_time);
  ++b.counters.sync_alls;
}

void FlagSet(int event, int id, SrcLoc loc) {
  BlockState& b = Block(loc);
  CloseImplicit(b);
  Pipe src, dst;
  if (!EventPipes(event, &src, &dst)) Fail(check::kApiConstraint, loc, "SetFlag of an unknown HardEvent");
  CheckPipeExists(b, src, "SetFlag", loc);
  CheckPipeExists(b, dst, "SetFlag", loc);
  if (id < 0 || id >= 8) {
    Fail(check::kApiConstraint, loc,
         "SetFlag<HardEvent::" + std::string(EventName(event)) + ">(" + std::to_string(id) +
             "): event ids are 0..7 (QUE_MAX_EVENT = 8 on Atlas A2); take them from FetchEventID / AllocEventID");
  }
  b.flag_tokens[(event << 8) | id].push_back(Token{Signature(b, src), PipeDoneTime(b, src) + timing::kFlagCycles});
}

void FlagWait(int event, int id, SrcLoc loc) {
  BlockState& b = Block(loc);
  CloseImplicit(b);
  Pipe src, dst;
  if (!EventPipes(event, &src, &dst)) Fail(check::kApiConstraint, loc, "WaitFlag of an unknown HardEvent");
  std::deque<Token>& q = b.flag_tokens[(event << 8) | (id & 0xff)];
  if (q.empty()) {
    std::ostringstream os;
    os << "WaitFlag<HardEvent::" << EventName(event) << ">(" << id
       << ") with no SetFlag before it (the waiting pipe would hang)";
    Fail(check::kSyncMismatch, loc, os.str());
  }
  JoinInto(b, dst, q.front().vc, q.front().time);
  q.pop_front();
}

void Barrier(int pipe, SrcLoc loc) {
  BlockState& b = Block(loc);
  CloseImplicit(b);
  if (pipe == 6) {  // PIPE_ALL
    BarrierAll(b);
    return;
  }
  const Pipe p = PipeOfPipeT(pipe, loc);
  CheckPipeExists(b, p, "PipeBarrier", loc);
  JoinInto(b, p, Signature(b, p), PipeDoneTime(b, p));
}

void CrossCoreSet(int mode, int pipe, int flag, SrcLoc loc) {
  BlockState& b = Block(loc);
  LaunchState& l = *b.launch;
  CloseImplicit(b);
  RequireMix(b, "CrossCoreSetFlag", loc);
  if (mode < 0 || mode > 2) {
    Fail(check::kApiConstraint, loc, "CrossCoreSetFlag: Atlas A2 supports modes 0, 1 and 2, not " + std::to_string(mode));
  }
  if (pipe == 0 || pipe == 6) Fail(check::kApiConstraint, loc, "CrossCoreSetFlag: the pipe may not be PIPE_S or PIPE_ALL");
  if (flag < 0 || flag > kMaxFlagId) {
    Fail(check::kApiConstraint, loc, "CrossCoreSetFlag: flagId " + std::to_string(flag) + " is outside 0..15");
  }
  CheckReservedFlags(l, loc, flag, false);
  const Pipe p = PipeOfPipeT(pipe, loc);
  CheckPipeExists(b, p, "CrossCoreSetFlag", loc);
  if (mode != 0 && !(l.has_aic && l.has_aiv)) {
    Fail(check::kKernelType, loc,
         "CrossCoreSetFlag mode " + std::to_string(mode) + " needs KERNEL_TYPE_MIX_AIC_1_1 or MIX_AIC_1_2, not " +
             KernelTypeName(l.config.kernel_type));
  }
  if (mode == 1 && b.type == CoreType::kAic) {
    Fail(check::kCoreType, loc, "CrossCoreSetFlag mode 1 synchronises the AIVs of one AI Core; " + CoreName(b) + " is a cube core");
  }
  const Token tk{Signature(b, p), PipeDoneTime(b, p) + timing::kCrossCoreFlagCycles};
  if (mode == 2 && b.type == CoreType::kAic) {  // AIC -> every AIV of its group
    for (BlockState* v : GroupAivs(l, b.group)) Deliver(b, *v, flag, tk, loc);
    return;
  }
  // The other modes complete when every participant has set the flag once more.
  std::vector<BlockState*> parts;
  int key_group = b.group;
  if (mode == 0) {
    parts = CoresOf(l, b.type);
    key_group = -1 - static_cast<int>(b.type);
    RequireResident(b, parts.size(), b.type, "CrossCoreSetFlag mode 0", loc);
  } else {
    parts = GroupAivs(l, b.group);
  }
  auto& pend = l.pending_sets[std::make_tuple(mode, key_group, flag)];
  if (pend.size() != parts.size()) pend.assign(parts.size(), {});
  size_t me = 0;
  while (parts[me] != &b) ++me;
  pend[me].push_back(tk);
  for (const auto& d : pend) {
    if (d.empty()) return;
  }
  Token all{VClock(tk.vc.size(), 0), 0};
  for (auto& d : pend) {
    for (size_t i = 0; i < all.vc.size(); ++i) all.vc[i] = std::max(all.vc[i], d.front().vc[i]);
    all.time = std::max(all.time, d.front().time);
    d.pop_front();
  }
  if (mode == 2) {  // both AIVs -> their AIC
    Deliver(b, *GroupAic(l, b.group), flag, all, loc);
  } else {
    for (BlockState* t : parts) Deliver(b, *t, flag, all, loc);
  }
}

void CrossCoreWait(int flag, SrcLoc loc) {
  BlockState& b = Block(loc);
  LaunchState& l = *b.launch;
  CloseImplicit(b);
  RequireMix(b, "CrossCoreWaitFlag", loc);
  if (flag < 0 || flag > kMaxFlagId) {
    Fail(check::kApiConstraint, loc, "CrossCoreWaitFlag: flagId " + std::to_string(flag) + " is outside 0..15");
  }
  CheckReservedFlags(l, loc, flag, false);
  std::deque<Token>& q = b.cross_flags[static_cast<size_t>(flag)];
  if (q.empty()) {
    std::ostringstream os;
    os << "CrossCoreWaitFlag(" << flag << ") on " << CoreName(b) << " (set by: ";
    if (b.type == CoreType::kAiv) {
      os << (l.has_aic ? "the AIC of block " + std::to_string(b.group) + " with mode 2, " : std::string())
         << (l.sub_num > 1 ? "both AIVs of its block with mode 1, " : std::string()) << "or every AIV with mode 0)";
    } else {
      os << (l.has_aiv ? "the AIV(s) of block " + std::to_string(b.group) + " with mode 2, " : std::string())
         << "or every AIC with mode 0)";
    }
    b.waiting = WaitInfo{os.str(), loc, false, true};
    l.scheduler->BlockUntil(b.core, [&q] { return !q.empty(); });
  }
  const Token t = q.front();
  q.pop_front();
  TraceWait(b, "CrossCoreWaitFlag", loc, t.time);
  JoinAll(b, t.vc, t.time);
}

void DcacheCleanInvalid(const void* gm, bool entire, SrcLoc loc) {
  BlockState& b = Block(loc);
  PipeScope scope(Pipe::kS, "DataCacheCleanAndInvalid", loc);
  std::vector<uint64_t> lines;
  if (entire) {
    for (const auto& kv : b.dcache) lines.push_back(kv.first);
    for (const auto& kv : b.launch->dirty) {
      if (kv.second.core == b.core) lines.push_back(kv.first);
    }
    b.dcache_timing.Clear();
  } else {
    lines.push_back(reinterpret_cast<uintptr_t>(gm) / 64);
    b.dcache_timing.Invalidate(reinterpret_cast<uintptr_t>(gm), 1);
  }
  FlushLines(b, lines);
}

int32_t EventIdFetch(int event, SrcLoc loc) {
  BlockState& b = Block(loc);
  const int32_t id = TakeEventId(b, event, "FetchEventID", loc);
  GiveEventId(b, event, id);  // Fetch only looks
  return id;
}

int32_t EventIdAlloc(int event, SrcLoc loc) { return TakeEventId(Block(loc), event, "AllocEventID", loc); }

void EventIdRelease(int event, int32_t id, SrcLoc loc) {
  BlockState& b = Block(loc);
  if (id < 0 || id >= 8 || ((b.event_ids[event] >> id) & 1) == 0) {
    Fail(check::kApiConstraint, loc,
         "ReleaseEventID<HardEvent::" + std::string(EventName(event)) + ">(" + std::to_string(id) +
             ") of an id that is not allocated");
  }
  GiveEventId(b, event, id);
}

}  // namespace ascendc_cpu::detail
