// Graph mode on Ascend (MindSpore 2.10 kernel-by-kernel): an op's run_npu as a KernelMod of the
// route CustomOpBuilder(backend="Ascend", op_def=<op yaml>) documents. The yaml (in the op's
// mindspore/ascend/) defines the primitive: mutated inputs `rw_write`, `side_effect_mem: True`,
// so the graph keeps the in-place write and orders it; MS_CUSTOM_OPS_REGISTER (custom_register.h)
// binds the primitive to an OpFuncImpl (shapes, dtypes) and to a KernelMod built on NpuKernelMod
// below. MindSpore hands Launch() the stream and the workspace Resize declared; Parameters arrive as
// their device addresses (no copy). Header-only (C++ ABI 0). Not run on NPU: compile- and
// link-checked against the mindspore wheel (tests/test_ms_ascend_compile.py).
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "include/runtime/hardware_abstract/kernel_base/common_utils.h"  // KernelAttr
#include "include/runtime/hardware_abstract/kernel_base/kernel.h"        // KernelMod, KernelTensor
#include "ops/ops_func_impl/op_func_impl.h"                               // OpFuncImpl
#include "abstract/dshape.h"
#include "ir/dtype.h"
#include "utils/value_utils.h"

#include "ascend_ops/config.hpp"
#include "ascend_ops/error.hpp"
#include "ascend_ops/kernel_launch.hpp"
#include "ascend_ops/mindspore_graph.hpp"
#include "ascend_ops/mindspore_view.hpp"
#include "ascend_ops/npu_context.hpp"
#include "ascend_ops/platform.hpp"

AOP_NAMESPACE_BEGIN
namespace ms_adapter {

// The workspace is per launch: Resize (shapes known) declares exactly Op::workspace_bytes(args),
// i.e. launch::npu_workspace_bytes<Op> (Op::workspace_bytes of the launch tiling: one place
// for the size), and MindSpore allocates it from its pool on the kernel's stream. Launch serves
// run_npu's one request (NpuContext::workspace) from that block; a request beyond what Resize
// declared, or a second request, is a bug and raises RuntimeError naming the op instead of
// writing past (or aliasing) the block.
class DeclaredWorkspace {
 public:
  DeclaredWorkspace(void* base, size_t declared, const char* op) : base_(base), declared_(declared), op_(op) {}

  void* take(size_t requested) {
    if (requested > declared_ || (taken_ && requested > 0)) {
      throw Error(AOP_RUNTIME_ERROR, std::string(op_) + ": internal: the graph kernel declared " +
                                         std::to_string(declared_) + " bytes of workspace in Resize but run_npu asks for " +
                                         std::to_string(requested) + (taken_ ? " more" : ""));
    }
    taken_ = taken_ || requested > 0;
    return requested == 0 ? nullptr : base_;
  }

 private:
  void* base_;
  size_t declared_;
  const char* op_;
  bool taken_ = false;
};

// A contiguous device tensor from a KBK kernel tensor.
inline aop_tensor kernel_tensor_view(const mindspore::kernel::KernelTensor* t, int device, const char* op,
                                     const char* arg) {
  const std::vector<int64_t>& shape = t->GetShapeVector();
  return aot_tensor(t->device_ptr(), static_cast<int>(shape.size()), shape.data(),
                    to_aop_dtype(t->dtype_id(), op, arg), aop_device{AOP_DEVICE_NPU, device}, op, arg);
}

// An int scalar input of a KBK kernel (cache_mode, head_num, a float's bits, ...).
inline int64_t kernel_int(mindspore::kernel::KernelTensor* t) { return t->GetValueWithCheck<int64_t>(); }

// KernelMod of an op described by `Op`:
//   static constexpr const char* kName;
//   static Args args(inputs, outputs, device): the op's host Args from the kernel tensors (the
//     data pointers may be null in Resize: only shapes, dtypes and scalars are read there);
//   static size_t workspace_bytes(const Args&): launch::npu_workspace_bytes<Op> for its op;
//   static void run(const Args&, const NpuContext&): run_npu.
// Launch never synchronises the host.
template <class Op>
class NpuKernelMod : public mindspore::kernel::KernelMod {
 public:
  std::vector<mindspore::kernel::KernelAttr> GetOpSupport() override { return {}; }

  bool Init(const std::vector<mindspore::kernel::KernelTensor*>& /*inputs*/,
            const std::vector<mindspore::kernel::KernelTensor*>& /*outputs*/) override {
    return true;
  }

  int Resize(const std::vector<mindspore::kernel::KernelTensor*>& inputs,
             const std::vector<mindspore::kernel::KernelTensor*>& outputs) override {
    const int status = KernelMod::Resize(inputs, outputs);
    if (status != mindspore::kernel::KRET_OK) return status;  // shapes not known yet
    workspace_bytes_ = Op::workspace_bytes(Op::args(inputs, outputs, static_cast<int>(device_id_)));
    workspace_size_list_.clear();
    if (workspace_bytes_ > 0) workspace_size_list_.push_back(workspace_bytes_);
    return status;
  }

