// How an op's AscendC kernel is launched, described once per op and run by common for every
// backend: on the NPU (npu/run_kernel.hpp: CANN's <<<>>> wrapper, or the simulated runtime with the
// kernel on the emulator) and through the emulator on host memory (emu_launch.hpp). Both run the
// same steps in the same order: prepare (validate), the launch tiling, nothing to launch, the GM
// arguments, the check-slot workspace and the error record, the launch.
//
// An op describes its kernel with a struct (ops/<op>/op.h) holding:
//   kName                    the op's public name (messages, caches, error records)
//   kKernel                  the kernel function's name (the emulator's reports, the simulated stream)
//   kKernelType              launch::KernelType of the kernel (KERNEL_TASK_TYPE in its source)
//   Prepared prepare(const Args&)           validation; what every later step reads
//   void check_data(const Prepared&)        the host's data checks (reads the data)
//   Tiling tiling(const Prepared&, const aop_platform&)
//   bool nothing_to_launch(const Prepared&, const Tiling&)
//   size_t workspace_bytes(const Tiling&)   the check slots (and scratch) of one launch
//   aop::Error kernel_error(const int64_t record[8])
//   std::array<launch::GmTensor, N> gm_tensors(const Prepared&)   in the kernel's argument order;
//                                           the workspace, error record and tiling follow them
//   static auto npu_launch()                the <<<>>> wrapper (kernel/<op>_launch.h), CANN builds
//   static auto emu_kernel()                the kernel function, emulator builds
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>

#include "ascend_ops/config.hpp"
#include "ascend_ops/platform.h"
#include "ascend_ops/tensor.hpp"

