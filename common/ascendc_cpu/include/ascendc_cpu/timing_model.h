// The cost table of the emulator's timing MODEL (LaunchReport::modelled_us). One place for every
// figure, each with where it comes from. Figures marked "estimate" are our own order-of-magnitude
// choices, not published numbers: the model ranks kernels and names what bounds them, it does not
// predict a measured time. Atlas A2 / Ascend 910B2 unless said otherwise.
#pragma once

namespace ascendc_cpu::timing {

// AI Core clock. Public Atlas 800T/800I A2 material quotes the 910B family at about 1.8 GHz
// (estimate: the exact clock of a 910B2 part is not in the documentation we can cite).
inline constexpr double kClockGHz = 1.8;

// HBM bandwidth shared by all cores. 910B2 ships 64 GB HBM2e; public spec sheets of Atlas A2
// boards quote about 1.6 TB/s (estimate: vendor figure, not measured here).
inline constexpr double kHbmBytesPerSecond = 1.6e12;

// Per-core DMA (MTE2 GM->UB/L1, MTE3 UB->GM, FIX L0C->GM) bytes per cycle once a transfer streams.
// Estimate: chosen so that ~24 cores saturate HBM (24 * 64 B * 1.8 GHz = 2.8 TB/s > 1.6 TB/s), as
// bandwidth-bound operators on A2 do in the public performance guides.
inline constexpr double kDmaBytesPerCycle = 64.0;
// Fixed cost of one DMA instruction (setup and first bytes from HBM). Estimate (GM latency is
// several hundred cycles on HBM systems).
inline constexpr double kDmaLatencyCycles = 500.0;
// Extra cost per burst (blockCount) after the first. Estimate.
inline constexpr double kDmaBurstCycles = 8.0;

// Vector unit: one repeat processes 256 bytes (documented ONE_REPEAT_BYTE_SIZE, "每个迭代处理256
// Bytes" in the Memory矢量计算 docs) and we assume one repeat per cycle for every dtype (estimate:
// transcendental, division and sort instructions are slower on hardware).
inline constexpr double kVectorBytesPerCycle = 256.0;
inline constexpr double kVectorStartCycles = 16.0;  // issue/pipeline fill per instruction (estimate)

// Cube unit: one 16x16x16 fp16 fractal multiply-accumulate per cycle = 4096 MACs/cycle (DaVinci
// architecture, Huawei Hot Chips 31 (2019) "DaVinci: A Scalable Architecture for Neural Network
// Computing"; 4096 MACs x 2 x 32 cores x ~1 GHz ~ 256 TFLOPS fp16 for Ascend 910). Applied to
// every input dtype (estimate: fp32 is slower, int8 faster).
inline constexpr double kCubeMacsPerCycle = 4096.0;
inline constexpr double kCubeStartCycles = 16.0;  // estimate

// MTE1 (L1 -> L0A/L0B LoadData) bytes per cycle. Estimate.
inline constexpr double kMte1BytesPerCycle = 256.0;
inline constexpr double kMte1StartCycles = 16.0;  // estimate

// Scalar unit: one cycle per LocalTensor GetValue/SetValue (estimate) and a data-cache miss to HBM
// per GlobalTensor GetValue/SetValue (estimate; the model does not track hits).
inline constexpr double kScalarLocalCycles = 1.0;
inline constexpr double kScalarGmCycles = 200.0;
// The scalar unit issues every instruction: one cycle of issue per instruction (estimate).
inline constexpr double kIssueCycles = 1.0;

// Synchronisation latencies (estimates): SetFlag/WaitFlag inside a core, CrossCoreSetFlag through
// the FFTS scheduler, SyncAll across all cores.
inline constexpr double kFlagCycles = 4.0;
inline constexpr double kCrossCoreFlagCycles = 200.0;
inline constexpr double kSyncAllCycles = 1000.0;

}  // namespace ascendc_cpu::timing
