// Every op's PyTorch library entries, derived from its description (op_params.hpp: Op::params(),
// Op::outputs()): the schema with alias annotations and the CPU, Meta, ADInplaceOrView and
// (torch_npu.hpp) PrivateUse1 kernels. The kernels are boxed: they read the dispatcher's stack
// by the description, so one implementation serves every op (calls from Python reach them boxed
// anyway). Instantiated per op by the _torch module's generated registration
// (common/cmake/torch_module.cpp.in).
//
// What an op provides besides the description (ops/<op>/op.h):
//   kName                          the torch op name (torch.ops.ascend_ops.<kName>)
//   check_inputs(const Args&)      the host's checks without data and without outputs
//   check_attributes(const Args&)  the checks that need no tensor size (Meta, symbolic sizes)
//   run_cpu(const Args&)           the CPU backend: validates, checks data, writes
//   output_dims(const Args&, i)    the shape of output i (ops with outputs)
#pragma once
#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>
#include <torch/library.h>

#include <array>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "ascend_ops/op_params.hpp"
#include "ascend_ops/torch_view.hpp"

AOP_NAMESPACE_BEGIN
namespace torch_adapter {

template <class Op>
constexpr size_t kParamCount = std::tuple_size_v<std::decay_t<decltype(Op::params())>>;
template <class Op>
constexpr size_t kOutputCount = std::tuple_size_v<std::decay_t<decltype(Op::outputs())>>;

template <class Op>
const std::string& op_schema() {
  static const std::string schema = desc::schema(Op::kName, Op::params(), Op::outputs());
  return schema;
}

// aop_dtype -> torch dtype, for the outputs an op allocates.
inline c10::ScalarType to_torch_dtype(aop_dtype dtype) {
  switch (dtype) {
    case AOP_DTYPE_FLOAT16: return c10::ScalarType::Half;
    case AOP_DTYPE_BFLOAT16: return c10::ScalarType::BFloat16;
    case AOP_DTYPE_FLOAT32: return c10::ScalarType::Float;
    case AOP_DTYPE_FLOAT64: return c10::ScalarType::Double;
    case AOP_DTYPE_INT8: return c10::ScalarType::Char;
    case AOP_DTYPE_INT16: return c10::ScalarType::Short;
    case AOP_DTYPE_INT32: return c10::ScalarType::Int;
    case AOP_DTYPE_INT64: return c10::ScalarType::Long;
    case AOP_DTYPE_UINT8: return c10::ScalarType::Byte;
    case AOP_DTYPE_BOOL: return c10::ScalarType::Bool;
    default: TORCH_CHECK(false, "ascend_ops: no torch dtype for aop_dtype ", static_cast<int>(dtype));
  }
}

namespace detail {

// A concrete value (eager tensors); tensors as host views.
template <class Args>
desc::Value eager_value(const desc::Param<Args>& p, const c10::IValue& v, const char* op) {
  if (v.isNone()) return desc::Value::none();
  switch (p.kind) {
    case desc::Kind::kTensor:
      return desc::Value::of(to_aop_tensor(v.toTensor(), p.written() ? Access::kWrite : Access::kRead, op, p.name));
    case desc::Kind::kInt: return desc::Value::of_int(v.toInt());
    case desc::Kind::kSymInt: return desc::Value::of_int(v.toSymInt().expect_int());
    case desc::Kind::kBool: return desc::Value::of_bool(v.toBool());
    case desc::Kind::kString: return desc::Value::of_string(v.toStringRef());
    // The schema's float: torch hands a Python int over as a double already; a boxed caller may
    // not. A symbolic float never arrives: torch specialises a float argument (a guard per value).
    case desc::Kind::kFloat: return desc::Value::of_float(v.isInt() ? static_cast<double>(v.toInt()) : v.toDouble());
  }
  return desc::Value::none();
}

// Args of eager tensors. A setter's host error (a bad attribute) is raised as torch's.
template <class Op>
typename Op::Args eager_args(const c10::ArrayRef<c10::IValue>& in) {
  typename Op::Args args{};
  const auto& params = Op::params();
  try {
    for (size_t i = 0; i < params.size(); ++i) params[i].set(args, eager_value(params[i], in[i], Op::kName));
  } catch (const aop::Error& error) {
    rethrow_as_torch(error);
  }
  return args;
}

// The first tensor argument: outputs take its device.
template <class Op>
const at::Tensor& first_tensor(const c10::ArrayRef<c10::IValue>& in) {
  const auto& params = Op::params();
  for (size_t i = 0; i < params.size(); ++i) {
    if (params[i].is_tensor() && in[i].isTensor()) return in[i].toTensor();
  }
  TORCH_CHECK(false, Op::kName, ": no tensor argument");
}

template <class Op>
bool output_present(const desc::Output<typename Op::Args>& out, const c10::ArrayRef<c10::IValue>& in) {
  if (out.present_if == nullptr) return true;
  const int flag = desc::param_index(Op::params(), out.present_if);
  return flag >= 0 && in[static_cast<size_t>(flag)].toBool();
}

// Dimension d of output `o` on tensors whose sizes may be symbolic.
template <class Op>
c10::SymInt output_dim(const desc::Dim& d, const c10::ArrayRef<c10::IValue>& in) {
  if (d.param < 0) return c10::SymInt(d.constant);
  const at::Tensor& t = in[static_cast<size_t>(d.param)].toTensor();
  const int64_t rank = t.dim();
  const int64_t at = d.dim < 0 ? rank + d.dim : d.dim;
  if (at < 0 || at >= rank) {
    C10_THROW_ERROR(ValueError, std::string(Op::kName) + ": " + Op::params()[static_cast<size_t>(d.param)].name +
                                    " has " + std::to_string(rank) + " dimensions, too few for its layout");
  }
  return t.sym_size(at);
}

// Allocates the outputs (like the first tensor argument, the output's dtype or that of its
// dtype_of argument) and points Args at them; the stack values to return (None for an absent
// optional output).
template <class Op>
std::vector<c10::IValue> allocate_outputs(typename Op::Args& args, const c10::ArrayRef<c10::IValue>& in,
                                          bool set_views) {
  std::vector<c10::IValue> result;
  (void)args, (void)in, (void)set_views;  // an op without outputs uses none of them
  if constexpr (kOutputCount<Op> > 0) {
    const auto& outputs = Op::outputs();
    for (size_t o = 0; o < outputs.size(); ++o) {
      if (!output_present<Op>(outputs[o], in)) {
        result.emplace_back();
        continue;
      }
      std::vector<c10::SymInt> shape;
      for (const desc::Dim& d : Op::output_dims(args, o)) shape.push_back(output_dim<Op>(d, in));
      const at::Tensor& like = first_tensor<Op>(in);
      const int dtype_of = desc::output_dtype_param(outputs[o], Op::params());
      const c10::ScalarType dtype =
          dtype_of < 0 ? to_torch_dtype(outputs[o].dtype) : in[static_cast<size_t>(dtype_of)].toTensor().scalar_type();
      at::Tensor t = at::empty_symint(shape, like.options().dtype(dtype));
      if (set_views) outputs[o].set(args, desc::Value::of(to_aop_tensor(t, Access::kWrite, Op::kName, outputs[o].name)));
      result.emplace_back(std::move(t));
    }
  }
  return result;
}

inline void replace_inputs(torch::jit::Stack* stack, size_t inputs, std::vector<c10::IValue>&& outputs) {
  torch::jit::drop(*stack, inputs);
  for (c10::IValue& v : outputs) stack->push_back(std::move(v));
}

}  // namespace detail

// CPU: the host's checks (ops with outputs check their inputs before allocating), then run_cpu.
template <class Op>
void cpu_kernel(const c10::OperatorHandle&, torch::jit::Stack* stack) {
  constexpr size_t n = kParamCount<Op>;
  const c10::ArrayRef<c10::IValue> in = torch::jit::last(*stack, n);
  typename Op::Args args = detail::eager_args<Op>(in);
  std::vector<c10::IValue> outputs;
  if constexpr (kOutputCount<Op> > 0) {
    call_host([&] { Op::check_inputs(args); });
    outputs = detail::allocate_outputs<Op>(args, in, true);
  }
  call_host([&] { Op::run_cpu(args); });
  detail::replace_inputs(stack, n, std::move(outputs));
}

// Meta (FakeTensor, torch.compile): refuse what can be refused without data and without
// specialising the graph. Every tensor is translated (an unknown dtype or device is refused even
// when a size is symbolic); with every size, stride and int concrete the host's check_inputs
// runs, with a symbolic tensor only check_attributes, with a symbolic int nothing. Outputs take
// their (possibly symbolic) sizes from the inputs.
template <class Op>
void meta_kernel(const c10::OperatorHandle&, torch::jit::Stack* stack) {
  constexpr size_t n = kParamCount<Op>;
  const c10::ArrayRef<c10::IValue> in = torch::jit::last(*stack, n);
  const auto& params = Op::params();
  typename Op::Args args{};
  bool static_tensors = true, static_ints = true;
  for (size_t i = 0; i < n; ++i) {
    const desc::Param<typename Op::Args>& p = params[i];
    desc::Value v;
    if (in[i].isNone()) {
      v = desc::Value::none();
    } else if (p.kind == desc::Kind::kTensor) {
      const std::optional<aop_tensor> view = to_static_aop_tensor(in[i].toTensor(), Op::kName, p.name);
      if (!view) {
        static_tensors = false;
        continue;
      }
      v = desc::Value::of(*view);
    } else if (p.kind == desc::Kind::kSymInt) {
      const std::optional<int64_t> x = in[i].toSymInt().maybe_as_int();
      if (!x) {
        static_ints = false;
        continue;
      }
      v = desc::Value::of_int(*x);
    } else {
      v = detail::eager_value(p, in[i], Op::kName);
    }
    try {
      p.set(args, v);
    } catch (const aop::Error& error) {
      rethrow_as_torch(error);
    }
  }
  if (static_ints) {
    call_host([&] {
      if (static_tensors) {
        Op::check_inputs(args);
      } else {
        Op::check_attributes(args);
      }
    });
  }
  detail::replace_inputs(stack, n, detail::allocate_outputs<Op>(args, in, false));
}

// ADInplaceOrView: an in-place op bumps the version counter of every tensor it writes (autograd
// and torch's checks rely on it; torch's fallback bumps only tensors an op returns). Bumped first,
// so an inference tensor written outside inference mode is refused before anything is written.
template <class Op>
void inplace_or_view_kernel(const c10::OperatorHandle& op, c10::DispatchKeySet keys, torch::jit::Stack* stack) {
  constexpr size_t n = kParamCount<Op>;
  const c10::ArrayRef<c10::IValue> in = torch::jit::last(*stack, n);
  const auto& params = Op::params();
  for (size_t i = 0; i < n; ++i) {
    if (params[i].written() && in[i].isTensor()) in[i].toTensor().unsafeGetTensorImpl()->bump_version();
  }
  const at::AutoDispatchBelowADInplaceOrView below_inplace_or_view;
  op.redispatchBoxed(keys & c10::after_ADInplaceOrView_keyset, stack);
}

template <class Op>
void define(torch::Library& m) {
  m.def(op_schema<Op>().c_str(), {at::Tag::pt2_compliant_tag});
}

template <class Op>
void impl_cpu(torch::Library& m) {
  m.impl(Op::kName, torch::CppFunction::makeFromBoxedFunction<&cpu_kernel<Op>>());
}

template <class Op>
void impl_meta(torch::Library& m) {
  m.impl(Op::kName, torch::CppFunction::makeFromBoxedFunction<&meta_kernel<Op>>());
}

template <class Op>
void impl_inplace_or_view(torch::Library& m) {
  bool writes = false;
  for (const auto& p : Op::params()) writes = writes || p.written();
  if (writes) m.impl(Op::kName, torch::CppFunction::makeFromBoxedFunction<&inplace_or_view_kernel<Op>>());
}

}  // namespace torch_adapter
AOP_NAMESPACE_END
