// The argument checks validate.cpp and validate_quant.cpp share: each throws aop::Error with a
// message that starts with the op's name and names the argument, the expected and the actual value.
#pragma once
#include <cstdint>
#include <string>

#include "ascend_ops/error.hpp"
#include "ascend_ops/tensor.hpp"

namespace aop::reshape_and_cache::checks {

constexpr const char* kOp = "reshape_and_cache";

[[noreturn]] inline void fail(aop_status status, const std::string& what) {
  throw aop::Error(status, std::string(kOp) + ": " + what);
}

void expect_contiguous(const char* name, const TensorView& t);
void expect_same_device(const char* name, const aop_tensor& t, const aop_tensor& key);
void expect_data(const char* name, const TensorView& t);

}  // namespace aop::reshape_and_cache::checks
