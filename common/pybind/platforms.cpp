// Platforms (platform.h) as dicts of the aop_platform fields; ascend_ops.common makes them
// Platform dataclasses.
#include <pybind11/pybind11.h>

#include <string>

#include "ascend_ops/error.hpp"
#include "ascend_ops/platform.h"
#include "binding.hpp"

namespace aop_runtime {
namespace {

py::dict platform_dict(const aop_platform& p) {
  py::dict d;
  d["soc"] = text(p.soc, sizeof(p.soc));
  d["family"] = text(p.family, sizeof(p.family));
  d["aiv_cores"] = p.aiv_cores;
  d["aic_cores"] = p.aic_cores;
  d["ub_bytes"] = p.ub_bytes;
  d["l1_bytes"] = p.l1_bytes;
  d["l0a_bytes"] = p.l0a_bytes;
  d["l0b_bytes"] = p.l0b_bytes;
  d["l0c_bytes"] = p.l0c_bytes;
  d["is_real_device"] = p.is_real_device != 0;
  return d;
}

py::list platform_presets() {
  py::list out;
  for (size_t i = 0, n = aop_platform_preset_count(); i < n; ++i) {
    aop_platform p;
    if (aop_platform_preset_at(i, &p)) out.append(platform_dict(p));
  }
  return out;
}

py::dict platform_preset(const py::str& name) {
  const std::string soc = name;
  aop_platform p;
  aop_error err = aop::make_error();
  const aop_status status = aop_platform_preset(soc.c_str(), &p, &err);
  if (status != AOP_OK) raise_for(status, err, "platform_preset(" + py::repr(name).cast<std::string>() + ")");
  return platform_dict(p);
}

py::dict current_platform() {
  aop_platform p;
  aop_error err = aop::make_error();
  raise_for(aop_platform_current(&p, &err), err, "current_platform()");
  return platform_dict(p);
}

}  // namespace

void bind_platforms(py::module_& m) {
  m.def("platform_presets", &platform_presets, "Every preset, as dicts of the aop_platform fields.");
  m.def("platform_preset", &platform_preset, py::arg("name"), "The preset named `name` (case-insensitive).");
  m.def("current_platform", &current_platform, "The platform ops tile for in this process.");
}

}  // namespace aop_runtime
