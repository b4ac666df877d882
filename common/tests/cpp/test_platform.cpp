// Platform presets, case-insensitive lookup, the unknown-name error, ASCEND_OPS_PLATFORM.
#include <cstdlib>
#include <set>
#include <string>

#include "aop_test.h"
#include "ascend_ops/platform.hpp"

namespace {
struct Expected {
  const char* soc;
  const char* family;
  int aic;
  int aiv;
};
// Public CANN platform descriptions (cube_core_cnt / vector_core_cnt).
const Expected kExpected[] = {
    {"Ascend910B1", "Atlas A2", 24, 48},    {"Ascend910B2", "Atlas A2", 24, 48},
    {"Ascend910B3", "Atlas A2", 20, 40},    {"Ascend910B4", "Atlas A2", 20, 40},
    {"Ascend910_9391", "Atlas A3", 24, 48}, {"Ascend910_9392", "Atlas A3", 24, 48},
};

struct EnvGuard {  // restores ASCEND_OPS_PLATFORM
  std::string saved;
  bool had;
  EnvGuard() : had(std::getenv("ASCEND_OPS_PLATFORM") != nullptr) {
    if (had) saved = std::getenv("ASCEND_OPS_PLATFORM");
  }
  ~EnvGuard() {
    if (had) setenv("ASCEND_OPS_PLATFORM", saved.c_str(), 1);
    else unsetenv("ASCEND_OPS_PLATFORM");
  }
};
}  // namespace

TEST(presets_have_the_public_figures) {
  CHECK_EQ(aop_platform_preset_count(), sizeof(kExpected) / sizeof(kExpected[0]));
  for (size_t i = 0; i < aop_platform_preset_count(); ++i) {
    aop_platform p;
    CHECK_EQ(aop_platform_preset_at(i, &p), 1);
    const Expected& e = kExpected[i];
    CHECK_EQ(std::string(p.soc), e.soc);
    CHECK_EQ(std::string(p.family), e.family);
    CHECK_EQ(p.aic_cores, e.aic);
    CHECK_EQ(p.aiv_cores, e.aiv);
    CHECK_EQ(p.ub_bytes, 196608);
    CHECK_EQ(p.l1_bytes, 524288);
    CHECK_EQ(p.l0a_bytes, 65536);
    CHECK_EQ(p.l0b_bytes, 65536);
    CHECK_EQ(p.l0c_bytes, 131072);
    CHECK_EQ(p.is_real_device, 0);
  }
  aop_platform p;
  CHECK_EQ(aop_platform_preset_at(aop_platform_preset_count(), &p), 0);
  CHECK_EQ(aop_platform_preset_at(0, nullptr), 0);
}

TEST(lookup_is_case_insensitive) {
  const aop::Platform p = aop::platform_preset("ascend910b4");
  CHECK_EQ(std::string(p.soc), "Ascend910B4");  // the canonical spelling
  CHECK_EQ(p.aiv_cores, 40);
  CHECK_EQ(std::string(aop::platform_preset("ASCEND910_9392").soc), "Ascend910_9392");
  CHECK_EQ(aop::describe(aop::platform_preset("Ascend910B2")),
           "Ascend910B2 (Atlas A2): 48 AIV / 24 AIC cores, UB 196608 bytes");
}

TEST(unknown_name_lists_the_known_ones) {
  aop_platform p;
  aop_error err = aop::make_error();
  CHECK_EQ(aop_platform_preset("Ascend910B", &p, &err), AOP_VALUE_ERROR);  // a prefix is not a match
  CHECK_EQ(err.status, AOP_VALUE_ERROR);
  const std::string msg = err.message;
  CHECK(contains(msg, "unknown Ascend platform 'Ascend910B'"));
  for (const Expected& e : kExpected) CHECK(contains(msg, e.soc));
  CHECK_EQ(aop_platform_preset(nullptr, &p, &err), AOP_VALUE_ERROR);
  CHECK(contains(err.message, "Ascend910B1"));
  CHECK_EQ(aop_platform_preset("Ascend910B2", nullptr, &err), AOP_VALUE_ERROR);
  CHECK_THROWS_AS(aop::platform_preset("Ascend310P3"), aop::Error, [](const aop::Error& e) {
    CHECK_EQ(e.status(), AOP_VALUE_ERROR);
    CHECK(contains(e.what(), "'Ascend310P3'"));
  });
}

TEST(current_follows_ascend_ops_platform) {
  EnvGuard guard;
  unsetenv("ASCEND_OPS_PLATFORM");
  CHECK_EQ(std::string(aop::current_platform().soc), "Ascend910B2");
  setenv("ASCEND_OPS_PLATFORM", "", 1);  // empty counts as unset
  CHECK_EQ(std::string(aop::current_platform().soc), "Ascend910B2");
  setenv("ASCEND_OPS_PLATFORM", "ascend910b3", 1);
  const aop::Platform p = aop::current_platform();
  CHECK_EQ(std::string(p.soc), "Ascend910B3");
  CHECK_EQ(p.aiv_cores, 40);
  CHECK_EQ(p.is_real_device, 0);
  setenv("ASCEND_OPS_PLATFORM", "Ascend910_9391", 1);
  CHECK_EQ(std::string(aop::current_platform().family), "Atlas A3");
  setenv("ASCEND_OPS_PLATFORM", "Ascend999", 1);  // never a silent fallback
  CHECK_THROWS_AS(aop::current_platform(), aop::Error, [](const aop::Error& e) {
    CHECK_EQ(e.status(), AOP_VALUE_ERROR);
    CHECK(contains(e.what(), "'Ascend999' (from ASCEND_OPS_PLATFORM)"));
    CHECK(contains(e.what(), "Ascend910B4"));
  });
}

TEST(presets_list_from_cpp) {
  std::set<std::string> names;
  for (const aop::Platform& p : aop::platform_presets()) names.insert(p.soc);
  CHECK_EQ(names.size(), 6u);
  CHECK(names.count("Ascend910_9391") == 1);
}
