// reshape_and_cache as common's launch runs it (ascend_ops/kernel_launch.hpp): the words every
// backend uses, mapped to this op's host interface (host/reshape_and_cache.h) and kernel
// (kernel/reshape_and_cache_launch.h).
#pragma once
#include <array>

#include "ascend_ops/kernel_launch.hpp"
#include "host/reshape_and_cache.h"
#include "kernel/reshape_and_cache_launch.h"

namespace aop::reshape_and_cache {

struct Op {
  using Args = reshape_and_cache::Args;
  using Prepared = reshape_and_cache::Args;  // the canonical [T, H, D] form
  using Tiling = ReshapeAndCacheTiling;
  static constexpr const char* kName = "reshape_and_cache";
  static constexpr const char* kKernel = "reshape_and_cache_kernel";
  // vector-only, with the SyncAll of the check phase
  static constexpr launch::KernelType kKernelType = launch::KernelType::kMixAiv1_0;

  static Prepared prepare(const Args& args) { return validated(args); }
  static void check_data(const Prepared& a) { check_slots(a); }
  static Tiling tiling(const Prepared& a, const aop_platform& platform) { return reshape_and_cache::tiling(a, platform); }
  static bool nothing_to_launch(const Prepared&, const Tiling& t) { return t.num_tokens == 0; }
  static size_t workspace_bytes(const Tiling& t) { return kernel_workspace_bytes(t); }
  static aop::Error kernel_error(const int64_t record[kRacCheckWords]) { return reshape_and_cache::kernel_error(record); }

  // key-only: value / value_cache are null pointers the kernel never touches.
  static std::array<launch::GmTensor, 5> gm_tensors(const Prepared& a) {
    using launch::GmRole;
    return {launch::gm(a.key, "key", GmRole::kInput),
            a.has_value ? launch::gm(a.value, "value", GmRole::kInput) : launch::gm_absent("value", GmRole::kInput),
            launch::gm(a.key_cache, "key_cache", GmRole::kOutput),
            a.has_value ? launch::gm(a.value_cache, "value_cache", GmRole::kOutput)
                        : launch::gm_absent("value_cache", GmRole::kOutput),
            launch::gm(a.slot_mapping, "slot_mapping", GmRole::kInput)};
  }
  static auto npu_launch() { return &reshape_and_cache_launch; }
#ifdef AOP_WITH_EMU
  static auto emu_kernel() { return &reshape_and_cache_kernel; }
#endif
};

}  // namespace aop::reshape_and_cache
