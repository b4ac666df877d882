// The arguments of an op, described once (ops/<op>/op.h: Op::params(), Op::outputs()) and read by
// every front door common derives from them: the torch schema and its CPU / Meta / PrivateUse1 /
// ADInplaceOrView kernels (torch_op.hpp), and later the NumPy and MindSpore entries. The anchors
// are PyTorch's native_functions.yaml, MindSpore's op yaml and CANN's OpDef: a name, a kind, how
// a tensor is used, whether None is allowed, a default. What the op's host code receives is its
// own Args struct: each argument names the setter that writes its field.
#pragma once
#include <array>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "ascend_ops/config.hpp"
#include "ascend_ops/error.hpp"
#include "ascend_ops/tensor.h"

AOP_NAMESPACE_BEGIN
namespace desc {

enum class Kind { kTensor, kInt, kSymInt, kBool, kString, kFloat };
// kWrite: written in place (torch alias annotation (a!), MindSpore RW_WRITE).
enum class Access { kRead, kWrite };

// One argument's value as a front door hands it over (kNone: None, an absent optional).
struct Value {
  enum class Tag { kNone, kTensor, kInt, kBool, kString, kFloat };
  Tag tag = Tag::kNone;
  aop_tensor tensor{};
  int64_t i = 0;
  double f = 0.0;
  bool b = false;
  std::string s;

  static Value none() { return Value{}; }
  static Value of(const aop_tensor& t) { Value v; v.tag = Tag::kTensor; v.tensor = t; return v; }
  static Value of_int(int64_t x) { Value v; v.tag = Tag::kInt; v.i = x; return v; }
  static Value of_float(double x) { Value v; v.tag = Tag::kFloat; v.f = x; return v; }
  static Value of_bool(bool x) { Value v; v.tag = Tag::kBool; v.b = x; return v; }
  static Value of_string(std::string x) { Value v; v.tag = Tag::kString; v.s = std::move(x); return v; }
  bool is_none() const { return tag == Tag::kNone; }
};

template <class Args>
struct Param {
  const char* name;
  Kind kind;
  Access access = Access::kRead;
  bool optional = false;         // None allowed (Tensor?, int?)
  bool keyword_only = false;     // after the schema's `*`
  const char* default_value = nullptr;  // the schema's default ("0", "1.0", "None", "\"BSND\"", "False"), or required
  void (*set)(Args&, const Value&) = nullptr;
  // A str argument's accepted values (nullptr-terminated): MindSpore graphs pass its index.
  const char* const* choices = nullptr;

