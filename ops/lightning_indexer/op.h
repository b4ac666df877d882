// lightning_indexer as common's launch runs it (ascend_ops/kernel_launch.hpp): the words every
// backend uses, mapped to this op's host interface (host/lightning_indexer.h) and kernel
// (kernel/lightning_indexer_launch.h).
#pragma once
#include <array>
#include <optional>

#include "ascend_ops/kernel_launch.hpp"
#include "ascend_ops/tensor.hpp"
#include "host/lightning_indexer.h"
#include "kernel/lightning_indexer_launch.h"

namespace aop::lightning_indexer {

struct Op {
  using Args = lightning_indexer::Args;
  struct Prepared {
    Args args;
    Dims dims;
  };
  using Tiling = LightningIndexerTiling;
  static constexpr const char* kName = "lightning_indexer";
  static constexpr const char* kKernel = "lightning_indexer_kernel";
  // block_dim AICs, two AIVs each; as KERNEL_TASK_TYPE_DEFAULT in the kernel
  static constexpr launch::KernelType kKernelType = launch::KernelType::kMixAic1_2;

  static Prepared prepare(const Args& args) {
    const Dims d = validate(args);
    check_npu_limits(args, d);
    return {args, d};
  }
  static void check_data(const Prepared& p) { lightning_indexer::check_data(p.args, p.dims); }
  static Tiling tiling(const Prepared& p, const aop_platform& platform) {
    return kernel_tiling(p.args, p.dims, platform);
  }
  static bool nothing_to_launch(const Prepared& p, const Tiling& t) {
    return t.items == 0 || TensorView(p.args.sparse_indices).numel() == 0;
  }
  // The check slots and verdict lines, then the score slots and partial lists.
  static size_t workspace_bytes(const Tiling& t) { return kernel_workspace_bytes(t); }
  static aop::Error kernel_error(const int64_t record[kLiCheckWords]) { return lightning_indexer::kernel_error(record); }

  static std::array<launch::GmTensor, 8> gm_tensors(const Prepared& p) {
    using launch::GmRole;
    const Args& a = p.args;
    const auto optional = [](const std::optional<aop_tensor>& t, const char* name, GmRole role) {
      return t ? launch::gm(*t, name, role) : launch::gm_absent(name, role);
    };
    return {launch::gm(a.query, "query", GmRole::kInput),
            launch::gm(a.key, "key", GmRole::kInput),
            launch::gm(a.weights, "weights", GmRole::kInput),
            optional(a.actual_seq_lengths_query, "actual_seq_lengths_query", GmRole::kInput),
            optional(a.actual_seq_lengths_key, "actual_seq_lengths_key", GmRole::kInput),
            optional(a.block_table, "block_table", GmRole::kInput),
            launch::gm(a.sparse_indices, "sparse_indices", GmRole::kOutput),
            optional(a.sparse_values, "sparse_values", GmRole::kOutput)};
  }
  static auto npu_launch() { return &lightning_indexer_launch; }
#ifdef AOP_WITH_EMU
  static auto emu_kernel() { return &lightning_indexer_kernel; }
#endif
};

}  // namespace aop::lightning_indexer
