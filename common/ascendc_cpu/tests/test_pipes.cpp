// Asynchronous pipes: races the hardware would have, each beside a correct twin. A TBuf gives no
// synchronisation; TQue events, SetFlag/WaitFlag, PipeBarrier and the AIV auto-sync (S<->V,
// S<->MTE2/3, V<->V) do. Also the scalar data cache (dcache-stale).
#include <vector>

#include "ascendc_cpu/launch.h"
#include "kernel_operator.h"
#include "test_framework.h"

namespace {

using namespace AscendC;
using ascendc_cpu::GmKind;
using ascendc_cpu::Order;

constexpr uint32_t kN = 256;  // floats per block
int g_line = 0;

ascendc_cpu::LaunchReport Go(const char* name, int32_t blocks, void (*kernel)(GM_ADDR, GM_ADDR)) {
  std::vector<float> x(kN * 4, 1.f), z(kN * 4, 0.f);
  ascendc_cpu::LaunchConfig cfg{name, blocks, 196608, Order::kBoth, 1};
  cfg.kernel_type = ascendc_cpu::KernelType::kMixAiv1_0;  // vector cores with SyncAll (the cross-core scheduler)
  return ascendc_cpu::Launch(cfg,
                             {{x.data(), x.size() * 4, "x", GmKind::kInput}, {z.data(), z.size() * 4, "z", GmKind::kOutput}},
                             kernel, x.data(), z.data());
}

struct Tiles {
  TPipe pipe;
  TBuf<TPosition::VECCALC> buf;
  GlobalTensor<float> x, z;
  LocalTensor<float> a, b;
  Tiles(GM_ADDR xp, GM_ADDR zp) {
    x.SetGlobalBuffer((__gm__ float*)xp + GetBlockIdx() * kN);
    z.SetGlobalBuffer((__gm__ float*)zp + GetBlockIdx() * kN);
    pipe.InitBuffer(buf, 2 * kN * sizeof(float));
    a = buf.Get<float>(kN);
    b = buf.GetWithOffset<float>(kN, kN * sizeof(float));
  }
};

// ---- MTE2 -> V through a TBuf --------------------------------------------------------------
template <bool kSync>
void LoadThenAdd(GM_ADDR xp, GM_ADDR zp) {
  Tiles t(xp, zp);
  DataCopy(t.a, t.x, kN);
  if (kSync) {
    const event_t id = t.pipe.FetchEventID(HardEvent::MTE2_V);
    SetFlag<HardEvent::MTE2_V>(id);
    WaitFlag<HardEvent::MTE2_V>(id);
  }
  g_line = __LINE__ + 1;
  Adds(t.b, t.a, 1.f, kN);
  const event_t id = t.pipe.FetchEventID(HardEvent::V_MTE3);
  SetFlag<HardEvent::V_MTE3>(id);
  WaitFlag<HardEvent::V_MTE3>(id);
  DataCopy(t.z, t.b, kN);
}
TEST(mte2_to_v_through_a_tbuf_needs_a_flag) {
  EXPECT_EMU_ERROR(Go("mte2_v", 2, LoadThenAdd<false>), "pipe-race", "mte2_v", 0);
  try {
    Go("mte2_v", 1, LoadThenAdd<false>);
  } catch (const ascendc_cpu::EmulatorError& e) {
    CHECK_EQ(e.line(), g_line);  // the vector op; the detail names the DataCopy too
    CHECK(e.detail().find("PIPE_MTE2") != std::string::npos);
    CHECK(e.detail().find("HardEvent::MTE2_V") != std::string::npos);
  }
  Go("mte2_v_synced", 2, LoadThenAdd<true>);
}

// ---- V -> MTE3 through a TBuf --------------------------------------------------------------
template <bool kSync>
void AddThenStore(GM_ADDR xp, GM_ADDR zp) {
  Tiles t(xp, zp);
  DataCopy(t.a, t.x, kN);
  SetFlag<HardEvent::MTE2_V>(0);
  WaitFlag<HardEvent::MTE2_V>(0);
  Muls(t.b, t.a, 3.f, kN);
  if (kSync) {
    SetFlag<HardEvent::V_MTE3>(0);
    WaitFlag<HardEvent::V_MTE3>(0);
  }
  DataCopy(t.z, t.b, kN);
}
TEST(v_to_mte3_through_a_tbuf_needs_a_flag) {
  EXPECT_EMU_ERROR(Go("v_mte3", 2, AddThenStore<false>), "pipe-race", "v_mte3", 0);
  Go("v_mte3_synced", 2, AddThenStore<true>);
}

// ---- MTE3 -> MTE2: reusing a UB buffer the store still reads ---------------------------------
template <bool kSync>
void StoreThenReload(GM_ADDR xp, GM_ADDR zp) {
  Tiles t(xp, zp);
  for (int i = 0; i < 2; ++i) {
    DataCopy(t.a, t.x, kN);
    SetFlag<HardEvent::MTE2_MTE3>(0);
    WaitFlag<HardEvent::MTE2_MTE3>(0);
    DataCopy(t.z, t.a, kN);
    if (kSync) {  // the next load overwrites t.a
      SetFlag<HardEvent::MTE3_MTE2>(0);
      WaitFlag<HardEvent::MTE3_MTE2>(0);
    }
  }
}
TEST(mte3_to_mte2_buffer_reuse_needs_a_flag) {
  EXPECT_EMU_ERROR(Go("reuse", 1, StoreThenReload<false>), "pipe-race", "reuse", 0);
  // Without the flag the second store also overlaps the first: fixed by the same flag.
  Go("reuse_synced", 1, StoreThenReload<true>);
}

// ---- MTE2 does not order its own overlapping moves -------------------------------------------
template <bool kBarrier>
void TwoLoadsSameBytes(GM_ADDR xp, GM_ADDR zp) {
  Tiles t(xp, zp);
  DataCopy(t.a, t.x, kN);
  if (kBarrier) PipeBarrier<PIPE_MTE2>();
  DataCopy(t.a, t.x, kN);
}
TEST(overlapping_mte2_moves_need_a_pipe_barrier) {
  EXPECT_EMU_ERROR(Go("mte2_waw", 1, TwoLoadsSameBytes<false>), "pipe-race", "mte2_waw", 0);
  Go("mte2_waw_barrier", 1, TwoLoadsSameBytes<true>);
}

// ---- what auto-sync covers on the AIV: S <-> V, V <-> V ---------------------------------------
void ScalarThenVector(GM_ADDR xp, GM_ADDR zp) {
  Tiles t(xp, zp);
  for (uint32_t i = 0; i < kN; ++i) t.a.SetValue(i, static_cast<float>(i));  // S
  Adds(t.b, t.a, 1.f, kN);                                                      // V after S: auto-sync
  Muls(t.a, t.b, 2.f, kN);                                                      // V after V: auto-sync
  const float v = t.a.GetValue(3);                                              // S after V: auto-sync
  t.b.SetValue(0, v);                                                           // S over V's bytes
  SetFlag<HardEvent::S_MTE3>(0);
  WaitFlag<HardEvent::S_MTE3>(0);
  SetFlag<HardEvent::V_MTE3>(0);
  WaitFlag<HardEvent::V_MTE3>(0);
  DataCopy(t.z, t.b, kN);
}
TEST(aiv_auto_sync_covers_s_v_and_v_v) { Go("auto_sync", 2, ScalarThenVector); }

// The same S -> V pair on the cube side gets no auto-sync: L1 written by SetValue, read by MTE1.
template <bool kSync>
void ScalarThenLoadData(GM_ADDR) {
  TPipe pipe;
  TBuf<TPosition::A1> l1;
  TBuf<TPosition::A2> l0a;
  pipe.InitBuffer(l1, 512);
  pipe.InitBuffer(l0a, 512);
  LocalTensor<half> a = l1.Get<half>(), b = l0a.Get<half>();
  for (uint32_t i = 0; i < 256; ++i) a.SetValue(i, static_cast<half>(1.f));
  if (kSync) PipeBarrier<PIPE_ALL>();
  LoadData2DParams ld;
  ld.repeatTimes = 1;
  ld.srcStride = 1;
  LoadData(b, a, ld);
}
TEST(aic_has_no_auto_sync) {
  ascendc_cpu::LaunchConfig c{"aic_s_mte1", 1, 196608};
  c.kernel_type = ascendc_cpu::KernelType::kAicOnly;
  EXPECT_EMU_ERROR(ascendc_cpu::Launch(c, {}, ScalarThenLoadData<false>, nullptr), "pipe-race", "aic_s_mte1", 0);
  ascendc_cpu::Launch(c, {}, ScalarThenLoadData<true>, nullptr);
}

// ---- dcache-stale ------------------------------------------------------------------------------
// Core 1 caches z's first line, core 0 then overwrites it with a DMA; core 1 reads it again.
template <bool kFlush>
void StaleScalarRead(GM_ADDR xp, GM_ADDR zp) {
  GlobalTensor<float> z;
  z.SetGlobalBuffer((__gm__ float*)zp);
  TPipe pipe;
  TQue<TPosition::VECIN, 1> in;
  pipe.InitBuffer(in, 1, 32);
  float seen = 0.f;
  if (GetBlockIdx() == 1) seen += z.GetValue(0);
  SyncAll();
  if (GetBlockIdx() == 0) {
    GlobalTensor<float> x;
    x.SetGlobalBuffer((__gm__ float*)xp);
    LocalTensor<float> t = in.AllocTensor<float>();
    DataCopy(t, x, 8);
    SetFlag<HardEvent::MTE2_MTE3>(0);
    WaitFlag<HardEvent::MTE2_MTE3>(0);
    DataCopy(z, t, 8);
    in.FreeTensor(t);
  }
  SyncAll();
  if (GetBlockIdx() == 1) {
    if (kFlush) DataCacheCleanAndInvalid<float, CacheLine::SINGLE_CACHE_LINE, DcciDst::CACHELINE_OUT>(z);
    seen += z.GetValue(0);
  }
  (void)seen;
}
TEST(scalar_read_of_a_line_dma_rewrote_is_stale) {
  EXPECT_EMU_ERROR(Go("stale_read", 2, StaleScalarRead<false>), "dcache-stale", "stale_read", 1);
  Go("stale_read_flushed", 2, StaleScalarRead<true>);
}

// SetValue stays in the data cache: a DMA of the same bytes reads the old GM content.
template <bool kFlush>
void UnflushedScalarWrite(GM_ADDR xp, GM_ADDR zp) {
  GlobalTensor<float> z;
  z.SetGlobalBuffer((__gm__ float*)zp + GetBlockIdx() * kN);
  TPipe pipe;
  TQue<TPosition::VECIN, 1> in;
  pipe.InitBuffer(in, 1, 32);
  (void)xp;
  z.SetValue(0, 5.f);
  if (kFlush) DataCacheCleanAndInvalid<float, CacheLine::SINGLE_CACHE_LINE, DcciDst::CACHELINE_OUT>(z);
  LocalTensor<float> t = in.AllocTensor<float>();
  DataCopy(t, z, 8);  // S -> MTE2 is auto-synced on the AIV; the cache is not
  in.FreeTensor(t);
}
TEST(dma_read_of_an_unflushed_scalar_write_is_stale) {
  EXPECT_EMU_ERROR(Go("unflushed", 2, UnflushedScalarWrite<false>), "dcache-stale", "unflushed", 0);
  Go("flushed", 2, UnflushedScalarWrite<true>);
}

// ---- cross-core: a core reads what another wrote, ordered only by SyncAll -------------------
template <bool kSync>
void NeighbourRead(GM_ADDR xp, GM_ADDR zp) {
  GlobalTensor<float> x, z;
  x.SetGlobalBuffer((__gm__ float*)xp);
  z.SetGlobalBuffer((__gm__ float*)zp);
  TPipe pipe;
  TQueBind<TPosition::VECIN, TPosition::VECOUT, 1> q;
  pipe.InitBuffer(q, 1, kN * sizeof(float));
  const int64_t me = GetBlockIdx(), next = (me + 1) % GetBlockNum();
  LocalTensor<float> t = q.AllocTensor<float>();
  DataCopy(t, x[me * kN], kN);
  q.EnQue(t);
  t = q.DeQue<float>();
  DataCopy(z[me * kN], t, kN);
  q.FreeTensor(t);
  if (kSync) SyncAll();
  t = q.AllocTensor<float>();
  DataCopy(t, z[next * kN], kN);  // the neighbour's output
  q.FreeTensor(t);
}
TEST(cross_core_gm_read_needs_syncall) {
  EXPECT_EMU_ERROR(Go("neighbour", 3, NeighbourRead<false>), "pipe-race", "neighbour", 1);  // block 1 overwrites what block 0 read
  Go("neighbour_synced", 3, NeighbourRead<true>);
}

}  // namespace
