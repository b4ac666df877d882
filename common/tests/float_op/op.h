// float_probe, described once: a required float, a keyword-only float with a default and an
// optional float; its one output holds the three doubles the host received.
#pragma once
#include <array>
#include <cstdint>
#include <utility>
#include <vector>

#include "ascend_ops/error.hpp"
#include "ascend_ops/op_params.hpp"
#include "ascend_ops/platform.h"
#include "host/float_probe.h"

namespace aop::float_probe {

struct Op {
  using Args = float_probe::Args;
  using Prepared = float_probe::Args;
  struct Tiling {
    int64_t outputs;
  };
  static constexpr const char* kName = "float_probe";
  static constexpr const char* kPackage = "ascend-op-float-probe";
  static constexpr const char* kDoc = "Return [scale, shift, bound] as float64 (bound NaN when None).\n";

  static const std::array<desc::Param<Args>, 4>& params() {
    using desc::Access;
    using desc::Kind;
    static const std::array<desc::Param<Args>, 4> p{{
        {"x", Kind::kTensor, Access::kRead, false, false, nullptr, &desc::set_field<&Args::x>},
        {"scale", Kind::kFloat, Access::kRead, false, false, nullptr, &desc::set_field<&Args::scale>},
        {"shift", Kind::kFloat, Access::kRead, false, true, "1.0", &desc::set_field<&Args::shift>},
        {"bound", Kind::kFloat, Access::kRead, true, true, "None", &set_bound},
    }};
    return p;
  }
  static const std::array<desc::Output<Args>, 1>& outputs() {
    static const std::array<desc::Output<Args>, 1> o{{{"out", AOP_DTYPE_FLOAT64, nullptr, &desc::set_field<&Args::out>}}};
    return o;
  }
  static void set_bound(Args& a, const desc::Value& v) {
    a.bound = v.is_none() ? std::nullopt : std::optional<double>(v.f);
  }
  static std::vector<desc::Dim> output_dims(const Args&, size_t) { return {desc::Dim::value(3)}; }
  // A host error for the tests to see with each front door's exception.
  static void check_attributes(const Args& a) {
    if (a.shift < 0) throw Error(AOP_VALUE_ERROR, "float_probe: shift should be >= 0");
  }
  static void check_inputs(const Args& a) { check_attributes(a); }
  static void run_cpu(const Args& a) { float_probe::run_cpu(a); }

  static Prepared prepare(const Args& a) {
    check_inputs(a);
    return a;
  }
  static Tiling tiling(const Prepared&, const aop_platform&) { return {3}; }
  static std::vector<std::pair<const char*, int64_t>> tiling_fields(const Tiling& t) { return {{"outputs", t.outputs}}; }
};

}  // namespace aop::float_probe
