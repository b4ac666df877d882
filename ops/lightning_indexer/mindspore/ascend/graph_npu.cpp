// Graph mode on Ascend: the KernelMod and OpFuncImpl of the primitive lightning_indexer_op.yaml
// defines (CustomOpBuilder's op_def route, MindSpore 2.10 KBK). Inputs as the aot primitive's
// (mindspore/graph.h): six tensors (absent optional ones flagged off in `present`), then
// layout_query, layout_key, sparse_count, sparse_mode, present, return_value. Outputs
// sparse_indices int32 and sparse_values float32 ([0] unless return_value). The workspace grows
// with the shapes: Resize declares the host's npu_workspace_bytes (mindspore_graph_npu.hpp).
// Built only with AOP_MS_ASCEND; compile- and link-checked here, not run on NPU.
#include <memory>
#include <optional>

#include "abstract/dshape.h"
#include "ir/dtype.h"
#include "utils/value_utils.h"
#include "include/kernel/ascend/custom/kernel_mod_impl/custom_kernel_factory.h"
#include "include/kernel/ascend/custom/kernel_mod_impl/custom_register.h"

#include "ascend_ops/mindspore_graph_npu.hpp"
#include "host/lightning_indexer.h"
#include "mindspore/graph.h"

namespace aop::lightning_indexer::ms_graph_npu {

constexpr const char* kOp = "lightning_indexer";
constexpr int kTensors = 6;
constexpr const char* kTensorNames[kTensors] = {"query", "key", "weights", "actual_seq_lengths_query",
                                                "actual_seq_lengths_key", "block_table"};
// The scalar inputs, after the tensors (the yaml's order).
enum Scalar { kLayoutQuery = kTensors, kLayoutKey, kSparseCount, kSparseMode, kPresent, kReturnValue };

bool flagged(int64_t present, int i) { return i < 3 || (present & (int64_t{1} << (i - 3))) != 0; }

struct Op {
  static constexpr const char* kName = kOp;

  static Args args(const std::vector<mindspore::kernel::KernelTensor*>& in,
                   const std::vector<mindspore::kernel::KernelTensor*>& out, int device) {
    const int64_t present = ms_adapter::kernel_int(in.at(kPresent));
    aop_tensor views[kTensors];
    for (int i = 0; i < kTensors; ++i) {
      if (flagged(present, i)) views[i] = ms_adapter::kernel_tensor_view(in.at(i), device, kOp, kTensorNames[i]);
    }
    Args a = ms_graph::graph_args(views, ms_adapter::kernel_int(in.at(kLayoutQuery)),
                                  ms_adapter::kernel_int(in.at(kLayoutKey)), ms_adapter::kernel_int(in.at(kSparseCount)),
                                  ms_adapter::kernel_int(in.at(kSparseMode)), present);
    a.sparse_indices = ms_adapter::kernel_tensor_view(out.at(0), device, kOp, "sparse_indices");
    if (in.at(kReturnValue)->GetValueWithCheck<bool>()) {
      a.sparse_values = ms_adapter::kernel_tensor_view(out.at(1), device, kOp, "sparse_values");
    }
    return a;
  }
  static size_t workspace_bytes(const Args& a) { return npu_workspace_bytes(a, current_platform()); }
  static void run(const Args& a, const NpuContext& ctx) { run_npu(a, ctx); }
};

// A compile-time scalar input; RuntimeError naming it when the graph does not make it constant.
template <class T>
T constant(const std::vector<mindspore::AbstractBasePtr>& in, int i, const char* name) {
  const std::optional<T> value = mindspore::GetScalarValue<T>(in.at(i)->GetValue());
  if (!value) throw Error(AOP_TYPE_ERROR, std::string(kOp) + ": " + name + " should be a constant of the graph");
  return *value;
}

// The output shape from the host's validate() on the inferred shapes and dtypes (the same
// checks and messages as PyNative); unknown dimensions give a dynamic shape of the right rank.
std::vector<int64_t> infer_output_shape(const std::vector<mindspore::AbstractBasePtr>& in) {
  const int64_t layout_query = constant<int64_t>(in, kLayoutQuery, "layout_query");
  const int64_t sparse_count = constant<int64_t>(in, kSparseCount, "sparse_count");
  const int64_t present = constant<int64_t>(in, kPresent, "present");
  std::vector<std::vector<int64_t>> shapes(kTensors);
  std::vector<mindspore::TypeId> types(kTensors, mindspore::kNumberTypeInt32);
  for (int i = 0; i < kTensors; ++i) {
    if (!flagged(present, i)) continue;
    shapes[i] = in.at(i)->GetShape()->GetShapeVector();
    for (int64_t d : shapes[i]) {
      if (d < 0) {  // dynamic: the kernel's Resize checks once the shapes are known
        const size_t rank = layout_query == static_cast<int64_t>(Layout::kTND) ? 3 : 4;
        std::vector<int64_t> shape(rank, -1);
        shape.back() = sparse_count;
        return shape;
      }
    }
    types[i] = in.at(i)->GetType()->cast<mindspore::TensorTypePtr>()->element()->type_id();
  }
  aop_tensor views[kTensors];
  for (int i = 0; i < kTensors; ++i) {
    if (!flagged(present, i)) continue;
    views[i] = ms_adapter::aot_tensor(nullptr, static_cast<int>(shapes[i].size()), shapes[i].data(),
                                      ms_adapter::to_aop_dtype(types[i], kOp, kTensorNames[i]),
                                      aop_device{AOP_DEVICE_META, 0}, kOp, kTensorNames[i]);
  }
  const Args a = ms_graph::graph_args(views, layout_query, constant<int64_t>(in, kLayoutKey, "layout_key"),
                                      sparse_count, constant<int64_t>(in, kSparseMode, "sparse_mode"), present);
  validate(a, false);
  return output_shape(a);
}

class FuncImpl : public mindspore::ops::OpFuncImpl {
 public:
  mindspore::BaseShapePtr InferShape(const mindspore::PrimitivePtr& /*primitive*/,
                                     const std::vector<mindspore::AbstractBasePtr>& in) const override {
    const std::vector<int64_t> shape = infer_output_shape(in);
    const bool values = constant<bool>(in, kReturnValue, "return_value");
    return std::make_shared<mindspore::abstract::TupleShape>(mindspore::abstract::BaseShapePtrList{
        std::make_shared<mindspore::abstract::TensorShape>(shape),
        std::make_shared<mindspore::abstract::TensorShape>(values ? shape : mindspore::ShapeVector{0})});
  }
  mindspore::TypePtr InferType(const mindspore::PrimitivePtr& /*primitive*/,
                               const std::vector<mindspore::AbstractBasePtr>& /*in*/) const override {
    return std::make_shared<mindspore::Tuple>(
        mindspore::TypePtrList{std::make_shared<mindspore::TensorType>(mindspore::kInt32),
                               std::make_shared<mindspore::TensorType>(mindspore::kFloat32)});
  }
};

using Kernel = ms_adapter::NpuKernelMod<Op>;

}  // namespace aop::lightning_indexer::ms_graph_npu

using LightningIndexerNpuFuncImpl = aop::lightning_indexer::ms_graph_npu::FuncImpl;
using LightningIndexerNpuKernel = aop::lightning_indexer::ms_graph_npu::Kernel;
MS_CUSTOM_OPS_REGISTER(lightning_indexer_npu, LightningIndexerNpuFuncImpl, LightningIndexerNpuKernel);
