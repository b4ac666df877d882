// Block identity, SyncAll and SetFlag/WaitFlag. Inside one block the emulator runs every
// pipe in program order, so flags and barriers cannot reorder anything here; what can be
// checked is what would hang on hardware: a WaitFlag nobody set, a SyncAll not all reach.
#include <sstream>

#include "scheduler.h"

namespace ascendc_cpu::detail {

int64_t BlockIdx() { return Block(SrcLoc::Here()).idx; }
int64_t BlockNum() { return Block(SrcLoc::Here()).num; }

void SyncAllBlocks(SrcLoc loc) {
  BlockState& b = Block(loc);
  b.launch->scheduler->Barrier(b.idx, loc);
  ++b.counters.sync_alls;
}

void FlagSet(int event, int id, SrcLoc loc) {
  BlockState& b = Block(loc);
  ++b.flags[(event << 8) | (id & 0xff)];
}

void FlagWait(int event, int id, SrcLoc loc) {
  BlockState& b = Block(loc);
  int32_t& pending = b.flags[(event << 8) | (id & 0xff)];
  if (pending <= 0) {
    std::ostringstream os;
    os << "WaitFlag(event " << event << ", id " << id
       << ") with no SetFlag before it (the waiting pipe would hang)";
    Fail(check::kSyncMismatch, loc, os.str());
  }
  --pending;
}

}  // namespace ascendc_cpu::detail
