// The launcher: the CPU counterpart of `kernel<<<block_dim, nullptr, stream>>>(args...)`.
//
//   LaunchConfig cfg;  // kernel_name, block_dim, ub_bytes (platform preset), order, seed
//   cfg.kernel_name = "add_custom";
//   cfg.block_dim = 8;
//   ascendc_cpu::LaunchReport r = ascendc_cpu::Launch(
//       cfg, {{x, x_bytes, "x", GmKind::kInput}, {z, z_bytes, "z", GmKind::kOutput}},
//       add_custom, x, z, tiling);
//
// Each block runs on its own thread with its own UB arena, but only one block runs at a time
// (a baton passed at block end and at SyncAll), so a run is deterministic for a given order.
// Order::kBoth runs the blocks in order, restores every output region, runs them again in a
// seeded shuffled order and requires identical outputs.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "ascendc_cpu/counters.h"
#include "ascendc_cpu/errors.h"

namespace ascendc_cpu {

enum class Order { kInOrder, kShuffled, kBoth };

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
};
using GmRegions = std::vector<GmRegion>;

struct BlockReport {
  int32_t block = 0;
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
