// The OpFuncImpl of a graph primitive whose only output is a dummy int32 [1] (an op that writes
// its inputs in place, e.g. reshape_and_cache, adv_step_flash). The host checks every argument
// when the kernel launches, so inference checks nothing. Built only with AOP_MS_ASCEND.
#pragma once
#include <memory>
#include <vector>

#include "abstract/dshape.h"
#include "ir/dtype.h"
#include "ops/ops_func_impl/op_func_impl.h"

#include "ascend_ops/config.hpp"

AOP_NAMESPACE_BEGIN
namespace ms_adapter {

class DummyOutputFuncImpl : public mindspore::ops::OpFuncImpl {
 public:
  mindspore::BaseShapePtr InferShape(const mindspore::PrimitivePtr& /*primitive*/,
                                     const std::vector<mindspore::AbstractBasePtr>& /*inputs*/) const override {
    return std::make_shared<mindspore::abstract::TensorShape>(mindspore::ShapeVector{1});
  }
  mindspore::TypePtr InferType(const mindspore::PrimitivePtr& /*primitive*/,
                               const std::vector<mindspore::AbstractBasePtr>& /*inputs*/) const override {
    return std::make_shared<mindspore::TensorType>(mindspore::kInt32);
  }
};

}  // namespace ms_adapter
AOP_NAMESPACE_END
