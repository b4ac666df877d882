// The cost table of the emulator's timing MODEL (LaunchReport::modelled_us). One place for every
// figure, each with where it comes from. Figures marked "estimate" are our own order-of-magnitude
// choices, not published numbers: the model ranks kernels and names what bounds them, it does not
// predict a measured time. Atlas A2 / Ascend 910B2 unless said otherwise.
#pragma once
#include <cctype>
#include <string>

namespace ascendc_cpu::timing {

// AI Core clock. Public Atlas 800T/800I A2 material quotes the 910B family at about 1.8 GHz
// (estimate: the exact clock of a 910B2 part is not in the documentation we can cite).
inline constexpr double kClockGHz = 1.8;

// HBM bandwidth shared by all cores. 910B2 ships 64 GB HBM2e; public spec sheets of Atlas A2
// boards quote about 1.6 TB/s (estimate: vendor figure, not measured here).
inline constexpr double kHbmBytesPerSecond = 1.6e12;

// L2 cache between the cores and HBM, shared by all cores: 192 MB, 512-byte lines, write-back.
// asc-devkit docs: 高级编程/内存模型/缓存一致性.md (L2 Cache: 核外共享缓存, 512B lines, 192MB);
// SIMD算子性能优化/内存访问/L2-Cache切分.md ("L2 Cache大小为192MB，L2 Cache读写混合带宽约为7TB/s");
// the Atlas A2 analysis in examples/.../matmul_basic_api_high_performance/README_en.md ("The peak
// L2 Cache bandwidth is approximately 5 TB/s"): we take the lower 5 TB/s. Write back: the
// l2_cache_ctl tables of the C-API copy docs. Replacement (LRU, fully associative) and
// allocate-on-write without a fill are our estimates.
inline constexpr double kL2Bytes = 192.0 * 1024 * 1024;
inline constexpr double kL2LineBytes = 512;
inline constexpr double kL2BytesPerSecond = 5e12;

// Per-core DMA (MTE2 GM->UB/L1, MTE3 UB->GM, FIX L0C->GM) bytes per cycle once a transfer streams:
// the L2 peak shared by the 24 AI Cores of a 910B2 (5 TB/s / 24 / 1.8 GHz = 116 B/cycle); HBM
// traffic is bounded for the whole launch by kHbmBytesPerSecond. Checked against the published
// Atlas A2 profile of the same matmul example (scenario 2: per core 537 MB of Nd2Nz moves in
// 874k row bursts of 512-1024 B, aic_mte2_time 3487 us at 1.85 GHz = 6.45M cycles, i.e. >= 83
// B/cycle per core with every per-burst and per-DMA cost included): tests/test_timing.cpp,
// dma_costs_fit_the_published_a2_matmul_profile.
inline constexpr double kDmaBytesPerCycle = kL2BytesPerSecond / 24 / (kClockGHz * 1e9);
// Latency of one DMA instruction (setup and first bytes from HBM): delays its completion (what a
// flag or a queue hands on) but does not hold the pipe, the next DMA streams behind it (the
// profile above leaves no room for 4096 DMAs per core each holding MTE2 for 500 cycles).
// Estimate (GM latency is several hundred cycles on HBM systems).
inline constexpr double kDmaLatencyCycles = 500.0;
// Extra cost per burst (blockCount, or Nd2Nz row) after the first: the profile above leaves at
// most (6.45M - 537 MB / 116 B) / 874k = 2.1 cycles per row burst.
inline constexpr double kDmaBurstCycles = 2.0;

// Vector unit: one repeat processes 256 bytes (documented ONE_REPEAT_BYTE_SIZE, "每个迭代处理256
// Bytes" in the Memory矢量计算 docs) and we assume one repeat per cycle for every dtype (estimate:
// transcendental, division and sort instructions are slower on hardware).
inline constexpr double kVectorBytesPerCycle = 256.0;
inline constexpr double kVectorStartCycles = 16.0;  // issue/pipeline fill per instruction (estimate)

// Cube unit: one 16x16x16 fp16 fractal multiply-accumulate per cycle = 4096 MACs/cycle (DaVinci
// architecture, Huawei Hot Chips 31 (2019) "DaVinci: A Scalable Architecture for Neural Network
// Computing"; 4096 MACs x 2 x 32 cores x ~1 GHz ~ 256 TFLOPS fp16 for Ascend 910). Applied to
// half / bfloat16_t / float inputs (estimate: fp32 is slower on hardware).
inline constexpr double kCubeMacsPerCycle = 4096.0;
// int8 x int8 -> int32: twice the fp16 rate. Vendor figures: Ascend 910 "256 TFLOPS FP16 /
// 512 TOPS INT8" (Huawei's 2019 launch and Hot Chips 31 material, as quoted by the press);
// assumed to hold for the 910B AI Core (estimate: no 910B per-dtype cube figure was read).
inline constexpr double kCubeInt8MacsPerCycle = 2 * kCubeMacsPerCycle;
inline constexpr double kCubeStartCycles = 16.0;  // estimate

// MTE1 (L1 -> L0A/L0B LoadData) bytes per cycle. Estimate.
inline constexpr double kMte1BytesPerCycle = 256.0;
inline constexpr double kMte1StartCycles = 16.0;  // estimate

// Scalar unit: one cycle per LocalTensor GetValue/SetValue and per GlobalTensor access that hits
// the core's data cache (estimate), kScalarGmCycles per GlobalTensor read that misses it
// (estimate). The data cache: 64-byte lines, 16 KB on an AIC, 32 KB on an AIV (asc-devkit docs,
// 高级编程/内存模型/缓存一致性.md, NPU架构版本2201 table: AIC DCache 64B / 16KB, AIV DCache
// 64B / 32KB); LRU and write-allocate without a fill are estimates.
inline constexpr double kScalarLocalCycles = 1.0;
inline constexpr double kScalarGmCycles = 200.0;
inline constexpr double kDcacheLineBytes = 64;
inline constexpr double kAicDcacheBytes = 16 * 1024;
inline constexpr double kAivDcacheBytes = 32 * 1024;
// The scalar unit issues every instruction: one cycle of issue per instruction (estimate).
inline constexpr double kIssueCycles = 1.0;

// Synchronisation latencies (estimates): SetFlag/WaitFlag inside a core, CrossCoreSetFlag through
// the FFTS scheduler, SyncAll across all cores.
inline constexpr double kFlagCycles = 4.0;
inline constexpr double kCrossCoreFlagCycles = 200.0;
inline constexpr double kSyncAllCycles = 1000.0;

// Launch / head cost: what every kernel pays on the device besides its instructions (task
// dispatch, core start, the end-of-task handshake), once per launch whatever its block count.
// Fitted to the published small-kernel floor on A2-class chips (../shared/research/
// published-ascend-timings.md; README "Calibration"): the smallest kernels measure 1.85 us (a
// tiny Triton indexer, FlagGems-vllm PR #791), 2.5 us (a one-token KV write on 910B4, derived
// from profiler totals) and 2.6 us (Slice, msprof); our tiny kernel's own work models at 0.56 us,
// so 1.8 us puts it at 2.4 us, inside that range. Estimate: no source states the head itself,
// and it may grow with the cores launched (the 1536^3 GEMM on A3 leaves ~8 us unexplained; a
// CATLASS note claims ~20 us for a full-core launch, inconsistent with the measured floor).
inline constexpr double kLaunchHeadUs = 1.8;

// The share of kHbmBytesPerSecond a streaming kernel reaches: 0.9, from the best published
// streaming figure (CATLASS GEMV-like matmul, 201 MB of B read in 139.6 us = 1.44 TB/s, i.e.
// 0.9 x 1.6 TB/s; hicann/catlass docs/en/1_Practice/11_matmul_optimization.md, case 2; chip not
// named, 20 AI Cores). Applied to every HBM byte of the memory bound.
inline constexpr double kHbmEfficiency = 0.9;

// Per-SoC figures of the timing model, chosen by LaunchConfig::soc (common's platform preset
// name; the core counts come from the preset). Every part runs the same AI Core, so the cycle
// costs above are shared; what differs is the clock and the HBM. A soc not listed here is refused.
//  - Ascend910B1/B2/B3/B4: 1.8 GHz and 1.6 TB/s as above (estimates: no public per-part clock or
//    HBM figure we can cite; 910B3/B4 have 20 AI Cores (CANN platform_config/<soc>.ini)).
//  - Ascend910_9391/9392 (one Atlas A3 die, 24 AI Cores): the published A3 GEMM profile
//    (pto-isa kernels/manual/a2a3/gemm_performance/README.md: 6144^3 fp16 in 1.506 ms, cube ratio
//    86.7%) puts the cube's busy rate at 308 TFLOPS / 0.867 = 355 TFLOPS = 24 x 4096 MACs x 2 x
//    1.81 GHz: 1.8 GHz (derived). HBM: 3.2 TB/s per two-die Ascend 910C package (TechPowerUp,
//    2025-04-21, citing DigiTimes), 1.6 TB/s per die (derived; a vendor-press figure).
struct SocTiming {
  const char* soc;
  double clock_ghz;
  double hbm_bytes_per_second;
};
inline constexpr SocTiming kSocTimings[] = {
    {"Ascend910B1", kClockGHz, kHbmBytesPerSecond},    {"Ascend910B2", kClockGHz, kHbmBytesPerSecond},
    {"Ascend910B3", kClockGHz, kHbmBytesPerSecond},    {"Ascend910B4", kClockGHz, kHbmBytesPerSecond},
    {"Ascend910_9391", 1.8, 1.6e12},                   {"Ascend910_9392", 1.8, 1.6e12},
};

// The entry for `soc` (case-insensitive), nullptr if there is none.
inline const SocTiming* FindSocTiming(const std::string& soc) {
  for (const SocTiming& t : kSocTimings) {
    const std::string name = t.soc;
    if (name.size() != soc.size()) continue;
    bool same = true;
    for (size_t i = 0; i < name.size() && same; ++i) {
      same = std::tolower(static_cast<unsigned char>(name[i])) == std::tolower(static_cast<unsigned char>(soc[i]));
    }
    if (same) return &t;
  }
  return nullptr;
}

}  // namespace ascendc_cpu::timing
