#include "scheduler.h"

#include <sstream>

namespace ascendc_cpu::detail {

Scheduler::Scheduler(std::vector<int32_t> order, LaunchState& launch)
    : order_(std::move(order)), state_(order_.size(), State::kReady), launch_(launch) {}

void Scheduler::Start() {
  std::lock_guard<std::mutex> lk(mu_);
  PassBaton();
  cv_.notify_all();
}

void Scheduler::PassBaton() {
  for (int32_t b : order_) {
    if (state_[static_cast<size_t>(b)] == State::kReady) {
      current_ = b;
      return;
    }
  }
  current_ = -1;
  bool any_waiting = false, any_done = false;
  for (State s : state_) {
    any_waiting |= s == State::kAtBarrier;
    any_done |= s == State::kDone;
  }
  if (!any_waiting) return;  // all blocks finished
  if (any_done) {            // the barrier can never open: wake one waiter to report it
    for (int32_t b : order_) {
      if (state_[static_cast<size_t>(b)] == State::kAtBarrier) {
        stranded_ = b;
        return;
      }
    }
  }
  ++launch_.epoch;  // every block arrived: the barrier opens
  for (State& s : state_) s = State::kReady;
  current_ = order_.front();
}

void Scheduler::WaitTurn(int32_t block) {
  std::unique_lock<std::mutex> lk(mu_);
  cv_.wait(lk, [&] { return aborted_ || current_ == block; });
  if (aborted_) throw Aborted{};
}

void Scheduler::Barrier(int32_t block, SrcLoc loc) {
  std::unique_lock<std::mutex> lk(mu_);
  state_[static_cast<size_t>(block)] = State::kAtBarrier;
  PassBaton();
  cv_.notify_all();
  cv_.wait(lk, [&] { return aborted_ || current_ == block || stranded_ == block; });
  if (aborted_) throw Aborted{};
  if (stranded_ == block) {
    std::ostringstream os;
    os << "SyncAll waits for block(s)";
    for (size_t b = 0; b < state_.size(); ++b) {
      if (state_[b] == State::kDone) os << " " << b;
    }
    os << " that ended without reaching it (on hardware every core hangs)";
    state_[static_cast<size_t>(block)] = State::kReady;
    lk.unlock();
    Fail(check::kSyncMismatch, loc, os.str());
  }
}

void Scheduler::Finish(int32_t block) {
  std::lock_guard<std::mutex> lk(mu_);
  state_[static_cast<size_t>(block)] = State::kDone;
  if (current_ == block || current_ == -1) PassBaton();
  cv_.notify_all();
}

void Scheduler::Abort() {
  std::lock_guard<std::mutex> lk(mu_);
  aborted_ = true;
  cv_.notify_all();
}

}  // namespace ascendc_cpu::detail
