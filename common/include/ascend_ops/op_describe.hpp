// An op's description (op_params.hpp) as JSON, for the generators that run at build time
// (common/python/ascend_ops/common/codegen.py: the Python front doors and MindSpore's Ascend op
// yaml). The op's `describe` program (generated from common/cmake/describe.cpp.in) prints it.
#pragma once
#include <cstdio>
#include <string>

#include "ascend_ops/dtype.hpp"
#include "ascend_ops/op_params.hpp"

AOP_NAMESPACE_BEGIN
namespace desc {

inline std::string json_string(const char* text) {
  if (text == nullptr) return "null";
  std::string s = "\"";
  for (const char* c = text; *c != '\0'; ++c) {
    switch (*c) {
      case '"': s += "\\\""; break;
      case '\\': s += "\\\\"; break;
      case '\n': s += "\\n"; break;
      case '\t': s += "\\t"; break;
      default: s += *c;
    }
  }
  return s + "\"";
}

inline const char* kind_name(Kind kind) {
  switch (kind) {
    case Kind::kTensor: return "tensor";
    case Kind::kInt: return "int";
    case Kind::kSymInt: return "symint";
    case Kind::kBool: return "bool";
    case Kind::kString: return "str";
    case Kind::kFloat: return "float";
  }
  return "?";
}

// {"name", "package", "doc", "params": [...], "outputs": [...]} (an output: name, dtype or dtype_of,
// present_if)
template <class Op>
std::string describe_json() {
  std::string s = "{\"name\": " + json_string(Op::kName) + ", \"package\": " + json_string(Op::kPackage) +
                  ", \"doc\": " + json_string(Op::kDoc) + ",\n \"params\": [";
  bool first = true;
  for (const auto& p : Op::params()) {
    s += first ? "\n  " : ",\n  ";
    first = false;
    s += "{\"name\": " + json_string(p.name) + ", \"kind\": " + json_string(kind_name(p.kind)) +
         ", \"written\": " + (p.written() ? "true" : "false") + ", \"optional\": " + (p.optional ? "true" : "false") +
         ", \"keyword_only\": " + (p.keyword_only ? "true" : "false") + ", \"default\": " + json_string(p.default_value) +
         ", \"choices\": ";
    if (p.choices == nullptr) {
      s += "null";
    } else {
      s += "[";
      for (const char* const* c = p.choices; *c != nullptr; ++c) s += (c == p.choices ? "" : ", ") + json_string(*c);
      s += "]";
    }
    s += "}";
  }
  s += "],\n \"outputs\": [";
  first = true;
  for (const auto& o : Op::outputs()) {
    s += first ? "\n  " : ",\n  ";
    first = false;
    // dtype_of: the argument whose dtype the output takes (checked here, when the op is built);
    // its "dtype" is then null
    const bool fixed = output_dtype_param(o, Op::params()) < 0;
    s += "{\"name\": " + json_string(o.name) +
         ", \"dtype\": " + json_string(fixed ? aop_dtype_name(o.dtype) : nullptr) +
         ", \"dtype_of\": " + json_string(o.dtype_of) + ", \"present_if\": " + json_string(o.present_if) + "}";
  }
  return s + "]}\n";
}

}  // namespace desc
AOP_NAMESPACE_END
