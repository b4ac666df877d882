// dtype_of_probe, described once: an output of its argument x's dtype (dtype_of) next to one of a
// fixed dtype, x not being the first tensor argument.
#pragma once
#include <array>
#include <cstdint>
#include <utility>
#include <vector>

#include "ascend_ops/op_params.hpp"
#include "ascend_ops/platform.h"
#include "host/dtype_of_probe.h"

namespace aop::dtype_of_probe {

struct Op {
  using Args = dtype_of_probe::Args;
  using Prepared = dtype_of_probe::Args;
  struct Tiling {
    int64_t outputs;
  };
  static constexpr const char* kName = "dtype_of_probe";
  static constexpr const char* kPackage = "ascend-op-dtype-of-probe";
  static constexpr const char* kDoc = "Return (a copy of x, x.size as float32 [1]).\n";

  static const std::array<desc::Param<Args>, 2>& params() {
    using desc::Access;
    using desc::Kind;
    static const std::array<desc::Param<Args>, 2> p{{
        {"index", Kind::kTensor, Access::kRead, false, false, nullptr, &desc::set_field<&Args::index>},
        {"x", Kind::kTensor, Access::kRead, false, false, nullptr, &desc::set_field<&Args::x>},
    }};
    return p;
  }
  static const std::array<desc::Output<Args>, 2>& outputs() {
    static const std::array<desc::Output<Args>, 2> o{{
        {"copy", AOP_DTYPE_COUNT, nullptr, &desc::set_field<&Args::copy>, nullptr, "x"},
        {"count", AOP_DTYPE_FLOAT32, nullptr, &desc::set_field<&Args::count>},
    }};
    return o;
  }
  static std::vector<desc::Dim> output_dims(const Args&, size_t output) {
    if (output == 1) return {desc::Dim::value(1)};
    return {desc::Dim::of(1, 0), desc::Dim::of(1, 1)};  // x's [n, d]
  }
  static void check_attributes(const Args&) {}
  static void check_inputs(const Args& a) { dtype_of_probe::check_inputs(a); }
  static void run_cpu(const Args& a) { dtype_of_probe::run_cpu(a); }

  static Prepared prepare(const Args& a) {
    check_inputs(a);
    return a;
  }
  static Tiling tiling(const Prepared&, const aop_platform&) { return {2}; }
  static std::vector<std::pair<const char*, int64_t>> tiling_fields(const Tiling& t) { return {{"outputs", t.outputs}}; }
};

}  // namespace aop::dtype_of_probe
