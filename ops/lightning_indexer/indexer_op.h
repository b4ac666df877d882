// What the descriptions of lightning_indexer (op.h) and lightning_indexer_quant (op_quant.h) have
// in common: the layouts, the output shape, the preparation and tiling steps of the launch. Each
// op derives its Op from IndexerOp<Op, Args> and adds its arguments, docstring, kernel and
// backends. validate, check_npu_limits and kernel_tiling are found by argument-dependent lookup
// in the namespace of ArgsT (each op's host interface).
#pragma once
#include <cstdint>
#include <utility>
#include <vector>

#include "ascend_ops/kernel_launch.hpp"
#include "ascend_ops/op_params.hpp"
#include "ascend_ops/seq_layout.hpp"
#include "ascend_ops/tensor.hpp"
#include "host/lightning_indexer.h"

namespace aop::lightning_indexer {

template <class Derived, class ArgsT>
struct IndexerOp {
  using Args = ArgsT;
  struct Prepared {
    Args args;
    Dims dims;
  };

  enum Input { kQuery = 0, kKey = 1 };  // params() indices of the inputs the output shape is read from
  // The layout names in Layout's order (a MindSpore graph passes the index); the host refuses
  // PA_BSND for the query.
  static constexpr const char* kLayouts[] = {"BSND", "TND", "PA_BSND", nullptr};
  // block_dim AICs, two AIVs each; as KERNEL_TASK_TYPE_DEFAULT in the kernels
  static constexpr launch::KernelType kKernelType = launch::KernelType::kMixAic1_2;

  // [B, S1, N2, K] (BSND query) or [T1, N2, K] (TND): both outputs alike.
  static std::vector<desc::Dim> output_dims(const Args& a, size_t /*output*/) {
    using desc::Dim;
    if (a.layout_query == Layout::kTND) return {Dim::of(kQuery, 0), Dim::of(kKey, -2), Dim::value(a.sparse_count)};
    return {Dim::of(kQuery, 0), Dim::of(kQuery, 1), Dim::of(kKey, -2), Dim::value(a.sparse_count)};
  }
  static void set_layout_query(Args& a, const desc::Value& v) {
    a.layout_query = seq::parse_layout(v.s, Derived::kName, "layout_query", false);
  }
  static void set_layout_key(Args& a, const desc::Value& v) {
    a.layout_key = seq::parse_layout(v.s, Derived::kName, "layout_key", true);
  }
  static void check_inputs(const Args& a) { (void)validate(a, false); }
  static void check_attributes(const Args&) {}

  static Prepared prepare(const Args& args) {
    const Dims d = validate(args);
    check_npu_limits(args, d);
    return {args, d};
  }
  static auto tiling(const Prepared& p, const aop_platform& platform) {
    return kernel_tiling(p.args, p.dims, platform);
  }
  // The shared planner's work split and workspace (kernel/lightning_indexer_tiling.h), as each
  // op's tiling_fields lists them after its own geometry.
  using Fields = std::vector<std::pair<const char*, int64_t>>;
  static Fields with_work_split(Fields own, const LightningIndexerTiling& t) {
    own.insert(own.end(), {{"items", t.items},
                           {"splits", t.splits},
                           {"halves", t.halves},
                           {"slots", t.slots},
                           {"split_align", t.split_align},
                           {"merge_pairs", t.merge_pairs},
                           {"units", t.units},
                           {"block_dim", t.block_dim},
                           {"items_per_core", t.items_per_core},
                           {"cores_with_extra", t.cores_with_extra},
                           {"slot_floats", t.slot_floats},
                           {"workspace_per_aic", t.workspace_per_aic},
                           {"workspace_floats", t.workspace_floats}});
    return own;
  }
  template <class Tiling>
  static bool nothing_to_launch(const Prepared& p, const Tiling& t) {
    return t.items == 0 || TensorView(p.args.sparse_indices).numel() == 0;
  }
};

}  // namespace aop::lightning_indexer
