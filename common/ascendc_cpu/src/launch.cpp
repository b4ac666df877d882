#include "ascendc_cpu/launch.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "ascendc_cpu/timing_model.h"
#include "scheduler.h"

namespace ascendc_cpu {

const char* KernelTypeName(KernelType t) {
  switch (t) {
    case KernelType::kAivOnly: return "KERNEL_TYPE_AIV_ONLY";
    case KernelType::kAicOnly: return "KERNEL_TYPE_AIC_ONLY";
    case KernelType::kMixAic1_2: return "KERNEL_TYPE_MIX_AIC_1_2";
    case KernelType::kMixAic1_1: return "KERNEL_TYPE_MIX_AIC_1_1";
    case KernelType::kMixAiv1_0: return "KERNEL_TYPE_MIX_AIV_1_0";
    case KernelType::kMixAic1_0: return "KERNEL_TYPE_MIX_AIC_1_0";
  }
  return "?";
}

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

// The clock and HBM of the launch's SoC (Validate refused an unknown one).
const timing::SocTiming& Soc(const LaunchConfig& c) { return *timing::FindSocTiming(c.soc); }

void Validate(const LaunchConfig& c) {
  if (timing::FindSocTiming(c.soc) == nullptr) {
    std::string known;
    for (const timing::SocTiming& t : timing::kSocTimings) known += std::string(known.empty() ? "" : ", ") + t.soc;
    throw std::invalid_argument("ascendc_cpu::Launch: soc '" + c.soc + "' has no timing preset; known: " + known);
  }
  if (c.block_dim < 1 || c.block_dim > 65535) {
    throw std::invalid_argument("ascendc_cpu::Launch: block_dim must be in [1, 65535], got " +
                                std::to_string(c.block_dim));
  }
  if (c.ub_bytes <= 0 || c.ub_bytes % 32 != 0) {
    throw std::invalid_argument("ascendc_cpu::Launch: ub_bytes must be a positive multiple of 32, got " +
                                std::to_string(c.ub_bytes));
  }
  if (c.aiv_cores < 1 || c.aic_cores < 1) {
    throw std::invalid_argument("ascendc_cpu::Launch: aiv_cores and aic_cores must be at least 1");
  }
  // A MIX launch occupies one whole AI Core (1 AIC + its AIVs) per block, all at once.
  if ((c.kernel_type == KernelType::kMixAic1_2 || c.kernel_type == KernelType::kMixAic1_1) &&
      c.block_dim > c.aic_cores) {
    std::ostringstream os;
    os << "block_dim " << c.block_dim << " of a " << KernelTypeName(c.kernel_type)
       << " launch exceeds the platform's " << c.aic_cores
       << " AI Cores (AIC count): each block of a MIX kernel needs one AIC and its AIVs";
    throw EmulatorError(check::kBlockDim, c.kernel_name.empty() ? "kernel" : c.kernel_name, -1, c.block_dim, "", 0,
                        os.str());
  }
}

// The cores of a launch: per block its AIC first, then its AIVs (sub 0, 1).
void Layout(LaunchState& l) {
  const KernelType t = l.config.kernel_type;
  l.has_aic = t == KernelType::kAicOnly || t == KernelType::kMixAic1_0 || t == KernelType::kMixAic1_1 ||
              t == KernelType::kMixAic1_2;
  l.has_aiv = t == KernelType::kAivOnly || t == KernelType::kMixAiv1_0 || t == KernelType::kMixAic1_1 ||
              t == KernelType::kMixAic1_2;
  l.mix = t != KernelType::kAivOnly && t != KernelType::kAicOnly;
  l.sub_num = t == KernelType::kMixAic1_2 ? 2 : 1;
}

int32_t CoreCount(const LaunchState& l) {
  return l.config.block_dim * ((l.has_aic ? 1 : 0) + (l.has_aiv ? l.sub_num : 0));
}

// 1 for every byte of the view's elements, over the region's bytes.
std::vector<uint8_t> ViewMask(const GmRegion& r) {
  std::vector<uint8_t> mask(r.bytes, 0);
  const size_t n = r.view.size();
  for (const auto& d : r.view) {
    if (d.first == 0) return mask;
  }
  std::vector<int64_t> idx(n, 0);
  while (true) {
    int64_t off = 0;
    for (size_t i = 0; i < n; ++i) off += idx[i] * r.view[i].second;
    for (uint64_t k = 0; k < r.view_elem_bytes; ++k) {
      const uint64_t at = static_cast<uint64_t>(off) + k;
      if (at >= r.bytes) {
        throw std::invalid_argument("ascendc_cpu::Launch: the view of GM region '" + r.name + "' reaches past its " +
                                    std::to_string(r.bytes) + " bytes");
      }
      mask[at] = 1;
    }
    size_t i = n;
    while (i > 0 && ++idx[i - 1] == r.view[i - 1].first) idx[--i] = 0;
    if (i == 0) break;
  }
  return mask;
}

std::vector<RegionState> MakeRegions(const GmRegions& regions, bool* overlapping_views) {
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
    if (!r.view.empty()) s.in_view = ViewMask(r);
    out.push_back(std::move(s));
  }
  std::sort(out.begin(), out.end(), [](const RegionState& a, const RegionState& b) { return a.begin < b.begin; });
  // Overlapping inputs (the same tensor passed twice) merge; anything written must not alias,
  // except views of one allocation on disjoint bytes (K and V halves of one KV cache): they stay
  // separate regions, each write checked against its own view.
  std::vector<RegionState> merged;
  *overlapping_views = false;
  for (RegionState& r : out) {
    if (!merged.empty() && r.begin < merged.back().end) {
      RegionState& m = merged.back();
      const bool views = !m.in_view.empty() && !r.in_view.empty();
      if (views) {
        for (uintptr_t p = r.begin; p < std::min(m.end, r.end); ++p) {
          if (m.in_view[p - m.begin] != 0 && r.in_view[p - r.begin] != 0) {
            throw std::invalid_argument("ascendc_cpu::Launch: GM regions '" + m.region.name + "' and '" +
                                        r.region.name + "' are views that share bytes");
          }
        }
        for (const RegionState& o : merged) {
          if (&o != &m && r.begin < o.end && o.in_view.empty()) {
            throw std::invalid_argument("ascendc_cpu::Launch: GM regions '" + o.region.name + "' and '" +
                                        r.region.name + "' overlap and one is written");
          }
        }
        *overlapping_views = true;
        merged.push_back(std::move(r));
        continue;
      }
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
  const int32_t n = CoreCount(launch);
  std::vector<BlockState> blocks(static_cast<size_t>(n));
  int32_t next = 0;
  for (int32_t g = 0; g < launch.config.block_dim; ++g) {
    auto add = [&](CoreType type, int32_t idx, int32_t sub) {
      BlockState& b = blocks[static_cast<size_t>(next)];
      b.core = next++;
      b.idx = idx;
      b.num = launch.config.block_dim;
      b.group = g;
      b.sub = sub;
      b.type = type;
      b.launch = &launch;
      b.dcache_timing = LineCache(
          static_cast<uint64_t>(type == CoreType::kAic ? timing::kAicDcacheBytes : timing::kAivDcacheBytes),
          static_cast<uint64_t>(timing::kDcacheLineBytes));
      InitCorePipes(b, n);
    };
    if (launch.has_aic) add(CoreType::kAic, g, 0);
    if (launch.has_aiv) {
      for (int32_t s = 0; s < launch.sub_num; ++s) add(CoreType::kAiv, g * launch.sub_num + s, s);
    }
  }
  launch.cores = &blocks;
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
          CloseImplicit(b);
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
  launch.cores = nullptr;
  if (first_error) std::rethrow_exception(first_error);
  return blocks;
}

const char* const kPipeNames[kPipes] = {"S", "V", "M", "MTE1", "MTE2", "MTE3", "FIX"};

// The timing model's summary: slowest core vs the HBM bound, and what the slowest core spent on.
void FillTiming(LaunchReport& r, const LaunchState& l, const std::vector<BlockState>& blocks) {
  const double us_per_cycle = 1e-3 / Soc(l.config).clock_ghz;
  double worst = 0;
  const BlockState* critical = nullptr;
  for (const BlockState& b : blocks) {
    for (int p = 0; p < kPipes; ++p) {
      const double us = b.busy[static_cast<size_t>(p)] * us_per_cycle;
      if (us == 0) continue;
      r.pipe_busy_us[kPipeNames[p]] += us;
      double& mx = r.pipe_busy_max_us[kPipeNames[p]];
      mx = std::max(mx, us);
    }
    if (critical == nullptr || b.end_time > worst) {
      worst = b.end_time;
      critical = &b;
    }
  }
  r.gm_bytes = l.gm_bytes;
  r.hbm_bytes = l.hbm_bytes + l.l2.DirtyBytes();
  r.hbm_bound_us = static_cast<double>(r.hbm_bytes) / (Soc(l.config).hbm_bytes_per_second * timing::kHbmEfficiency) * 1e6;
  r.l2_bound_us = static_cast<double>(r.gm_bytes) / timing::kL2BytesPerSecond * 1e6;
  r.gm_bound_us = std::max(r.hbm_bound_us, r.l2_bound_us);
  const double core_us = worst * us_per_cycle;
  r.launch_us = timing::kLaunchHeadUs;
  r.modelled_us = r.launch_us + std::max(core_us, r.gm_bound_us);
  if (r.gm_bound_us >= core_us || critical == nullptr) {
    r.bound = "gm";
    return;
  }
  int top = 0;
  for (int p = 1; p < kPipes; ++p) {
    if (critical->busy[static_cast<size_t>(p)] > critical->busy[static_cast<size_t>(top)]) top = p;
  }
  const double top_busy = critical->busy[static_cast<size_t>(top)];
  if (top_busy < 0.5 * critical->end_time || critical->fixed[static_cast<size_t>(top)] > 0.5 * top_busy) {
    r.bound = "latency";  // no pipe busy half the time, or the busiest one mostly paying per-instruction latency
    return;
  }
  switch (static_cast<Pipe>(top)) {
    case Pipe::kV: r.bound = "vector"; break;
    case Pipe::kM: case Pipe::kMte1: r.bound = "cube"; break;
    case Pipe::kS: r.bound = "scalar"; break;
    default: r.bound = "gm"; break;
  }
}

// The first run's trace as CSV, one row per instruction or wait, times in µs of the timing model.
void WriteTrace(const LaunchState& l, const std::vector<BlockState>& blocks, const std::string& path) {
  std::ofstream out(path);
  if (!out) throw std::runtime_error("ASCENDC_CPU_TRACE: cannot write " + path);
  const double us = 1e-3 / Soc(l.config).clock_ghz;
  out << "core,type,group,sub,pipe,api,file,line,start_us,end_us,done_us\n";
  for (const LaunchState::TraceRec& t : l.trace) {
    const BlockState& b = blocks[static_cast<size_t>(t.core)];
    const Site& s = l.sites[t.site];
    out << b.idx << ',' << (b.type == CoreType::kAic ? "AIC" : "AIV") << ',' << b.group << ',' << b.sub << ','
        << (t.wait ? "wait" : kPipeNames[static_cast<size_t>(t.pipe)]) << ',' << s.api << ',' << s.loc.file << ','
        << s.loc.line << ',' << t.start * us << ',' << t.end * us << ',' << t.done * us << '\n';
  }
}

void FillReport(LaunchReport& r, const LaunchState& l, const std::vector<BlockState>& blocks) {
  FillTiming(r, l, blocks);
  for (const BlockState& b : blocks) {
    BlockReport br;
    br.block = b.idx;
    br.core = b.type == CoreType::kAic ? "AIC" : "AIV";
    br.group = b.group;
    br.modelled_us = b.end_time * 1e-3 / Soc(l.config).clock_ghz;
    for (int p = 0; p < kPipes; ++p) {
      const double busy = b.busy[static_cast<size_t>(p)];
      if (busy > 0) br.pipe_busy_us[kPipeNames[p]] = busy * 1e-3 / Soc(l.config).clock_ghz;
    }
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
    auto writer = [](uint32_t o) { return o == 0 ? std::string("none") : std::to_string(static_cast<int32_t>(o) - 1); };
    std::ostringstream os;
    os << "output '" << r.region.name << "' differs at byte " << at << ": in-order run 0x" << std::hex
       << int{first[i][at]} << ", shuffled run (order " << OrderText(launch.order) << ") 0x" << int{now[at]}
       << std::dec << "; written by core " << writer(first_owner[i].Get(at)) << " in order, core "
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
  launch.regions = MakeRegions(regions, &launch.overlapping_views);
  Layout(launch);
  const int32_t ncores = CoreCount(launch);
  if (static_cast<int64_t>(ncores) * kPipes >= 65535) {
    throw std::invalid_argument("ascendc_cpu::Launch: at most 9362 cores per launch (block_dim " +
                                std::to_string(config.block_dim) + ")");
  }

  std::vector<std::vector<int32_t>> orders;
  std::vector<int32_t> in_order(static_cast<size_t>(ncores));
  for (int32_t i = 0; i < ncores; ++i) in_order[static_cast<size_t>(i)] = i;
  if (config.order != Order::kShuffled) orders.push_back(in_order);
  if (config.order != Order::kInOrder) orders.push_back(ShuffledOrder(ncores, config.seed));

  std::vector<std::vector<uint8_t>> snapshot(launch.regions.size()), first(launch.regions.size());
  std::vector<OwnerMap> first_owner(launch.regions.size());
  for (size_t i = 0; i < launch.regions.size(); ++i) {
    const RegionState& r = launch.regions[i];
    if (r.region.kind == GmKind::kInput || orders.size() < 2) continue;
    const auto* p = static_cast<const uint8_t*>(r.region.ptr);
    snapshot[i].assign(p, p + r.region.bytes);
  }

  const char* trace_env = std::getenv("ASCENDC_CPU_TRACE");
  const std::string trace_path = trace_env != nullptr ? trace_env : "";
  LaunchReport report;
  report.kernel_name = launch.config.kernel_name;
  report.block_dim = config.block_dim;
  report.ub_bytes = config.ub_bytes;
  report.orders = orders;
  report.kernel_type = config.kernel_type;
  for (size_t run = 0; run < orders.size(); ++run) {
    launch.order = orders[run];
    const bool shuffled = launch.order != in_order;
    launch.run_label = shuffled ? "shuffled (seed " + std::to_string(config.seed) + ", order " + OrderText(launch.order) + ")"
                                : "in-order";
    launch.epoch = 1;
    launch.sites.clear();
    launch.site_ids.clear();
    launch.lines.clear();
    launch.dirty.clear();
    for (auto& bs : launch.barriers) bs = LaunchState::BarrierState{};
    launch.pending_sets.clear();
    launch.gm_bytes = 0;
    launch.hbm_bytes = 0;
    launch.l2 = LineCache(static_cast<uint64_t>(config.l2_bytes), static_cast<uint64_t>(timing::kL2LineBytes));
    launch.tracing = run == 0 && !trace_path.empty();
    for (size_t i = 0; i < launch.regions.size(); ++i) {
      RegionState& r = launch.regions[i];
      r.owner.Reset(r.region.kind == GmKind::kInput ? 0 : r.region.bytes);
      r.shadow.Reset(0);
      if (run > 0 && !snapshot[i].empty()) std::memcpy(const_cast<void*>(r.region.ptr), snapshot[i].data(), r.region.bytes);
    }
    std::vector<BlockState> blocks = RunBlocks(launch, kernel);
    if (run == 0) {
      FillReport(report, launch, blocks);
      if (launch.tracing) WriteTrace(launch, blocks, trace_path);
      launch.tracing = false;
      launch.trace.clear();
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
