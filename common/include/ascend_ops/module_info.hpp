// Version facts every native module of an op carries, checked by the Python loader.
#pragma once
#include "ascend_ops/config.hpp"
#include "ascend_ops/version.h"

AOP_NAMESPACE_BEGIN

// Module: a pybind11 module (any pybind11 version: torch's, MindSpore's or PyPI's).
template <class Module>
void set_module_info(Module& m) {
  m.attr("COMMON_ABI") = AOP_COMMON_ABI;
  m.attr("COMMON_VERSION") = AOP_COMMON_VERSION_STRING;
#ifdef AOP_OP_VERSION
  m.attr("OP_VERSION") = AOP_OP_VERSION;
#endif
}

AOP_NAMESPACE_END
