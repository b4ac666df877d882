// aop::Platform helpers: the presets and the platform ops tile for.
#pragma once
#include <string>
#include <vector>

#include "ascend_ops/config.hpp"
#include "ascend_ops/error.hpp"
#include "ascend_ops/platform.h"

AOP_NAMESPACE_BEGIN

using Platform = aop_platform;

// The real device where CANN found one, else ASCEND_OPS_PLATFORM, else Ascend910B2.
inline Platform current_platform() {
  Platform p;
  aop_error err = make_error();
  throw_if(aop_platform_current(&p, &err), err);
  return p;
}

// Case-insensitive; ValueError listing the known names otherwise.
inline Platform platform_preset(const std::string& soc) {
  Platform p;
  aop_error err = make_error();
  throw_if(aop_platform_preset(soc.c_str(), &p, &err), err);
  return p;
}

inline std::vector<Platform> platform_presets() {
  std::vector<Platform> all(aop_platform_preset_count());
  for (size_t i = 0; i < all.size(); ++i) aop_platform_preset_at(i, &all[i]);
  return all;
}

// "Ascend910B2 (Atlas A2): 48 AIV / 24 AIC cores, UB 196608 bytes"
inline std::string describe(const Platform& p) {
  return str(p.soc, " (", p.family, "): ", p.aiv_cores, " AIV / ", p.aic_cores,
             " AIC cores, UB ", p.ub_bytes, " bytes", p.is_real_device ? ", real device" : "");
}

AOP_NAMESPACE_END
