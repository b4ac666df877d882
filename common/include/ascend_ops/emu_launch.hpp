// The emulator side of an op's kernel launch (kernel_launch.hpp): one launch of the kernel
// function on common's AscendC emulator, and the emu backend on host memory, which runs the NPU
// path's steps (run_kernel in npu/run_kernel.hpp) with the workspace and the error record in host
// memory and the kernel on the emulator. Compiled only into emulator builds.
#pragma once
#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <utility>
#include <string>
#include <vector>

#include "ascend_ops/emu_config.hpp"
#include "ascend_ops/error.hpp"
#include "ascend_ops/kernel_launch.hpp"
#include "ascend_ops/platform.h"
#include "ascendc_cpu/launch.h"

AOP_NAMESPACE_BEGIN
namespace launch {

inline ascendc_cpu::KernelType emu_kernel_type(KernelType type) {
  return type == KernelType::kMixAic1_2 ? ascendc_cpu::KernelType::kMixAic1_2 : ascendc_cpu::KernelType::kMixAiv1_0;
}
inline ascendc_cpu::GmKind emu_kind(GmRole role) {
  return role == GmRole::kOutput ? ascendc_cpu::GmKind::kOutput : ascendc_cpu::GmKind::kInput;
}

// A strided output (a view of a bigger allocation, K and V halves of one tensor): its region is
// its span, and the emulator fails a write into a gap between its elements.
inline void add_view(ascendc_cpu::GmRegion& region, const GmTensor& t) {
  const TensorView view(t.view);
  if (t.role != GmRole::kOutput || t.view.ndim == 0 || view.is_contiguous() || view.numel() == 0) return;
  const int64_t elem = static_cast<int64_t>(dtype_size(t.view.dtype));
  region.bytes = std::min<uint64_t>(region.bytes, t.span_bytes);
  for (int i = 0; i < view.ndim(); ++i) region.view.emplace_back(view.dim(i), view.stride(i) * elem);
  region.view_elem_bytes = static_cast<uint64_t>(elem);
}

// One launch of Op's kernel with the argument list `p` on `platform`; `regions` bound every GM
// argument (an access outside them is the emulator's fault).
template <class Op, size_t M>
ascendc_cpu::LaunchReport emulate(const std::array<uint8_t*, M>& p, int32_t block_dim, const aop_platform& platform,
                                  const ascendc_cpu::GmRegions& regions, ascendc_cpu::Order order, uint64_t seed) {
  const ascendc_cpu::LaunchConfig config =
      emu_launch_config(Op::kKernel, block_dim, emu_kernel_type(Op::kKernelType), platform, order, seed);
  ascendc_cpu::LaunchReport report;
  call_with_pointers([&](auto... gm) { report = ascendc_cpu::Launch(config, regions, Op::emu_kernel(), gm...); }, p);
  return report;
}

// 64-byte aligned bytes (a check slot / the record is one data-cache line), filled with `fill`.
class LineBuffer {
 public:
  LineBuffer(size_t bytes, uint8_t fill) : storage_(bytes + 64, fill) {}
  uint8_t* data() { return storage_.data() + (64 - reinterpret_cast<uintptr_t>(storage_.data()) % 64) % 64; }

 private:
  std::vector<uint8_t> storage_;
};

// The emu backend: prepare, the host's data checks (unless host_data_checks is false: tests of
// the kernel's own checks), the tiling for `platform`, then the kernel on the emulator with a
// workspace of garbage (as an NPU pool hands it out: 0xFF bytes, so check slots need no zeroing
// and a float32 scratch the kernel did not write reads as NaN) and a zeroed error record. An error
// the kernel records is raised: as the exception the host would raise when the host's checks were
// skipped, as an internal error when they passed. std::nullopt when there is nothing to launch.
// Touches no Python object: callers may release the GIL around it.
template <class Op>
std::optional<ascendc_cpu::LaunchReport> run_emu(const typename Op::Args& args, const aop_platform& platform,
                                                 ascendc_cpu::Order order, uint64_t seed, bool host_data_checks) {
  const auto prepared = Op::prepare(args);
  if (host_data_checks) Op::check_data(prepared);
  auto tiling = Op::tiling(prepared, platform);
  if (Op::nothing_to_launch(prepared, tiling)) return std::nullopt;
  const auto tensors = Op::gm_tensors(prepared);
  const size_t workspace_bytes = Op::workspace_bytes(tiling);
  LineBuffer workspace(workspace_bytes, 0xFF);
  LineBuffer record(kRecordBytes, 0);
  ascendc_cpu::GmRegions regions;
  for (const GmTensor& t : tensors) {
    if (t.data == nullptr || t.span_bytes == 0) continue;
    ascendc_cpu::GmRegion region{t.data, t.span_bytes, t.name, emu_kind(t.role)};
    add_view(region, t);
    regions.push_back(std::move(region));
  }
  if (workspace_bytes > 0) {
    regions.push_back({workspace.data(), workspace_bytes, kWorkspaceName, ascendc_cpu::GmKind::kWorkspace});
  }
  regions.push_back({record.data(), kRecordBytes, kRecordName, ascendc_cpu::GmKind::kOutput});
  regions.push_back({&tiling, sizeof(tiling), kTilingName, ascendc_cpu::GmKind::kInput});
  const ascendc_cpu::LaunchReport report =
      emulate<Op>(kernel_pointers(tensors, workspace.data(), record.data(), &tiling), tiling.block_dim, platform,
                  regions, order, seed);
  const auto* words = reinterpret_cast<const int64_t*>(record.data());
  if (words[0] != 0) {
    const Error error = Op::kernel_error(words);
    if (!host_data_checks) throw error;
    throw Error(AOP_RUNTIME_ERROR, std::string(Op::kName) +
                                       ": internal: host and kernel checks disagree: the host's checks passed, "
                                       "the kernel reports: " + error.what());
  }
  return report;
}

}  // namespace launch
AOP_NAMESPACE_END
