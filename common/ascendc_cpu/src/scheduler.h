// One baton for all block threads: exactly one block runs at a time, in the launch's order.
// A block gives the baton up when it finishes or reaches SyncAll; when every block is at the
// barrier it opens and the order starts over.
#pragma once
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <vector>

#include "state.h"

namespace ascendc_cpu::detail {

struct Aborted {};  // unwinds a waiting block after another block failed

class Scheduler {
 public:
  Scheduler(std::vector<int32_t> order, LaunchState& launch);
  void Start();
  void WaitTurn(int32_t block);          // throws Aborted
  void Barrier(int32_t block, SrcLoc loc);  // SyncAll; throws Aborted or EmulatorError
  void Finish(int32_t block);
  void Abort();

 private:
  enum class State : uint8_t { kReady, kAtBarrier, kDone };
  void PassBaton();  // with mu_ held

  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<int32_t> order_;
  std::vector<State> state_;
  LaunchState& launch_;
  int32_t current_ = -1;
  bool aborted_ = false;
  int32_t stranded_ = -1;  // a block left alone at a barrier nobody else will reach
};

}  // namespace ascendc_cpu::detail