AOP_NAMESPACE_BEGIN
namespace launch {

// What the kernel does with a GM tensor: the emulator's region kinds (checked accesses).
enum class GmRole { kInput, kOutput };

// The kernel types the emulator schedules, as the kernel source declares them.
enum class KernelType { kMixAiv1_0, kMixAic1_2 };

// One GM argument: null data when the tensor is absent (the kernel never touches it).
struct GmTensor {
  void* data;
  const char* name;
  GmRole role;
  uint64_t span_bytes;  // bytes from data to one past the last element
  // The tensor's shape and strides (ndim 0: not given): the emulator checks that a kernel writes
  // only the elements of a strided output, not the gaps between them.
  aop_tensor view = {};
};

inline GmTensor gm(const aop_tensor& t, const char* name, GmRole role) {
  return GmTensor{t.data, name, role, t.data == nullptr ? 0 : static_cast<uint64_t>(TensorView(t).span_bytes()), t};
}
inline GmTensor gm_absent(const char* name, GmRole role) { return GmTensor{nullptr, name, role, 0}; }
// An optional tensor argument: absent (null) when not given.
inline GmTensor gm(const std::optional<aop_tensor>& t, const char* name, GmRole role) {
  return t ? gm(*t, name, role) : gm_absent(name, role);
}

// The kernel's argument list: the tensors, then workspace, error record, tiling (every op's order).
template <size_t N>
std::array<uint8_t*, N + 3> kernel_pointers(const std::array<GmTensor, N>& tensors, void* workspace, void* record,
                                            void* tiling) {
  std::array<uint8_t*, N + 3> p{};
  for (size_t i = 0; i < N; ++i) p[i] = static_cast<uint8_t*>(tensors[i].data);
  p[N] = static_cast<uint8_t*>(workspace);
  p[N + 1] = static_cast<uint8_t*>(record);
  p[N + 2] = static_cast<uint8_t*>(tiling);
  return p;
}

namespace detail {
template <class Fn, size_t M, size_t... I, class... Lead>
void call_with_pointers(Fn fn, const std::array<uint8_t*, M>& p, std::index_sequence<I...>, Lead... lead) {
  fn(lead..., p[I]...);
}
}  // namespace detail

// fn(lead..., p[0], ..., p[M-1]): a kernel or its wrapper called with the pointer list.
template <class Fn, size_t M, class... Lead>
void call_with_pointers(Fn fn, const std::array<uint8_t*, M>& p, Lead... lead) {
  detail::call_with_pointers(fn, p, std::make_index_sequence<M>(), lead...);
}

// Names of the three trailing arguments, for the emulator's regions.
constexpr const char* kWorkspaceName = "workspace";
constexpr const char* kRecordName = "error_record";
constexpr const char* kTilingName = "tiling";
constexpr size_t kRecordBytes = 8 * sizeof(int64_t);  // the error record: 8 int64, one data-cache line

// The cores a launch of `units` equal units of work takes on `cores` cores: the fewest that give
// the same longest share as spreading them over min(units, cores) (64 units on 48 cores: 32 cores
// of 2, not 16 of 2 and 32 of 1). The makespan is the same; every core less saves its launch share,
// its check-phase traffic (each core reads every core's verdict code) and its copies of broadcast
// tables.
inline int64_t cores_for_units(int64_t units, int64_t cores) {
  cores = cores < 1 ? 1 : cores;
  if (units <= 1) return 1;
  const int64_t longest = (units + cores - 1) / cores;
  return (units + longest - 1) / longest;
}

// GM bytes of the check phase's exchange (aop_kernel/check_slots.h) in a launch of `block_dim`
// cores: each core writes word 0 of its slot and reads word 0 of every slot; none on one core.
inline int64_t check_exchange_bytes(int64_t block_dim) {
  return block_dim > 1 ? block_dim * block_dim * 8 + block_dim * 8 : 0;
}

// A core's cost in cores_for_cost's model: `unit_cycles` per unit of work, `batch_cycles` per
// batch of up to `batch_units` units (a DMA's latency, the vector instructions' starts), and, in a
// launch of more than one core, `exchange_cycles` once (the check's SyncAll and the codes' DMA).
struct CoreCost {
  int64_t unit_cycles;
  int64_t batch_units;
  int64_t batch_cycles;
  int64_t exchange_cycles;
};

// The estimated cycles of the busiest core when `units` are split over `block_dim` cores.
inline int64_t estimated_cycles(int64_t units, int64_t block_dim, const CoreCost& c) {
  const int64_t most = (units + block_dim - 1) / block_dim;
  const int64_t batch = c.batch_units < 1 ? 1 : c.batch_units;
  return (block_dim > 1 ? c.exchange_cycles : 0) + (most + batch - 1) / batch * c.batch_cycles + most * c.unit_cycles;
}

// The cores for `units` on at most `cores` cores when the check exchange is to stay within
// `exchange_budget` GM bytes: of the launches cores_for_units gives on 1..cores cores, the
// fastest by estimated_cycles whose check_exchange_bytes fit (one core always does: it needs no
// exchange, and no SyncAll), the fewest cores on a tie.
inline int64_t cores_for_cost(int64_t units, int64_t cores, const CoreCost& cost, int64_t exchange_budget) {
  int64_t best = 1;
  int64_t best_cycles = estimated_cycles(units, 1, cost);
  for (int64_t k = 2; k <= cores; ++k) {
    const int64_t c = cores_for_units(units, k);
    if (check_exchange_bytes(c) > exchange_budget) break;  // grows with c, and c with k
    const int64_t cycles = estimated_cycles(units, c, cost);
    if (cycles < best_cycles) {
      best = c;
      best_cycles = cycles;
    }
  }
  return best;
}

// The GM workspace of a kernel whose only workspace is the check protocol's slots
// (aop_kernel/check_slots.h): `slots` slots of `words` int64 each (one per core, or per AIV).
// Every core writes its own slot before reading any: it needs no zeroing.
inline size_t check_slots_bytes(int64_t slots, int64_t words) {
  return static_cast<size_t>(slots) * static_cast<size_t>(words) * sizeof(int64_t);
}

// The GM workspace the kernel's launch needs on `platform` (what run_npu asks
// NpuContext::workspace for): Op::workspace_bytes of the launch tiling. Validates (Op::prepare) and
// reads no data: graph kernels declare it once shapes are known (MindSpore KernelMod::Resize).
template <class Op>
size_t npu_workspace_bytes(const typename Op::Args& args, const aop_platform& platform) {
  return Op::workspace_bytes(Op::tiling(Op::prepare(args), platform));
}

}  // namespace launch
AOP_NAMESPACE_END