  bool is_tensor() const { return kind == Kind::kTensor; }
  bool written() const { return kind == Kind::kTensor && access == Access::kWrite; }
};

// An output the op allocates and returns, shaped by Op::output_dims. An optional one (Tensor?)
// exists only when the bool argument `present_if` is true (or, in `_core`, when it is given).
// Its dtype is `dtype`, or with `dtype_of` that of a required tensor argument, as the framework
// has it (torch / MindSpore dtype, the NumPy array's dtype): see output_dtype_param.
template <class Args>
struct Output {
  const char* name;
  aop_dtype dtype;
  const char* present_if;  // nullptr: always
  void (*set)(Args&, const Value&);
  const char* former_keyword = nullptr;  // the name `_core` took the array by before (kept working)
  const char* dtype_of = nullptr;  // the tensor argument whose dtype the output takes (then dtype is unused)
  bool optional() const { return present_if != nullptr; }
};

// One dimension of an output: dimension `dim` of input argument `param` (negative: from the end),
// or a constant.
struct Dim {
  int param = -1;
  int dim = 0;
  int64_t constant = 0;
  static Dim of(int param, int dim) { return Dim{param, dim, 0}; }
  static Dim value(int64_t v) { return Dim{-1, 0, v}; }
};

// ---- setters: the field a value goes to, by its type ----

namespace detail {
template <class T> struct member;
template <class C, class F> struct member<F C::*> {
  using cls = C;
  using field = F;
};
template <class> constexpr bool kFalse = false;
}  // namespace detail

// Writes a value into the Args field M: aop_tensor (None: an empty view), std::optional<aop_tensor>,
// int64_t (None: 0, "not given"), double or float (None: 0), bool, std::string.
template <auto M>
void set_field(typename detail::member<decltype(M)>::cls& args, const Value& v) {
  using F = typename detail::member<decltype(M)>::field;
  if constexpr (std::is_same_v<F, aop_tensor>) {
    args.*M = v.tag == Value::Tag::kTensor ? v.tensor : aop_tensor{};
  } else if constexpr (std::is_same_v<F, std::optional<aop_tensor>>) {
    args.*M = v.tag == Value::Tag::kTensor ? std::optional<aop_tensor>(v.tensor) : std::nullopt;
  } else if constexpr (std::is_same_v<F, int64_t>) {
    args.*M = v.tag == Value::Tag::kInt ? v.i : 0;
  } else if constexpr (std::is_same_v<F, double> || std::is_same_v<F, float>) {
    args.*M = v.tag == Value::Tag::kFloat ? static_cast<F>(v.f) : F{0};
  } else if constexpr (std::is_same_v<F, bool>) {
    args.*M = v.b;
  } else if constexpr (std::is_same_v<F, std::string>) {
    args.*M = v.s;
  } else {
    static_assert(detail::kFalse<F>, "set_field: give this argument a setter of its own");
  }
}

// An optional tensor kept as a view plus a presence flag (Present: a bool field).
template <auto M, auto Present>
void set_flagged(typename detail::member<decltype(M)>::cls& args, const Value& v) {
  set_field<M>(args, v);
  args.*Present = v.tag == Value::Tag::kTensor;
}

// An argument the host's Args does not hold (it steers the front door, e.g. which outputs exist).
template <class Args>
void ignore(Args&, const Value&) {}

// The index of the argument named `name`, or -1.
template <class Args, size_t N>
int param_index(const std::array<Param<Args>, N>& params, const char* name) {
  for (size_t i = 0; i < N; ++i) {
    if (std::strcmp(params[i].name, name) == 0) return static_cast<int>(i);
  }
  return -1;
}

// Whether `out` exists for these argument values: always, or when its flag argument is true.
template <class Args, size_t N>
bool output_present(const Output<Args>& out, const std::array<Param<Args>, N>& params, const std::vector<Value>& values) {
  if (out.present_if == nullptr) return true;
  const int flag = param_index(params, out.present_if);
  return flag >= 0 && values[static_cast<size_t>(flag)].b;
}

// The index of the argument whose dtype `out` takes, or -1 for an output of a fixed dtype. A
// dtype_of that names no required tensor argument is a bug of the description (RuntimeError).
template <class Args, size_t N>
int output_dtype_param(const Output<Args>& out, const std::array<Param<Args>, N>& params) {
  if (out.dtype_of == nullptr) return -1;
  const int i = param_index(params, out.dtype_of);
  if (i < 0 || !params[static_cast<size_t>(i)].is_tensor() || params[static_cast<size_t>(i)].optional) {
    throw Error(AOP_RUNTIME_ERROR, std::string("the description of output ") + out.name + ": dtype_of '" +
                                       out.dtype_of + "' is not a required tensor argument");
  }
  return i;
}

// An output's shape from its Dims (Op::output_dims) and the arguments' shapes, by argument index;
// a dimension the shapes do not have (an absent or unknown input) is -1.
inline std::vector<int64_t> output_shape(const std::vector<Dim>& dims, const std::vector<std::vector<int64_t>>& shapes) {
  std::vector<int64_t> shape;
  for (const Dim& d : dims) {
    if (d.param < 0) {
      shape.push_back(d.constant);
      continue;
    }
    const std::vector<int64_t>& in = shapes[static_cast<size_t>(d.param)];
    const int dim = d.dim < 0 ? static_cast<int>(in.size()) + d.dim : d.dim;
    shape.push_back(dim >= 0 && dim < static_cast<int>(in.size()) ? in[static_cast<size_t>(dim)] : -1);
  }
  return shape;
}

// ---- the torch schema ----

// "<name>(<args>) -> (<outputs>)" with alias annotations (a!), (b!), ... on written tensors.
template <class Args, size_t N, size_t M>
std::string schema(const char* name, const std::array<Param<Args>, N>& params,
                   const std::array<Output<Args>, M>& outputs) {
  std::string s = std::string(name) + "(";
  char alias = 'a';
  bool keyword = false;
  for (size_t i = 0; i < N; ++i) {
    const Param<Args>& p = params[i];
    if (i > 0) s += ", ";
    if (p.keyword_only && !keyword) {
      s += "*, ";
      keyword = true;
    }
    switch (p.kind) {
      case Kind::kTensor:
        s += "Tensor";
        if (p.access == Access::kWrite) s += std::string("(") + alias++ + "!)";
        break;
      case Kind::kInt: s += "int"; break;
      case Kind::kSymInt: s += "SymInt"; break;
      case Kind::kBool: s += "bool"; break;
      case Kind::kString: s += "str"; break;
      case Kind::kFloat: s += "float"; break;
    }
    if (p.optional) s += "?";
    s += std::string(" ") + p.name;
    if (p.default_value != nullptr) s += std::string("=") + p.default_value;
  }
  s += ") -> (";
  for (size_t i = 0; i < M; ++i) {
    if (i > 0) s += ", ";
    s += std::string("Tensor") + (outputs[i].optional() ? "? " : " ") + outputs[i].name;
  }
  return s + ")";
}

}  // namespace desc
AOP_NAMESPACE_END
