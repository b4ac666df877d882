// The emu backend for a `_core` module (NumPy arrays): launch::run_emu with the GIL released,
// the launch report as a dict (empty when there was nothing to launch).
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include <pybind11/pybind11.h>

#include "ascend_ops/emu_launch.hpp"
#include "ascend_ops/platform.hpp"
#include "ascendc_cpu/pybind_report.h"

AOP_NAMESPACE_BEGIN
namespace launch {

template <class Op>
pybind11::dict run_emu_report(const typename Op::Args& args, const std::string& soc, const std::string& order,
                              uint64_t seed, bool host_data_checks) {
  const ascendc_cpu::Order run_order = ascendc_cpu::python::ParseOrder(order, Op::kName);
  const Platform platform = platform_preset(soc);
  std::optional<ascendc_cpu::LaunchReport> report;
  {
    pybind11::gil_scoped_release release;
    report = run_emu<Op>(args, platform, run_order, seed, host_data_checks);
  }
  return report ? ascendc_cpu::python::ReportToDict(*report) : pybind11::dict();
}

}  // namespace launch
AOP_NAMESPACE_END
