// advance_step_flashattn as common's launch runs it (ascend_ops/kernel_launch.hpp): the words
// every backend uses, mapped to this op's host interface (host/adv_step_flash.h) and kernel
// (kernel/adv_step_flash_launch.h).
#pragma once
#include <array>

#include "ascend_ops/kernel_launch.hpp"
#include "host/adv_step_flash.h"
#include "kernel/adv_step_flash_launch.h"

namespace aop::adv_step_flash {

struct Op {
  using Args = adv_step_flash::Args;
  using Prepared = adv_step_flash::Args;
  using Tiling = AdvStepFlashTiling;
  static constexpr const char* kName = "advance_step_flashattn";
  static constexpr const char* kKernel = "adv_step_flash_kernel";
  // vector-only, with the SyncAll of the check phase
  static constexpr launch::KernelType kKernelType = launch::KernelType::kMixAiv1_0;

  static Prepared prepare(const Args& args) {
    validate(args);
    return args;
  }
  static void check_data(const Prepared& a) { adv_step_flash::check_data(a); }
  static Tiling tiling(const Prepared& a, const aop_platform& platform) { return adv_step_flash::tiling(a, platform); }
  static bool nothing_to_launch(const Prepared&, const Tiling&) { return false; }  // num_seqs > 0
  static size_t workspace_bytes(const Tiling& t) { return kernel_workspace_bytes(t); }
  static aop::Error kernel_error(const int64_t record[kAsfCheckWords]) { return adv_step_flash::kernel_error(record); }

  static std::array<launch::GmTensor, 6> gm_tensors(const Prepared& a) {
    using launch::GmRole;
    return {launch::gm(a.input_tokens, "input_tokens", GmRole::kOutput),
            launch::gm(a.sampled_token_ids, "sampled_token_ids", GmRole::kInput),
            launch::gm(a.input_positions, "input_positions", GmRole::kOutput),
            launch::gm(a.seq_lens, "seq_lens", GmRole::kOutput),
            launch::gm(a.slot_mapping, "slot_mapping", GmRole::kOutput),
            launch::gm(a.block_tables, "block_tables", GmRole::kInput)};
  }
  static auto npu_launch() { return &adv_step_flash_launch; }
#ifdef AOP_WITH_EMU
  static auto emu_kernel() { return &adv_step_flash_kernel; }
#endif
};

}  // namespace aop::adv_step_flash
