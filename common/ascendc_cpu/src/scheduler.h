// A cooperative scheduler with one baton for all core threads: exactly one core runs at a time.
// A core gives the baton up when it finishes or blocks (SyncAll, CrossCoreWaitFlag not yet
// satisfied); the baton goes to the first core in the run's order that is ready or whose wait is
// now satisfied. No such core while some have not finished is a hang: the first blocked core
// reports it (hang, or sync-mismatch for a SyncAll a finished core never reached).
#pragma once
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <vector>

#include "state.h"

namespace ascendc_cpu::detail {

struct Aborted {};  // unwinds a waiting core after another core failed

class Scheduler {
 public:
  Scheduler(std::vector<int32_t> order, LaunchState& launch);
  void Start();
  void WaitTurn(int32_t core);  // throws Aborted
  // Blocks `core` until ready() holds; ready() is evaluated by whichever thread passes the baton
  // (always under the scheduler's lock). Throws Aborted or EmulatorError.
  void BlockUntil(int32_t core, std::function<bool()> ready);
  void Finish(int32_t core);
  void Abort();

 private:
  enum class State : uint8_t { kReady, kBlocked, kDone };
  void PassBaton();  // with mu_ held

  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<int32_t> order_;
  std::vector<State> state_;
  std::vector<std::function<bool()>> ready_;
  LaunchState& launch_;
  int32_t current_ = -1;
  bool aborted_ = false;
  int32_t stranded_ = -1;  // a blocked core no other core will ever release
};

}  // namespace ascendc_cpu::detail
