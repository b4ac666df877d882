#include "ascendc_cpu/launch.h"

#include <algorithm>
#include <cstring>
#include <exception>
#include <random>
#include <sstream>
#include <thread>

#include "scheduler.h"

namespace ascendc_cpu {

std::vector<int32_t> ShuffledOrder(int32_t block_dim, uint64_t seed) {
  std::vector<int32_t> order(static_cast<size_t>(std::max(block_dim, 0)));
  for (int32_t i = 0; i < block_dim; ++i) order[static_cast<size_t>(i)] = i;
  std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ull + 1);
  for (size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng() % i]);
  if (block_dim >= 2 && std::is_sorted(order.begin(), order.end())) std::reverse(order.begin(), order.end());
  return order;
}

namespace detail {
namespace {

std::string OrderText(const std::vector<int32_t>& order) {
  std::ostringstream os;
  for (size_t i = 0; i < order.size(); ++i) os << (i ? "," : "") << order[i];
  return os.str();
}

void Validate(const LaunchConfig& c) {
  if (c.block_dim < 1 || c.block_dim > 65535) {
    throw std::invalid_argument("ascendc_cpu::Launch: block_dim must be in [1, 65535], got " +
                                std::to_string(c.block_dim));
  }
  if (c.ub_bytes <= 0 || c.ub_bytes % 32 != 0) {
    throw std::invalid_argument("ascendc_cpu::Launch: ub_bytes must be a positive multiple of 32, got " +
                                std::to_string(c.ub_bytes));
  }
}

std::vector<RegionState> MakeRegions(const GmRegions& regions) {
  std::vector<RegionState> out;
  for (const GmRegion& r : regions) {
    if (r.ptr == nullptr && r.bytes != 0) {
      throw std::invalid_argument("ascendc_cpu::Launch: GM region '" + r.name + "' has a null pointer");
    }
    if (r.bytes == 0) continue;
    RegionState s;
    s.region = r;
    s.begin = reinterpret_cast<uintptr_t>(r.ptr);
    s.end = s.begin + r.bytes;
    out.push_back(std::move(s));
  }
  std::sort(out.begin(), out.end(), [](const RegionState& a, const RegionState& b) { return a.begin < b.begin; });
  // Overlapping inputs (the same tensor passed twice) merge; anything written must not alias.
  std::vector<RegionState> merged;
  for (RegionState& r : out) {
    if (!merged.empty() && r.begin < merged.back().end) {
      RegionState& m = merged.back();
      if (m.region.kind != GmKind::kInput || r.region.kind != GmKind::kInput) {
        throw std::invalid_argument("ascendc_cpu::Launch: GM regions '" + m.region.name + "' and '" + r.region.name +
                                    "' overlap and one is written; register aliased memory once, as the output");
      }
      m.end = std::max(m.end, r.end);
      m.region.bytes = m.end - m.begin;
      m.region.name += "|" + r.region.name;
      continue;
    }
    merged.push_back(std::move(r));
  }
  return merged;
}

// Runs every block once in `order`; rethrows the first block's error.
std::vector<BlockState> RunBlocks(LaunchState& launch, const std::function<void()>& kernel) {
  const int32_t n = launch.config.block_dim;
  std::vector<BlockState> blocks(static_cast<size_t>(n));
  for (int32_t i = 0; i < n; ++i) {
    blocks[static_cast<size_t>(i)].idx = i;
    blocks[static_cast<size_t>(i)].num = n;
    blocks[static_cast<size_t>(i)].launch = &launch;
  }
  Scheduler sched(launch.order, launch);
  launch.scheduler = &sched;
  std::mutex err_mu;
  std::exception_ptr first_error;
  auto record = [&](std::exception_ptr e) {
    std::lock_guard<std::mutex> lk(err_mu);
    if (!first_error) first_error = e;
    sched.Abort();
  };
  std::vector<std::thread> threads;
  threads.reserve(static_cast<size_t>(n));
  for (int32_t i = 0; i < n; ++i) {
    threads.emplace_back([&, i] {
      BlockState& b = blocks[static_cast<size_t>(i)];
      try {
        sched.WaitTurn(i);
        SetCurrentBlock(&b);
        try {
          kernel();
          CheckBlockEnd(b);
        } catch (const EmulatorError&) {
          throw;
        } catch (const Aborted&) {
          throw;
        } catch (const std::exception& e) {
          Fail(check::kKernelException, SrcLoc{"", 0}, std::string("kernel threw: ") + e.what());
        }
      } catch (const Aborted&) {
      } catch (...) {
        record(std::current_exception());
      }
      SetCurrentBlock(nullptr);
      sched.Finish(i);
    });
  }
  sched.Start();
  for (std::thread& t : threads) t.join();
  launch.scheduler = nullptr;
  if (first_error) std::rethrow_exception(first_error);
  return blocks;
}

void FillReport(LaunchReport& r, const std::vector<BlockState>& blocks) {
  for (const BlockState& b : blocks) {
    BlockReport br;
    br.block = b.idx;
    br.counters = b.counters;
    br.ub_high_water = b.arenas[static_cast<size_t>(Mem::kUB)].high;
    br.l1_high_water = b.arenas[static_cast<size_t>(Mem::kL1)].high;
    r.totals.Merge(b.counters);
    r.max_ub_high_water = std::max(r.max_ub_high_water, br.ub_high_water);
    r.blocks.push_back(std::move(br));
  }
}

void CompareOutputs(LaunchState& launch, const std::vector<std::vector<uint8_t>>& first,
                    const std::vector<OwnerMap>& first_owner) {
  for (size_t i = 0; i < launch.regions.size(); ++i) {
    const RegionState& r = launch.regions[i];
    if (r.region.kind != GmKind::kOutput) continue;
    const auto* now = static_cast<const uint8_t*>(r.region.ptr);
    const auto mismatch = std::mismatch(first[i].begin(), first[i].end(), now);
    if (mismatch.first == first[i].end()) continue;
    const size_t at = static_cast<size_t>(mismatch.first - first[i].begin());
    auto writer = [](uint32_t o) { return o == 0 ? std::string("none") : std::to_string(static_cast<int32_t>(o & 0xffffu) - 1); };
    std::ostringstream os;
    os << "output '" << r.region.name << "' differs at byte " << at << ": in-order run 0x" << std::hex
       << int{first[i][at]} << ", shuffled run (order " << OrderText(launch.order) << ") 0x" << int{now[at]}
       << std::dec << "; written by block " << writer(first_owner[i].Get(at)) << " in order, block "
       << writer(r.owner.Get(at)) << " shuffled";
    throw EmulatorError(check::kOrderDependence, launch.config.kernel_name, -1, launch.config.block_dim, "", 0,
                        os.str());
  }
}

}  // namespace

LaunchReport LaunchImpl(const LaunchConfig& config, const GmRegions& regions, const std::function<void()>& kernel) {
  Validate(config);
  LaunchState launch;
  launch.config = config;
  if (launch.config.kernel_name.empty()) launch.config.kernel_name = "kernel";
  launch.regions = MakeRegions(regions);

  std::vector<std::vector<int32_t>> orders;
  std::vector<int32_t> in_order(static_cast<size_t>(config.block_dim));
  for (int32_t i = 0; i < config.block_dim; ++i) in_order[static_cast<size_t>(i)] = i;
  if (config.order != Order::kShuffled) orders.push_back(in_order);
  if (config.order != Order::kInOrder) orders.push_back(ShuffledOrder(config.block_dim, config.seed));

  std::vector<std::vector<uint8_t>> snapshot(launch.regions.size()), first(launch.regions.size());
  std::vector<OwnerMap> first_owner(launch.regions.size());
  for (size_t i = 0; i < launch.regions.size(); ++i) {
    const RegionState& r = launch.regions[i];
    if (r.region.kind == GmKind::kInput || orders.size() < 2) continue;
    const auto* p = static_cast<const uint8_t*>(r.region.ptr);
    snapshot[i].assign(p, p + r.region.bytes);
  }

  LaunchReport report;
  report.kernel_name = launch.config.kernel_name;
  report.block_dim = config.block_dim;
  report.ub_bytes = config.ub_bytes;
  report.orders = orders;
  for (size_t run = 0; run < orders.size(); ++run) {
    launch.order = orders[run];
    const bool shuffled = launch.order != in_order;
    launch.run_label = shuffled ? "shuffled (seed " + std::to_string(config.seed) + ", order " + OrderText(launch.order) + ")"
                                : "in-order";
    launch.epoch = 1;
    for (size_t i = 0; i < launch.regions.size(); ++i) {
      RegionState& r = launch.regions[i];
      r.owner.Reset(r.region.kind == GmKind::kInput ? 0 : r.region.bytes);
      if (run > 0 && !snapshot[i].empty()) std::memcpy(const_cast<void*>(r.region.ptr), snapshot[i].data(), r.region.bytes);
    }
    std::vector<BlockState> blocks = RunBlocks(launch, kernel);
    if (run == 0) {
      FillReport(report, blocks);
      for (size_t i = 0; i < launch.regions.size(); ++i) {
        RegionState& r = launch.regions[i];
        if (r.region.kind != GmKind::kOutput || orders.size() < 2) continue;
        const auto* p = static_cast<const uint8_t*>(r.region.ptr);
        first[i].assign(p, p + r.region.bytes);
        first_owner[i] = std::move(r.owner);
      }
    }
  }
  if (orders.size() == 2) CompareOutputs(launch, first, first_owner);
  return report;
}

}  // namespace detail
}  // namespace ascendc_cpu
