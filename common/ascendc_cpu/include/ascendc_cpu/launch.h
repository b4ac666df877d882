// The launcher: the CPU counterpart of `kernel<<<block_dim, nullptr, stream>>>(args...)`.
//
//   LaunchConfig cfg;  // kernel_name, block_dim, ub_bytes (platform preset), order, seed
//   cfg.kernel_name = "add_custom";
//   cfg.block_dim = 8;
//   ascendc_cpu::LaunchReport r = ascendc_cpu::Launch(
//       cfg, {{x, x_bytes, "x", GmKind::kInput}, {z, z_bytes, "z", GmKind::kOutput}},
//       add_custom, x, z, tiling);
//
// Each emulated core (AIV or AIC, see KernelType) runs on its own thread with its own local
// memories, but only one core runs at a time: a cooperative scheduler passes a baton when a core
// ends or blocks (SyncAll, CrossCoreWaitFlag not yet satisfied) to the next runnable core in the
// run's order, so a run is deterministic for a given order. No runnable core while some have not
// ended is a hang. Order::kBoth runs the cores in order, restores every output region, runs them
// again in a seeded shuffled order and requires identical outputs.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "ascendc_cpu/counters.h"
#include "ascendc_cpu/errors.h"

namespace ascendc_cpu {

enum class Order { kInOrder, kShuffled, kBoth };

// The kernel type of the launch, as CANN's KERNEL_TASK_TYPE_DEFAULT declares it (docs: "设置Kernel类型",
// GetTaskRatio.md, GetSubBlockNum(ISASI).md). Per logical block (block_dim of them):
//   kAivOnly   (KERNEL_TYPE_AIV_ONLY)     1 AIV            kAicOnly (KERNEL_TYPE_AIC_ONLY) 1 AIC
//   kMixAic1_2 (KERNEL_TYPE_MIX_AIC_1_2)  1 AIC + 2 AIV    kMixAic1_1 (KERNEL_TYPE_MIX_AIC_1_1) 1 AIC + 1 AIV
//   kMixAiv1_0 (KERNEL_TYPE_MIX_AIV_1_0)  1 AIV, with the cross-core sync module
//   kMixAic1_0 (KERNEL_TYPE_MIX_AIC_1_0)  1 AIC, with the cross-core sync module
enum class KernelType { kAivOnly, kAicOnly, kMixAic1_2, kMixAic1_1, kMixAiv1_0, kMixAic1_0 };
const char* KernelTypeName(KernelType t);  // "KERNEL_TYPE_AIV_ONLY", ...

struct LaunchConfig {
  std::string kernel_name;
  int32_t block_dim = 1;
  int64_t ub_bytes = 196608;  // from the platform preset (Ascend910B2: 192 KiB)
  Order order = Order::kBoth;
  uint64_t seed = 0;          // shuffled order
  // Cube-side memories for the matmul path (per block); defaults of the Atlas A2 AI core.
  int64_t l1_bytes = 524288;
  int64_t l0a_bytes = 65536;
  int64_t l0b_bytes = 65536;
  int64_t l0c_bytes = 131072;
  // What the kernel is launched as; a KERNEL_TASK_TYPE_DEFAULT statement in the kernel must agree.
  KernelType kernel_type = KernelType::kAivOnly;
  // Physical cores of the platform preset (common's aop_platform: 910B2 has 48 AIV, 24 AIC). A MIX
  // launch needs block_dim <= aic_cores; SyncAll and cross-core flags need every core resident.
  int32_t aiv_cores = 48;
  int32_t aic_cores = 24;
  // Only for the emulator's own tests of the block-order-dependence backstop: false switches the
  // happens-before race detector (pipe-race, gm-cross-block-write, dcache-stale) off.
  bool detect_races = true;
  // L2 capacity of the timing model (0: none, every GM byte goes to HBM); 192 MB on Atlas A2.
  int64_t l2_bytes = 201326592;
  // The SoC whose clock and HBM the timing model uses (timing_model.h, kSocTimings): common's
  // platform preset name.
  std::string soc = "Ascend910B2";
};

enum class GmKind {
  kInput,      // read only
  kOutput,     // written; compared between block orders
  kWorkspace,  // written; not compared (scratch)
};

struct GmRegion {
  const void* ptr;
  uint64_t bytes;
  std::string name;
  GmKind kind;
  // A strided view (an output that is a view of a bigger allocation): (size, byte stride) per dim
  // and the element size. A write through a GlobalTensor set on this region must land on the
  // view's elements: a byte in a gap between them (another view's rows, padding) is
  // gm-out-of-bounds even inside the span. Empty: every byte of [ptr, ptr + bytes) is the
  // tensor's. Written regions whose spans overlap must all have views, on disjoint bytes.
  std::vector<std::pair<int64_t, int64_t>> view = {};
  uint64_t view_elem_bytes = 0;
};
using GmRegions = std::vector<GmRegion>;

struct BlockReport {
  int32_t block = 0;           // GetBlockIdx() of the core
  std::string core = "AIV";    // "AIV" or "AIC"
  int32_t group = 0;           // the logical block (AI Core) the core belongs to
  double modelled_us = 0;      // the core's last modelled instruction end (a model, see below)
  std::map<std::string, double> pipe_busy_us;  // per pipe ("MTE2", "V", ...)
  Counters counters;
  uint64_t ub_high_water = 0;  // highest UB byte InitBuffer reached
  uint64_t l1_high_water = 0;
};

struct LaunchReport {
  std::string kernel_name;
  int32_t block_dim = 0;
  int64_t ub_bytes = 0;
  std::vector<std::vector<int32_t>> orders;  // block orders that were run
  Counters totals;                           // of the first run
  std::vector<BlockReport> blocks;           // of the first run, by block index
  uint64_t max_ub_high_water = 0;
  KernelType kernel_type = KernelType::kAivOnly;

