// Exercises libascend_ops_common through the C++ wrappers with std::string-built keys and
// objects, and reports what it saw. Compiled twice: _GLIBCXX_USE_CXX11_ABI=0 and =1.
//
//   extern "C" int abi_probe_run(char* report, size_t report_len)
//     0 on success; `report` gets "key=value" lines (abi, sizeof_string, tiling_computed, ...).
#include <cstring>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <typeinfo>
#include <vector>

#include "ascend_ops/common.hpp"

#ifndef _GLIBCXX_USE_CXX11_ABI
#error "abi_probe needs libstdc++ (_GLIBCXX_USE_CXX11_ABI)"
#endif

namespace {

constexpr int kAbi = _GLIBCXX_USE_CXX11_ABI;

// Same fields in both builds: a tiling stored by one module is read by the other.
struct ProbeTiling {
  int32_t block_dim;
  int32_t tile;
  int64_t ub_bytes;
  int32_t built_by_abi;
};

// Different layout per ABI (std::string is 8 bytes with ABI 0, 32 with ABI 1).
struct ProbeState {
  std::string label;
  std::vector<std::string> parts;
};

void expect(bool ok, const std::string& what) {
  if (!ok) throw std::runtime_error("probe check failed: " + what);
}

std::string run() {
  std::ostringstream r;
  r << "abi=" << kAbi << "\n";
  r << "sizeof_string=" << sizeof(std::string) << "\n";
  r << "wrapper_type=" << typeid(aop::KeyBuilder).name() << "\n";
  aop::check_common_abi("abi_probe");

  // Platform preset, looked up case-insensitively from a std::string.
  const aop::Platform platform = aop::platform_preset(std::string("ascend") + "910b4");
  expect(std::string(platform.soc) == "Ascend910B4" && platform.aiv_cores == 40, "preset 910B4");
  r << "platform=" << platform.soc << "/" << platform.aiv_cores << "\n";

  // Tiling cache: the same key in both modules, so the second module hits the first's entry.
  aop::KeyBuilder key(std::string("abi_probe") + ".shared");
  key.add_shape({1024, 4096}).add_dtype(AOP_DTYPE_BFLOAT16).add_string(std::string("mode=fast"));
  key.add_platform(platform);
  bool computed = false;
  const ProbeTiling tiling = aop::tiling_cache().get_or_compute_pod<ProbeTiling>(key, [&] {
    computed = true;
    return ProbeTiling{platform.aiv_cores, 256, platform.ub_bytes, kAbi};
  });
  expect(tiling.block_dim == 40 && tiling.tile == 256 && tiling.ub_bytes == 196608, "tiling values");
  r << "tiling_computed=" << computed << "\n";
  r << "tiling_built_by_abi=" << tiling.built_by_abi << "\n";
  r << "key_hash=" << key.hash() << "\n";

  // Operator cache: an object full of std::string, under a key of this ABI.
  aop::KeyBuilder state_key(std::string("abi_probe") + ".state");
  state_key.add_int(kAbi);
  std::shared_ptr<ProbeState> state = aop::operator_cache().get_or_create_object<ProbeState>(
      state_key, [&] {
        return std::make_unique<ProbeState>(
            ProbeState{"state built with abi " + std::to_string(kAbi), {"k_cache", "v_cache"}});
      });
  expect(state->label == "state built with abi " + std::to_string(kAbi), "state label");
  expect(state->parts.size() == 2 && state->parts[1] == "v_cache", "state parts");
  r << "state=" << state->label << "\n";

  // The other ABI's object, if that module ran first, must be refused, never reinterpreted.
  aop::KeyBuilder other_key(std::string("abi_probe") + ".state");
  other_key.add_int(1 - kAbi);
  std::string cross = "absent";
  if (aop::operator_cache().find(other_key)) {
    try {
      aop::operator_cache().get_or_create_object<ProbeState>(
          other_key, [] { return std::make_unique<ProbeState>(); });
      cross = "accepted";
    } catch (const aop::Error& e) {
      cross = std::string(e.what()).find("cxx11abi=") != std::string::npos ? "refused" : "wrong-error";
    }
  }
  r << "cross_abi=" << cross << "\n";

  // Workspace: a private pool (reuse, bound error) and the process-wide default pool.
  {
    aop::Pool pool = aop::Pool::create(("abi_probe_pool_" + std::to_string(kAbi)).c_str(), 1 << 20);
    {
      aop::Block block = pool.acquire(3000);
      std::memset(block.data(), 0x5A, block.size());
      r << "block=" << block.size() << "\n";
    }
    aop::Block again = pool.acquire(2600);  // the same size class (3072): reused
    expect(pool.stats().reuses == 1 && pool.stats().allocations == 1, "pool reuse");
    try {
      pool.acquire(std::size_t(2) << 20);
      r << "pool_bound=missing\n";
    } catch (const aop::Error& e) {
      const std::string msg = e.what();
      const bool ok = e.status() == AOP_MEMORY_ERROR &&
                      msg.find("abi_probe_pool_" + std::to_string(kAbi)) != std::string::npos &&
                      msg.find("bound is 1048576 bytes") != std::string::npos;
      r << "pool_bound=" << (ok ? "caught" : "wrong:" + msg) << "\n";
    }
  }
  aop::Block ws = aop::default_pool().acquire(4096);
  r << "default_block=" << ws.size() << "\n";

  // A deliberate error from the library, caught as aop::Error in this module's ABI.
  try {
    aop::platform_preset(std::string("Ascend") + "-nope");
    r << "error=missing\n";
  } catch (const aop::Error& e) {
    const std::string msg = e.what();
    const bool ok = e.status() == AOP_VALUE_ERROR &&
                    msg.find("unknown Ascend platform 'Ascend-nope'") != std::string::npos &&
                    msg.find("Ascend910B2") != std::string::npos;
    r << "error=" << (ok ? "caught" : "wrong:" + msg) << "\n";
  }
  return r.str();
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int abi_probe_run(char* report, size_t report_len) {
  std::string text;
  int rc = 0;
  try {
    text = run();
  } catch (const std::exception& e) {
    text = std::string("exception=") + e.what() + "\n";
    rc = 1;
  } catch (...) {
    text = "exception=unknown\n";
    rc = 1;
  }
  if (report != nullptr && report_len > 0) {
    const size_t n = text.size() < report_len - 1 ? text.size() : report_len - 1;
    std::memcpy(report, text.data(), n);
    report[n] = '\0';
  }
  return rc;
}
