// Platform presets for Atlas A2 / A3 parts and the platform ops tile for.
//
// Figures from the public CANN platform descriptions (platform_config/<soc>.ini:
// cube_core_cnt, vector_core_cnt, ub_size, l1_size, l0_a/b/c_size): every part below has
// 192 KiB of UB per vector core, 512 KiB of L1, 64 KiB of L0A and L0B, 128 KiB of L0C, and
// two vector cores per cube core.
#include <cctype>
#include <cstring>
#include <string>

#include "ascend_ops/platform.h"
#include "env_internal.h"
#include "error_internal.h"

#ifdef AOP_WITH_CANN
#include "acl/acl.h"
#endif

using aop_internal::set_error;

namespace {

struct Preset {
  const char* soc;
  const char* family;
  int32_t aic_cores;
  int32_t aiv_cores;
};

constexpr Preset kPresets[] = {
    {"Ascend910B1", "Atlas A2", 24, 48},    {"Ascend910B2", "Atlas A2", 24, 48},
    {"Ascend910B3", "Atlas A2", 20, 40},    {"Ascend910B4", "Atlas A2", 20, 40},
    {"Ascend910_9391", "Atlas A3", 24, 48}, {"Ascend910_9392", "Atlas A3", 24, 48},
};
constexpr size_t kPresetCount = sizeof(kPresets) / sizeof(kPresets[0]);
constexpr const char* kDefaultSoc = "Ascend910B2";

void fill(const Preset& preset, aop_platform* out) {
  std::memset(out, 0, sizeof(*out));
  aop_internal::copy_name(out->soc, sizeof(out->soc), preset.soc);
  aop_internal::copy_name(out->family, sizeof(out->family), preset.family);
  out->aic_cores = preset.aic_cores;
  out->aiv_cores = preset.aiv_cores;
  out->ub_bytes = 196608;
  out->l1_bytes = 524288;
  out->l0a_bytes = 65536;
  out->l0b_bytes = 65536;
  out->l0c_bytes = 131072;
  out->is_real_device = 0;
}

bool same_name(const char* a, const char* b) {
  for (; *a != '\0' && *b != '\0'; ++a, ++b) {
    if (std::tolower(static_cast<unsigned char>(*a)) != std::tolower(static_cast<unsigned char>(*b)))
      return false;
  }
  return *a == *b;
}

const Preset* find(const char* soc) {
  for (const Preset& p : kPresets) {
    if (same_name(p.soc, soc)) return &p;
  }
  return nullptr;
}

std::string known_names() {
  std::string names;
  for (const Preset& p : kPresets) {
    if (!names.empty()) names += ", ";
    names += p.soc;
  }
  return names;
}

// `where` says where the name came from, for the message.
aop_status lookup(const char* soc, const char* where, aop_platform* out, aop_error* err) {
  if (out == nullptr) {
    set_error(err, AOP_VALUE_ERROR, "aop_platform: out should not be NULL");
    return AOP_VALUE_ERROR;
  }
  if (soc == nullptr || soc[0] == '\0') {
    set_error(err, AOP_VALUE_ERROR, "%s should name an Ascend platform, one of: %s", where,
              known_names().c_str());
    return AOP_VALUE_ERROR;
  }
  const Preset* preset = find(soc);
  if (preset == nullptr) {
    set_error(err, AOP_VALUE_ERROR, "unknown Ascend platform '%s' (%s); known platforms: %s",
              soc, where, known_names().c_str());
    return AOP_VALUE_ERROR;
  }
  fill(*preset, out);
  return AOP_OK;
}

}  // namespace

extern "C" {

size_t aop_platform_preset_count(void) noexcept { return kPresetCount; }

int aop_platform_preset_at(size_t index, aop_platform* out) noexcept {
  if (index >= kPresetCount || out == nullptr) return 0;
  fill(kPresets[index], out);
  return 1;
}

aop_status aop_platform_preset(const char* soc, aop_platform* out, aop_error* err) noexcept {
  aop_internal::clear_error(err);
  return aop_internal::guarded<aop_status>(err, AOP_RUNTIME_ERROR,
                                           [&] { return lookup(soc, "preset name", out, err); });
}

aop_status aop_platform_current(aop_platform* out, aop_error* err) noexcept {
  aop_internal::clear_error(err);
  return aop_internal::guarded<aop_status>(err, AOP_RUNTIME_ERROR, [&] {
#ifdef AOP_WITH_CANN
    const char* device_soc = aclrtGetSocName();
    if (device_soc != nullptr && device_soc[0] != '\0') {
      const aop_status status = lookup(device_soc, "reported by the device (aclrtGetSocName)", out, err);
      if (status == AOP_OK) out->is_real_device = 1;
      return status;
    }
#endif
    const char* env = aop_internal::env_string("ASCEND_OPS_PLATFORM");
    if (env != nullptr) return lookup(env, "from ASCEND_OPS_PLATFORM", out, err);
    return lookup(kDefaultSoc, "default", out, err);
  });
}

}  // extern "C"