  // The timing MODEL (include/ascendc_cpu/timing_model.h): not a measurement. Every instruction
  // costs cycles from a table of public and estimated figures; pipes run asynchronously and
  // start an instruction when the pipe is free and every sync edge that orders it has fired.
  double modelled_us = 0;      // launch_us + max(slowest core, gm_bound_us)
  double launch_us = 0;        // the launch / head cost every kernel pays (timing_model.h)
  double gm_bound_us = 0;      // memory bound: max(hbm_bound_us, l2_bound_us)
  double hbm_bound_us = 0;     // hbm_bytes / HBM bandwidth (shared by all cores)
  double l2_bound_us = 0;      // gm_bytes / L2 bandwidth (shared by all cores)
  uint64_t gm_bytes = 0;       // every GM byte the cores moved
  uint64_t hbm_bytes = 0;      // the bytes that missed the modelled L2, and its dirty lines
  std::string bound;           // what dominates: "gm", "vector", "cube", "scalar" or "latency" (see README)
  std::map<std::string, double> pipe_busy_us;      // per pipe ("MTE2", "V", ...), summed over cores
  std::map<std::string, double> pipe_busy_max_us;  // per pipe, the busiest core's figure
};

namespace detail {

LaunchReport LaunchImpl(const LaunchConfig& config, const GmRegions& regions,
                        const std::function<void()>& kernel);

template <class P, class A>
P KernelArg(A&& a) {
  using D = std::decay_t<A>;
  if constexpr (std::is_pointer_v<P> && std::is_pointer_v<D>) {
    using Pointee = std::remove_cv_t<std::remove_pointer_t<D>>;
    return reinterpret_cast<P>(const_cast<Pointee*>(a));
  } else {
    return static_cast<P>(std::forward<A>(a));
  }
}

}  // namespace detail

template <class... P, class... A>
LaunchReport Launch(const LaunchConfig& config, const GmRegions& regions, void (*kernel)(P...),
                    A&&... args) {
  static_assert(sizeof...(P) == sizeof...(A), "Launch: argument count differs from the kernel's");
  std::tuple<P...> bound(detail::KernelArg<P>(std::forward<A>(args))...);
  return detail::LaunchImpl(config, regions, [kernel, &bound] { std::apply(kernel, bound); });
}

// The order a shuffled run uses for this block_dim and seed (never the identity for >= 2 blocks).
std::vector<int32_t> ShuffledOrder(int32_t block_dim, uint64_t seed);

}  // namespace ascendc_cpu
