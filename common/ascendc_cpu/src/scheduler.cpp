#include "scheduler.h"

#include <sstream>

namespace ascendc_cpu::detail {

Scheduler::Scheduler(std::vector<int32_t> order, LaunchState& launch)
    : order_(std::move(order)), state_(order_.size(), State::kReady), ready_(order_.size()), launch_(launch) {}

void Scheduler::Start() {
  std::lock_guard<std::mutex> lk(mu_);
  PassBaton();
  cv_.notify_all();
}

void Scheduler::PassBaton() {
  for (int32_t c : order_) {
    State& s = state_[static_cast<size_t>(c)];
    if (s == State::kBlocked && ready_[static_cast<size_t>(c)]()) s = State::kReady;
    if (s == State::kReady) {
      current_ = c;
      return;
    }
  }
  current_ = -1;
  for (int32_t c : order_) {
    if (state_[static_cast<size_t>(c)] == State::kBlocked) {
      stranded_ = c;  // nobody can run: wake the first blocked core to report the hang
      return;
    }
  }
}

void Scheduler::WaitTurn(int32_t core) {
  std::unique_lock<std::mutex> lk(mu_);
  cv_.wait(lk, [&] { return aborted_ || current_ == core; });
  if (aborted_) throw Aborted{};
}

void Scheduler::BlockUntil(int32_t core, std::function<bool()> ready) {
  std::unique_lock<std::mutex> lk(mu_);
  if (ready()) return;
  state_[static_cast<size_t>(core)] = State::kBlocked;
  ready_[static_cast<size_t>(core)] = std::move(ready);
  PassBaton();
  cv_.notify_all();
  cv_.wait(lk, [&] { return aborted_ || current_ == core || stranded_ == core; });
  if (aborted_) throw Aborted{};
  ready_[static_cast<size_t>(core)] = nullptr;
  if (stranded_ != core) return;
  stranded_ = -1;
  state_[static_cast<size_t>(core)] = State::kReady;
  const std::vector<BlockState>& cores = *launch_.cores;
  const BlockState& me = cores[static_cast<size_t>(core)];
  std::ostringstream os;
  bool finished_participant = false;
  if (me.waiting.syncall) {
    os << "SyncAll waits for";
    for (size_t c = 0; c < state_.size(); ++c) {
      const BlockState& o = cores[c];
      const bool participant = !(me.waiting.aiv_only && launch_.mix) || o.type == CoreType::kAiv;
      if (participant && state_[c] == State::kDone) {
        os << " " << CoreName(o);
        finished_participant = true;
      }
    }
    if (finished_participant) {
      os << " that ended without reaching it (on hardware every core hangs)";
    } else {
      os.str("");
    }
  }
  if (!finished_participant) {
    os << me.waiting.what << " never returns: no core that is still running can release it (on hardware the "
       << "core hangs).";
    for (size_t c = 0; c < state_.size(); ++c) {
      if (static_cast<int32_t>(c) == core) continue;
      const BlockState& o = cores[c];
      if (state_[c] == State::kBlocked) {
        os << " " << CoreName(o) << " waits in " << o.waiting.what << " at " << Where(o.waiting.loc) << ";";
      } else if (state_[c] == State::kDone) {
        os << " " << CoreName(o) << " has ended;";
      }
    }
  }
  lk.unlock();
  Fail(finished_participant ? check::kSyncMismatch : check::kHang, me.waiting.loc, os.str());
}

void Scheduler::Finish(int32_t core) {
  std::lock_guard<std::mutex> lk(mu_);
  state_[static_cast<size_t>(core)] = State::kDone;
  if (current_ == core || current_ == -1) PassBaton();
  cv_.notify_all();
}

void Scheduler::Abort() {
  std::lock_guard<std::mutex> lk(mu_);
  aborted_ = true;
  cv_.notify_all();
}

}  // namespace ascendc_cpu::detail