  bool Launch(const std::vector<mindspore::kernel::KernelTensor*>& inputs,
              const std::vector<mindspore::kernel::KernelTensor*>& workspace,
              const std::vector<mindspore::kernel::KernelTensor*>& outputs, void* stream_ptr) override {
    DeclaredWorkspace block(workspace_bytes_ > 0 ? workspace.at(0)->device_ptr() : nullptr, workspace_bytes_,
                            Op::kName);
    NpuContext ctx;
    ctx.stream = stream_ptr;
    ctx.device = static_cast<int>(device_id_);
    ctx.workspace = [&block](size_t bytes) { return block.take(bytes); };
    // A host error (shapes MindSpore's infer let through) becomes MindSpore's exception for the
    // graph; data errors are the kernel's, raised at the next synchronisation (async_error.h).
    Op::run(Op::args(inputs, outputs, ctx.device), ctx);
    return true;
  }

 private:
  size_t workspace_bytes_ = 0;
};

// The KernelMod's Op for an op described in op.h: the inputs in the graph primitive's form
// (mindspore_graph.hpp: each argument, then `present`), the outputs its (or a dummy int32 [1]).
template <class Op>
struct GraphNpu {
  static constexpr const char* kName = Op::kName;

  static typename Op::Args args(const std::vector<mindspore::kernel::KernelTensor*>& in,
                                const std::vector<mindspore::kernel::KernelTensor*>& out, int device) {
    const auto& params = Op::params();
    const int64_t present = kernel_int(in.at(params.size()));
    typename Op::Args a{};
    std::vector<desc::Value> values(params.size());
    for (size_t i = 0; i < params.size(); ++i) {
      const auto& p = params[i];
      if (!is_given(p, present, i)) {
        p.set(a, desc::Value::none());
        continue;
      }
      if (p.is_tensor()) {
        values[i] = desc::Value::of(kernel_tensor_view(in.at(i), device, Op::kName, p.name));
      } else if (p.kind == desc::Kind::kBool) {
        values[i] = desc::Value::of_bool(in.at(i)->GetValueWithCheck<bool>());
      } else {
        values[i] = scalar_value<Op>(p, kernel_int(in.at(i)));
      }
      p.set(a, values[i]);
    }
    for (size_t o = 0; o < num_outputs<Op>(); ++o) {
      if (output_present<Op>(values, o)) {
        Op::outputs()[o].set(a, desc::Value::of(kernel_tensor_view(out.at(o), device, Op::kName, Op::outputs()[o].name)));
      }
    }
    return a;
  }
  static size_t workspace_bytes(const typename Op::Args& a) {
    return launch::npu_workspace_bytes<Op>(a, current_platform());
  }
  static void run(const typename Op::Args& a, const NpuContext& ctx) { Op::run_npu(a, ctx); }
};

// The OpFuncImpl of an op described in op.h: the host's checks and the outputs' shapes
// (mindspore_graph.hpp's infer, the aot primitive's), or a dummy int32 [1] for an op that only
// writes in place (the host then checks every argument when the kernel launches).
template <class Op>
class GraphFuncImpl : public mindspore::ops::OpFuncImpl {
 public:
  mindspore::BaseShapePtr InferShape(const mindspore::PrimitivePtr& /*primitive*/,
                                     const std::vector<mindspore::AbstractBasePtr>& in) const override {
    if (num_outputs<Op>() == 0) return std::make_shared<mindspore::abstract::TensorShape>(mindspore::ShapeVector{1});
    const auto& params = Op::params();
    std::vector<std::vector<int64_t>> shapes(params.size());
    std::vector<std::string> dtypes(params.size(), "int32");
    std::vector<std::optional<int64_t>> scalars(params.size());
    for (size_t i = 0; i < params.size(); ++i) {
      const auto& p = params[i];
      if (p.is_tensor()) {
        shapes[i] = in.at(i)->GetShape()->GetShapeVector();
        const auto type = in.at(i)->GetType()->cast<mindspore::TensorTypePtr>();
        if (type != nullptr) dtypes[i] = aop_dtype_name(to_aop_dtype(type->element()->type_id(), Op::kName, p.name));
      } else if (p.kind == desc::Kind::kBool) {
        const auto v = mindspore::GetScalarValue<bool>(in.at(i)->GetValue());
        if (v) scalars[i] = *v ? 1 : 0;
      } else {
        scalars[i] = mindspore::GetScalarValue<int64_t>(in.at(i)->GetValue());
      }
    }
    const std::optional<int64_t> present = mindspore::GetScalarValue<int64_t>(in.at(params.size())->GetValue());
    mindspore::abstract::BaseShapePtrList out;
    for (const auto& shape : infer<Op>(shapes, dtypes, scalars, present)) {
      out.push_back(std::make_shared<mindspore::abstract::TensorShape>(shape));
    }
    if (out.size() == 1) return out[0];
    return std::make_shared<mindspore::abstract::TupleShape>(out);
  }
  mindspore::TypePtr InferType(const mindspore::PrimitivePtr& /*primitive*/,
                               const std::vector<mindspore::AbstractBasePtr>& in) const override {
    if (num_outputs<Op>() == 0) return std::make_shared<mindspore::TensorType>(mindspore::kInt32);
    mindspore::TypePtrList types;
    for (const auto& o : Op::outputs()) {
      const int dtype_of = desc::output_dtype_param(o, Op::params());  // then that input's tensor type
      if (dtype_of >= 0) {
        types.push_back(in.at(static_cast<size_t>(dtype_of))->GetType()->Clone());
        continue;
      }
      types.push_back(std::make_shared<mindspore::TensorType>(mindspore::TypeIdToType(ms_type_of(o.dtype))));
    }
    if (types.size() == 1) return types[0];
    return std::make_shared<mindspore::Tuple>(types);
  }
};

}  // namespace ms_adapter
AOP_NAMESPACE_END
