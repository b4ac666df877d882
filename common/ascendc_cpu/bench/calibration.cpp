// The emulator's calibration kernels at the shapes of published Atlas A2/A3 measurements
// (common/ascendc_cpu/README.md, "Calibration"): prints one JSON object per case on stdout, for
// bench/calibration.py to put beside the published figures. Usage: calibration [case ...]
// (default: every case). The kernels' outputs are checked against a CPU reference (the GEMM on
// sampled elements), so a wrong kernel cannot produce a figure.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "ascendc_cpu/launch.h"
#include "calib_gemm.h"
#include "calib_stream.h"

namespace {

using ascendc_cpu::GmKind;
using ascendc_cpu::LaunchConfig;
using ascendc_cpu::LaunchReport;

// Core counts of common's platform presets (common/src/platform.cpp).
LaunchConfig Config(const char* name, const std::string& soc, int32_t blocks, ascendc_cpu::KernelType type) {
  LaunchConfig cfg;
  cfg.kernel_name = name;
  cfg.block_dim = blocks;
  cfg.kernel_type = type;
  cfg.order = ascendc_cpu::Order::kInOrder;
  const bool twenty = soc == "Ascend910B3" || soc == "Ascend910B4";
  cfg.aic_cores = twenty ? 20 : 24;
  cfg.aiv_cores = twenty ? 40 : 48;
  cfg.soc = soc;
  return cfg;
}

struct Result {
  LaunchReport report;
  double wall_s = 0;
};

Result Timed(const std::function<LaunchReport()>& run) {
  const auto t0 = std::chrono::steady_clock::now();
  Result r{run(), 0};
  r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

void Print(const std::string& name, const std::string& soc, const std::string& shape, double modelled_us,
           const LaunchReport& r, double wall_s, const std::string& how) {
  auto busy = [&](const char* p) { return r.pipe_busy_max_us.count(p) ? r.pipe_busy_max_us.at(p) : 0.0; };
  std::printf(
      "{\"case\": \"%s\", \"soc\": \"%s\", \"shape\": \"%s\", \"modelled_us\": %.4f, \"launch_us\": %.4f, "
      "\"gm_bound_us\": %.4f, \"hbm_bytes\": %llu, \"bound\": \"%s\", \"busy_max_us\": {\"M\": %.4f, \"MTE2\": %.4f, "
      "\"MTE3\": %.4f, \"V\": %.4f, \"FIX\": %.4f}, \"wall_s\": %.2f, \"how\": \"%s\"}\n",
      name.c_str(), soc.c_str(), shape.c_str(), modelled_us, r.launch_us, r.gm_bound_us,
      static_cast<unsigned long long>(r.hbm_bytes), r.bound.c_str(), busy("M"), busy("MTE2"), busy("MTE3"), busy("V"),
      busy("FIX"), wall_s, how.c_str());
  std::fflush(stdout);
}

std::vector<half> Random(uint64_t n, uint32_t seed) {
  std::vector<half> v(n);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-1.f, 1.f);
  for (auto& x : v) x = static_cast<half>(d(rng));
  return v;
}

// A GEMM of m = n = k = size on 24 AICs; tiles_per_core 0: every tile, else only the first ones.
Result Gemm(const std::string& soc, uint32_t size, uint32_t core_m, uint32_t core_n, uint32_t tiles_per_core) {
  calib::GemmTiling t{size, size, size, core_m, core_n, tiles_per_core};
  const int32_t blocks = static_cast<int32_t>((size / core_m) * (size / core_n));
  const std::vector<half> a = Random(uint64_t{size} * size, 1), b = Random(uint64_t{size} * size, 2);
  std::vector<float> c(uint64_t{size} * size, NAN);
  Result r = Timed([&] {
    return ascendc_cpu::Launch(Config("calib_gemm", soc, blocks, ascendc_cpu::KernelType::kAicOnly),
                               {{a.data(), a.size() * 2, "a", GmKind::kInput},
                                {b.data(), b.size() * 2, "b", GmKind::kInput},
                                {c.data(), c.size() * 4, "c", GmKind::kOutput},
                                {&t, sizeof t, "tiling", GmKind::kInput}},
                               calib::GemmKernel, a.data(), b.data(), c.data(), &t);
  });
  // Sampled check against the reference (only computed tiles when the schedule is cut).
  std::mt19937 rng(3);
  int checked = 0;
  for (int s = 0; s < 4096 && checked < 64; ++s) {
    const uint32_t i = rng() % size, j = rng() % size;
    if (std::isnan(c[uint64_t{i} * size + j])) continue;
    double dot = 0;
    for (uint32_t e = 0; e < size; ++e) {
      dot += static_cast<double>(static_cast<float>(a[uint64_t{i} * size + e])) *
             static_cast<float>(b[uint64_t{j} * size + e]);
    }
    if (std::fabs(c[uint64_t{i} * size + j] - dot) > 1e-3 * std::sqrt(static_cast<double>(size))) {
      throw std::runtime_error("calib_gemm: wrong result at (" + std::to_string(i) + ", " + std::to_string(j) + ")");
    }
    ++checked;
  }
  if (checked == 0) throw std::runtime_error("calib_gemm: no element computed");
  return r;
}

void GemmCase(const std::string& soc, uint32_t size, uint32_t core_m, uint32_t core_n) {
  const std::string shape = std::to_string(size) + "^3 fp16->fp32, 24 AIC, tile 128x256x64";
  const uint32_t tiles = (core_m / calib::kBaseM) * (core_n / calib::kBaseN);
  if (tiles <= 4) {
    const Result r = Gemm(soc, size, core_m, core_n, 0);
    Print("gemm" + std::to_string(size), soc, shape, r.report.modelled_us, r.report, r.wall_s, "emulated");
    return;
  }
  // Representative schedule (a full 6144^3 run is ~100 M emulated Mmad rows): every core runs
  // its first 1 and 2 tiles at the full K; the difference is the steady-state time per tile, the
  // rest (start, drain, launch) the fixed part. The L2 holds A and B (151 MB), so the per-tile
  // traffic does not change with the tile count.
  const Result r1 = Gemm(soc, size, core_m, core_n, 1), r2 = Gemm(soc, size, core_m, core_n, 2);
  const double per_tile = r2.report.modelled_us - r1.report.modelled_us;
  const double us = r2.report.modelled_us + per_tile * (tiles - 2);
  char how[160];
  std::snprintf(how, sizeof how, "extrapolated: 1 and 2 of %u tiles per core emulated, %.3f us per further tile", tiles,
                per_tile);
  Print("gemm" + std::to_string(size), soc, shape, us, r2.report, r1.wall_s + r2.wall_s, how);
}

// Streaming over `bytes` of half on every AIV of the preset.
void StreamCase(const std::string& name, const std::string& soc, uint64_t bytes, uint32_t read_only) {
  LaunchConfig cfg = Config(read_only ? "calib_stream_read" : "calib_stream_copy", soc, 0,
                            ascendc_cpu::KernelType::kAivOnly);
  cfg.block_dim = cfg.aiv_cores;
  const uint32_t tile = 16384;  // 32 KiB per DMA
  const uint64_t per_core = (bytes / 2 / cfg.block_dim) / tile * tile;
  calib::StreamTiling t{per_core, tile, read_only};
  const std::vector<half> x = Random(per_core * cfg.block_dim, 4);
  std::vector<half> y(read_only ? uint64_t{tile} * cfg.block_dim : x.size());
  const Result r = Timed([&] {
    return ascendc_cpu::Launch(cfg,
                               {{x.data(), x.size() * 2, "x", GmKind::kInput},
                                {y.data(), y.size() * 2, "y", GmKind::kOutput},
                                {&t, sizeof t, "tiling", GmKind::kInput}},
                               calib::StreamKernel, x.data(), y.data(), &t);
  });
  if (!read_only && std::memcmp(x.data(), y.data(), x.size() * 2) != 0) throw std::runtime_error("calib_stream: bad copy");
  if (read_only) {  // core 0's fold, element 0
    float sum = 0;
    for (uint64_t i = 0; i < per_core / tile; ++i) sum = static_cast<float>(static_cast<half>(sum + static_cast<float>(x[i * tile])));
    if (std::fabs(static_cast<float>(y[0]) - sum) > 1e-2f * (1 + std::fabs(sum))) throw std::runtime_error("calib_stream: bad fold");
  }
  const double mb = static_cast<double>(per_core * cfg.block_dim * 2) / 1e6;
  Print(name, soc, (read_only ? "read " : "copy ") + std::to_string(mb).substr(0, 6) + " MB, " +
                       std::to_string(cfg.block_dim) + " AIV, 32 KiB DMAs",
        r.report.modelled_us, r.report, r.wall_s, "emulated");
}

void TinyCase(const std::string& soc) {
  std::vector<half> x = Random(16, 5), y(16);
  const Result r = Timed([&] {
    return ascendc_cpu::Launch(Config("calib_tiny", soc, 1, ascendc_cpu::KernelType::kAivOnly),
                               {{x.data(), 32, "x", GmKind::kInput}, {y.data(), 32, "y", GmKind::kOutput}},
                               calib::TinyKernel, x.data(), y.data());
  });
  for (int i = 0; i < 16; ++i) {
    if (static_cast<float>(y[i]) != static_cast<float>(static_cast<half>(static_cast<float>(x[i]) + 1.f))) {
      throw std::runtime_error("calib_tiny: bad result");
    }
  }
  Print("tiny", soc, "16 half in, Adds, out; 1 AIV", r.report.modelled_us, r.report, r.wall_s, "emulated");
}

}  // namespace

int main(int argc, char** argv) {
  const std::map<std::string, std::function<void()>> cases = {
      {"gemm1536", [] { GemmCase("Ascend910_9391", 1536, 384, 256); }},
      {"gemm6144", [] { GemmCase("Ascend910_9391", 6144, 1536, 1024); }},
      {"read201", [] { StreamCase("read201", "Ascend910B3", 201326592, 1); }},
      {"read16", [] { StreamCase("read16", "Ascend910B2", 15728640, 1); }},
      {"copy64", [] { StreamCase("copy64", "Ascend910B2", 67108864, 0); }},  // no published figure: a check only
      {"tiny", [] { TinyCase("Ascend910B4"); }},
  };
  std::vector<std::string> wanted(argv + 1, argv + argc);
  if (wanted.empty()) {
    for (const auto& kv : cases) wanted.push_back(kv.first);
  }
  for (const std::string& w : wanted) {
    if (cases.count(w) == 0) {
      std::fprintf(stderr, "calibration: unknown case '%s'\n", w.c_str());
      return 2;
    }
  }
  try {
    for (const std::string& w : wanted) cases.at(w)();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "calibration: %s\n", e.what());
    return 1;
  }
  return 0;
}
