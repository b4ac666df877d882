// Runs head_sum_study.h's two routes through the emulator (Ascend910B2 preset, MIX 1:2, 24
// groups) at decode shapes and prints one row per (B, S2, route): modelled µs, the memory bound,
// the busiest core's pipe times. Every run's scores are checked against a NumPy-style reference of
// the NPU numerics first (kCube bit-exact in its summation order is not asserted; both within
// 1e-5 relative of a double-precision sum of the fp16 terms).
// Usage: head_sum_study [max_keys_emulated]   (larger shapes: extrapolated by bench/quant_study/run.py)
#include <cmath>
#include <cstdio>
#include <algorithm>
#include <cstdlib>
#include <map>
#include <string>
#include <random>
#include <vector>

#include "ascendc_cpu/launch.h"
#include "head_sum_study.h"

namespace {

using ascendc_cpu::GmKind;
using namespace head_sum_study;

struct Result {
  double us, bound_us, hbm_mb;
  std::map<std::string, double> busy;
};

Result RunOne(uint32_t route, uint32_t keys_per_group, int groups, bool check) {
  const uint64_t keys = uint64_t{keys_per_group} * groups;
  std::mt19937 rng(5);
  std::uniform_int_distribution<int> d8(-127, 127);
  std::uniform_real_distribution<float> du(0.5f, 2.f);
  std::vector<int8_t> q(kHeads * kDim), k(keys * kDim);
  for (auto& x : q) x = static_cast<int8_t>(d8(rng));
  for (auto& x : k) x = static_cast<int8_t>(d8(rng));
  std::vector<half> ks(keys), wq16(16 * kHeads, static_cast<half>(0.f));
  // route 2 (float): the dequantised values as fp16 (q * 2^-5 and k * 2^-5: the same scores * 2^-10)
  std::vector<half> q16(route == 2 ? q.size() : 1), k16(route == 2 ? k.size() : 1);
  std::vector<float> wq8(kHeads * 8), out(keys, -1.f);
  for (auto& x : ks) x = static_cast<half>(route == 2 ? 1.f : du(rng) * 0.01f);
  if (route == 2) {
    for (size_t i = 0; i < q.size(); ++i) q16[i] = static_cast<half>(q[i] * 0x1p-5f);
    for (size_t i = 0; i < k.size(); ++i) k16[i] = static_cast<half>(k[i] * 0x1p-5f);
  }
  for (uint32_t h = 0; h < kHeads; ++h) {
    wq16[h] = static_cast<half>(du(rng) * (h % 3 == 0 ? -1.f : 1.f));
    for (int c = 0; c < 8; ++c) wq8[h * 8 + c] = static_cast<float>(wq16[h]);
  }
  std::vector<uint8_t> ws(static_cast<size_t>(groups) * 2 * kHeads * kBlock * 4);
  uint32_t tiling[2] = {route, keys_per_group};
  ascendc_cpu::LaunchConfig cfg{"head_sum_study_kernel", groups, 196608, ascendc_cpu::Order::kInOrder};
  cfg.kernel_type = ascendc_cpu::KernelType::kMixAic1_2;
  const ascendc_cpu::LaunchReport r = ascendc_cpu::Launch(
      cfg,
      {{q.data(), q.size(), "q", GmKind::kInput},
       {k.data(), k.size(), "k", GmKind::kInput},
       {q16.data(), q16.size() * 2, "q16", GmKind::kInput},
       {k16.data(), k16.size() * 2, "k16", GmKind::kInput},
       {ks.data(), ks.size() * 2, "ks", GmKind::kInput},
       {wq16.data(), wq16.size() * 2, "wq16", GmKind::kInput},
       {wq8.data(), wq8.size() * 4, "wq8", GmKind::kInput},
       {ws.data(), ws.size(), "ws", GmKind::kWorkspace},
       {out.data(), out.size() * 4, "out", GmKind::kOutput},
       {tiling, sizeof tiling, "tiling", GmKind::kInput}},
      head_sum_study_kernel, q.data(), k.data(), q16.data(), k16.data(), ks.data(), wq16.data(), wq8.data(), ws.data(), out.data(),
      reinterpret_cast<uint8_t*>(tiling));
  if (check) {
    for (uint64_t j = 0; j < keys; ++j) {
      double want = 0, mag = 0;
      for (uint32_t h = 0; h < kHeads; ++h) {
        int64_t dot = 0;
        for (uint32_t e = 0; e < kDim; ++e) dot += int64_t{q[h * kDim + e]} * k[j * kDim + e];
        const float r = static_cast<float>(dot > 0 ? dot : 0) * 0x1p-10f;
        const float a = route == 2 ? r : static_cast<float>(static_cast<half>(r));  // fp32 ReLU'd scores
        want += static_cast<double>(static_cast<float>(wq16[h])) * a;
        mag += std::fabs(static_cast<double>(static_cast<float>(wq16[h])) * a);
      }
      want *= static_cast<float>(ks[j]);
      mag *= static_cast<float>(ks[j]);
      if (std::fabs(out[j] - want) > 1e-5 * mag + 1e-30) {
        std::fprintf(stderr, "route %u key %llu: got %g want %g\n", route, static_cast<unsigned long long>(j), out[j], want);
        std::exit(1);
      }
    }
  }
  Result res{r.modelled_us, r.gm_bound_us, static_cast<double>(r.hbm_bytes) / 1e6, {}};
  for (const auto& c : r.blocks) {
    for (const auto& kv : c.pipe_busy_us) {
      const std::string name = c.core + "." + kv.first;
      res.busy[name] = std::max(res.busy[name], kv.second);
    }
  }
  return res;
}

}  // namespace

int main(int argc, char** argv) {
  const uint64_t max_keys = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 262144;
  std::printf("B,S2,route,groups,keys_per_group,modelled_us,gm_bound_us,hbm_MB,busiest_pipes_us\n");
  for (uint32_t b : {1u, 8u, 32u}) {
    for (uint32_t s2 : {8192u, 32768u, 131072u}) {
      const uint64_t keys = uint64_t{b} * s2;
      if (keys > max_keys) continue;
      // as the float kernel's splits: at least one 512-key block per group, at most 24 groups
      const int groups = static_cast<int>(std::min<uint64_t>(24, (keys + kBlock - 1) / kBlock));
      const uint32_t per = static_cast<uint32_t>((keys + groups * kTile - 1) / (groups * kTile) * kTile);
      for (uint32_t route : {2u, 0u, 1u}) {
        const Result r = RunOne(route, per, groups, keys <= 65536);
        std::printf("%u,%u,%s,%d,%u,%.2f,%.2f,%.1f,", b, s2, route == 0 ? "int8-vector" : route == 1 ? "int8-cube" : "float-vector", groups, per, r.us, r.bound_us, r.hbm_mb);
        for (const auto& kv : r.busy) std::printf(" %s=%.2f", kv.first.c_str(), kv.second);
        std::printf("\n");
        std::fflush(stdout);
      }
    }
  }
}
