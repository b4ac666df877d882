// Core types and kernel types: AIV / AIC / MIX launches, core-type misuse, cross-core flags,
// GetBlockIdx numbering, block_dim limits, hangs, the HardEvent id pool. Each broken kernel sits
// beside a correct twin that passes.
#include <vector>

#include "ascendc_cpu/launch.h"
#include "kernel_operator.h"
#include "test_framework.h"

namespace {

using namespace AscendC;
using ascendc_cpu::GmKind;
using ascendc_cpu::KernelType;
using ascendc_cpu::Order;

ascendc_cpu::LaunchConfig Cfg(const char* name, int32_t blocks, KernelType type, Order order = Order::kBoth) {
  ascendc_cpu::LaunchConfig c{name, blocks, 196608, order, 5};
  c.kernel_type = type;
  return c;
}

ascendc_cpu::LaunchReport NoGm(const ascendc_cpu::LaunchConfig& c, void (*kernel)(GM_ADDR)) {
  return ascendc_cpu::Launch(c, {}, kernel, nullptr);
}

// ---- core-type: vector work on an AIC, cube work on an AIV ----------------------------------
void VectorOnAic(GM_ADDR) {  // no ASCEND_IS_AIV guard
  TPipe pipe;
  TBuf<TPosition::VECCALC> buf;
  pipe.InitBuffer(buf, 256);
  LocalTensor<float> t = buf.Get<float>();
  Duplicate(t, 1.f, 64);
}
void VectorGuarded(GM_ADDR) {
  if ASCEND_IS_AIV {
    VectorOnAic(nullptr);
  }
}
TEST(vector_api_on_an_aic_is_a_core_type_error) {
  EXPECT_EMU_ERROR(NoGm(Cfg("vec_on_aic", 1, KernelType::kMixAic1_2), VectorOnAic), "core-type", "vec_on_aic", 0);
  EXPECT_EMU_ERROR(NoGm(Cfg("vec_on_aic", 2, KernelType::kAicOnly), VectorOnAic), "core-type", "vec_on_aic", 0);
  NoGm(Cfg("vec_guarded", 2, KernelType::kMixAic1_2), VectorGuarded);
}

void BarrierVOnAic(GM_ADDR) { PipeBarrier<PIPE_V>(); }
TEST(pipe_v_named_on_an_aic_is_a_core_type_error) {
  EXPECT_EMU_ERROR(NoGm(Cfg("barrier_v", 1, KernelType::kAicOnly), BarrierVOnAic), "core-type", "barrier_v", 0);
  NoGm(Cfg("barrier_v", 1, KernelType::kAivOnly), BarrierVOnAic);
}

void CubeOnAiv(GM_ADDR) {
  TPipe pipe;
  TQue<TPosition::CO1, 1> c;
  pipe.InitBuffer(c, 1, 1024);  // L0C: the AIV has none
  LocalTensor<float> t = c.AllocTensor<float>();
  c.FreeTensor(t);
}
void CubeGuarded(GM_ADDR) {
  if ASCEND_IS_AIC {
    CubeOnAiv(nullptr);
  }
}
TEST(cube_memory_on_an_aiv_is_a_core_type_error) {
  EXPECT_EMU_ERROR(NoGm(Cfg("cube_on_aiv", 1, KernelType::kAivOnly), CubeOnAiv), "core-type", "cube_on_aiv", 0);
  NoGm(Cfg("cube_guarded", 1, KernelType::kMixAic1_2), CubeGuarded);
  NoGm(Cfg("cube_on_aic", 3, KernelType::kAicOnly), CubeOnAiv);
}

// ---- kernel-type: the declaration must match the launch -------------------------------------
void DeclaresMix(GM_ADDR) { KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2); }
void DeclaresAiv(GM_ADDR) { KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY); }
TEST(kernel_type_declaration_must_match_the_launch) {
  EXPECT_EMU_ERROR(NoGm(Cfg("declares_mix", 2, KernelType::kAivOnly), DeclaresMix), "kernel-type", "declares_mix", 0);
  NoGm(Cfg("declares_mix", 2, KernelType::kMixAic1_2), DeclaresMix);
  NoGm(Cfg("declares_aiv", 2, KernelType::kAivOnly), DeclaresAiv);
}

void CrossFlagInAivOnly(GM_ADDR) {
  CrossCoreSetFlag<0, PIPE_MTE3>(1);
  CrossCoreWaitFlag(1);
}
TEST(cross_core_flags_need_a_mix_kernel_type) {
  EXPECT_EMU_ERROR(NoGm(Cfg("xflag_aiv_only", 2, KernelType::kAivOnly), CrossFlagInAivOnly), "kernel-type",
                   "xflag_aiv_only", 0);
  NoGm(Cfg("xflag_mix_aiv", 2, KernelType::kMixAiv1_0), CrossFlagInAivOnly);  // mode 0: all AIVs meet
}

// ---- GetBlockIdx numbering -------------------------------------------------------------------
struct Seen {
  bool aic;
  int64_t idx, num, sub, sub_num, ratio;
};
std::vector<Seen>& Log() {
  static std::vector<Seen> log;
  return log;
}
void RecordIds(GM_ADDR) {  // one core runs at a time: appending is safe
  Log().push_back({ASCEND_IS_AIC, GetBlockIdx(), GetBlockNum(), GetSubBlockIdx(), GetSubBlockNum(), GetTaskRatio()});
}
TEST(block_idx_numbering_in_a_mix_1_2_launch) {
  Log().clear();
  NoGm(Cfg("ids", 3, KernelType::kMixAic1_2, Order::kInOrder), RecordIds);
  CHECK_EQ(Log().size(), 9u);  // 3 AIC + 6 AIV
  int aic = 0;
  std::vector<int> aiv_seen(6, 0);
  for (size_t i = 0; i < Log().size(); ++i) {
    const Seen& s = Log()[i];
    CHECK_EQ(s.num, 3);  // GetBlockNum is block_dim on both sides
    if (s.aic) {
      CHECK_EQ(s.idx, static_cast<int64_t>(i / 3));  // in order: AIC b, AIV 2b, AIV 2b+1
      CHECK_EQ(s.sub_num, 1);
      CHECK_EQ(s.ratio, 1);
      ++aic;
    } else {
      CHECK_EQ(s.idx, static_cast<int64_t>(i / 3) * 2 + s.sub);  // AIV: block * 2 + sub
      CHECK_EQ(s.sub_num, 2);
      CHECK_EQ(s.ratio, 2);
      ++aiv_seen[static_cast<size_t>(s.idx)];
    }
  }
  CHECK_EQ(aic, 3);
  for (int n : aiv_seen) CHECK_EQ(n, 1);
  Log().clear();
  NoGm(Cfg("ids", 4, KernelType::kAivOnly, Order::kInOrder), RecordIds);
  CHECK_EQ(Log().size(), 4u);
  CHECK_EQ(Log()[3].idx, 3);
  CHECK_EQ(Log()[3].sub_num, 1);
}

// ---- block-dim: a MIX launch takes whole AI Cores --------------------------------------------
void Nothing(GM_ADDR) {}
TEST(mix_block_dim_over_the_aic_count_is_an_error) {
  auto c = Cfg("too_many", 25, KernelType::kMixAic1_2);
  EXPECT_EMU_ERROR(NoGm(c, Nothing), "block-dim", "too_many", -1);
  c.block_dim = 24;
  NoGm(c, Nothing);
  auto v = Cfg("aiv_waves", 100, KernelType::kAivOnly);  // AIV-only blocks may run in waves
  NoGm(v, Nothing);
}

void SyncAllEverywhere(GM_ADDR) { SyncAll(); }
TEST(syncall_over_more_blocks_than_cores_hangs) {
  EXPECT_EMU_ERROR(NoGm(Cfg("sync_waves", 49, KernelType::kMixAiv1_0, Order::kInOrder), SyncAllEverywhere), "hang",
                   "sync_waves", 0);
  NoGm(Cfg("sync_waves", 48, KernelType::kMixAiv1_0, Order::kInOrder), SyncAllEverywhere);
}

// ---- the hardware SyncAll needs the cross-core scheduler (SyncAll.md, CrossCoreSetFlag(ISASI).md) --
void SoftSyncAllEverywhere(GM_ADDR) {
  TPipe pipe;
  TBuf<TPosition::VECCALC> buf;
  pipe.InitBuffer(buf, 4 * 32);
  GlobalTensor<int32_t> gm;  // the emulator does not touch the workspaces
  SyncAll(gm, buf.Get<int32_t>());
}
TEST(hardware_syncall_in_an_aiv_only_launch_is_a_kernel_type_error) {
  EXPECT_EMU_ERROR(NoGm(Cfg("sync_aiv_only", 4, KernelType::kAivOnly), SyncAllEverywhere), "kernel-type",
                   "sync_aiv_only", 0);
  NoGm(Cfg("sync_mix_aiv", 4, KernelType::kMixAiv1_0), SyncAllEverywhere);           // __mix__(0, 1)
  NoGm(Cfg("soft_sync_aiv_only", 4, KernelType::kAivOnly), SoftSyncAllEverywhere);  // GM polling: any type
}

// ---- the hardware SyncAll's own flag ids (11..14) are not the kernel's -----------------------
template <uint16_t kFlag>
void FlagThenSyncAll(GM_ADDR) {
  if ASCEND_IS_AIC {
    CrossCoreSetFlag<2, PIPE_FIX>(kFlag);
  }
  if ASCEND_IS_AIV {
    CrossCoreWaitFlag(kFlag);
    SyncAll();
  }
}
void SetsThenWaits12(GM_ADDR) {  // flag 12 is the kernel's own when it never calls SyncAll
  if ASCEND_IS_AIC {
    CrossCoreSetFlag<2, PIPE_MTE2>(12);
  }
  if ASCEND_IS_AIV {
    CrossCoreWaitFlag(12);
  }
}
TEST(kernel_flag_on_a_syncall_id_is_an_error) {
  EXPECT_EMU_ERROR(NoGm(Cfg("flag_12", 2, KernelType::kMixAic1_2, Order::kInOrder), FlagThenSyncAll<12>),
                   "api-constraint", "flag_12", 0);
  NoGm(Cfg("flag_9", 2, KernelType::kMixAic1_2), FlagThenSyncAll<9>);
  NoGm(Cfg("flag_15", 2, KernelType::kMixAic1_2), FlagThenSyncAll<15>);
  NoGm(Cfg("flag_12_no_syncall", 2, KernelType::kMixAic1_2), SetsThenWaits12);
}

void SyncAllCores(GM_ADDR) { SyncAll<false>(); }
TEST(syncall_false_without_both_core_types_hangs) {
  EXPECT_EMU_ERROR(NoGm(Cfg("sync_false_aiv", 2, KernelType::kMixAiv1_0), SyncAllCores), "hang", "sync_false_aiv", 0);
  NoGm(Cfg("sync_false_mix", 2, KernelType::kMixAic1_2), SyncAllCores);  // every AIC and AIV
}

// ---- MIX: AIC -> AIV through GM ---------------------------------------------------------------
// The AIC computes a 16 x 16 block of q k^T into the workspace; each AIV scales its 8 rows.
struct MixBuffers {
  std::vector<half> q = std::vector<half>(256), k = std::vector<half>(256);
  std::vector<float> ws = std::vector<float>(256, 0.f), z = std::vector<float>(256, 0.f);
  MixBuffers() {
    for (int i = 0; i < 256; ++i) {
      q[static_cast<size_t>(i)] = static_cast<half>((i % 7) * 0.25f);
      k[static_cast<size_t>(i)] = static_cast<half>((i % 5) * 0.5f);
    }
  }
};

template <bool kFlags>
void MixKernel(GM_ADDR qp, GM_ADDR kp, GM_ADDR wsp, GM_ADDR zp) {
  KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
  GlobalTensor<float> ws;
  ws.SetGlobalBuffer((__gm__ float*)wsp);
  TPipe pipe;
  if ASCEND_IS_AIC {
    GlobalTensor<half> q, k;
    q.SetGlobalBuffer((__gm__ half*)qp);
    k.SetGlobalBuffer((__gm__ half*)kp);
    TQue<TPosition::A1, 1> a1;
    TQue<TPosition::B1, 1> b1;
    TQue<TPosition::A2, 1> a2;
    TQue<TPosition::B2, 1> b2;
    TQue<TPosition::CO1, 1> co1;
    pipe.InitBuffer(a1, 1, 512);
    pipe.InitBuffer(b1, 1, 512);
    pipe.InitBuffer(a2, 1, 512);
    pipe.InitBuffer(b2, 1, 512);
    pipe.InitBuffer(co1, 1, 1024);
    LocalTensor<half> x1 = a1.AllocTensor<half>(), y1 = b1.AllocTensor<half>();
    DataCopy(x1, q, Nd2NzParams(1, 16, 16, 0, 16, 16, 1, 0));
    DataCopy(y1, k, Nd2NzParams(1, 16, 16, 0, 16, 16, 1, 0));
    a1.EnQue(x1);
    b1.EnQue(y1);
    x1 = a1.DeQue<half>();
    y1 = b1.DeQue<half>();
    LocalTensor<half> x2 = a2.AllocTensor<half>(), y2 = b2.AllocTensor<half>();
    LoadData2DParams ld;  // one 16 x 16 fractal
    ld.startIndex = 0;
    ld.repeatTimes = 1;
    ld.srcStride = 1;
    ld.sid = 0;
    ld.dstGap = 0;
    ld.ifTranspose = false;
    ld.addrMode = 0;
    LoadData(x2, x1, ld);
    LoadData(y2, y1, ld);
    a1.FreeTensor(x1);
    b1.FreeTensor(y1);
    a2.EnQue(x2);
    b2.EnQue(y2);
    x2 = a2.DeQue<half>();
    y2 = b2.DeQue<half>();
    LocalTensor<float> c = co1.AllocTensor<float>();
    MmadParams mp;
    mp.m = 16;
    mp.n = 16;
    mp.k = 16;
    Mmad(c, x2, y2, mp);
    a2.FreeTensor(x2);
    b2.FreeTensor(y2);
    co1.EnQue(c);
    c = co1.DeQue<float>();
    FixpipeParamsV220 fp;
    fp.nSize = 16;
    fp.mSize = 16;
    fp.srcStride = 16;
    fp.dstStride = 16;
    Fixpipe(ws, c, fp);
    co1.FreeTensor(c);
    if (kFlags) CrossCoreSetFlag<2, PIPE_FIX>(3);  // the scores are in GM
  }
  if ASCEND_IS_AIV {
    GlobalTensor<float> z;
    z.SetGlobalBuffer((__gm__ float*)zp);
    const int64_t row0 = GetSubBlockIdx() * 8;
    TQue<TPosition::VECIN, 1> in;
    TQue<TPosition::VECOUT, 1> out;
    pipe.InitBuffer(in, 1, 512);
    pipe.InitBuffer(out, 1, 512);
    if (kFlags) CrossCoreWaitFlag(3);
    LocalTensor<float> a = in.AllocTensor<float>();
    DataCopy(a, ws[row0 * 16], 128);
    in.EnQue(a);
    a = in.DeQue<float>();
    LocalTensor<float> b = out.AllocTensor<float>();
    Muls(b, a, 2.f, 128);
    in.FreeTensor(a);
    out.EnQue(b);
    b = out.DeQue<float>();
    DataCopy(z[row0 * 16], b, 128);
    out.FreeTensor(b);
  }
}

ascendc_cpu::LaunchReport RunMix(MixBuffers& m, void (*kernel)(GM_ADDR, GM_ADDR, GM_ADDR, GM_ADDR), Order order) {
  return ascendc_cpu::Launch(Cfg("mix", 1, KernelType::kMixAic1_2, order),
                             {{m.q.data(), 512, "q", GmKind::kInput},
                              {m.k.data(), 512, "k", GmKind::kInput},
                              {m.ws.data(), 1024, "ws", GmKind::kWorkspace},
                              {m.z.data(), 1024, "z", GmKind::kOutput}},
                             kernel, m.q.data(), m.k.data(), m.ws.data(), m.z.data());
}

TEST(mix_handoff_through_gm_with_cross_core_flags_passes) {
  MixBuffers m;
  const auto r = RunMix(m, MixKernel<true>, Order::kBoth);
  for (int i = 0; i < 16; ++i) {
    for (int j = 0; j < 16; ++j) {
      float ref = 0.f;
      for (int d = 0; d < 16; ++d) {
        ref += static_cast<float>(m.q[static_cast<size_t>(i * 16 + d)]) * static_cast<float>(m.k[static_cast<size_t>(j * 16 + d)]);
      }
      CHECK_NEAR(m.z[static_cast<size_t>(i * 16 + j)], 2.f * ref, 1e-3);
    }
  }
  CHECK_EQ(r.blocks.size(), 3u);
  CHECK_EQ(r.blocks[0].core, std::string("AIC"));
  CHECK_EQ(r.totals.cube_ops, 1u);
}

TEST(mix_handoff_through_gm_without_flags_is_a_race) {
  MixBuffers m;
  EXPECT_EMU_ERROR(RunMix(m, MixKernel<false>, Order::kInOrder), "pipe-race", "mix", 0);
  try {
    RunMix(m, MixKernel<false>, Order::kShuffled);  // the AIV may read first: a race the other way
    CHECK(false);
  } catch (const ascendc_cpu::EmulatorError& e) {
    CHECK_EQ(e.check(), std::string("pipe-race"));
  }
}

// ---- hang: a cross-core wait nobody satisfies ------------------------------------------------
void WaitsForever(GM_ADDR) {
  if ASCEND_IS_AIV {
    CrossCoreWaitFlag(5);  // the AIC never sets flag 5
  }
}
void SetsThenWaits(GM_ADDR) {
  if ASCEND_IS_AIC {
    CrossCoreSetFlag<2, PIPE_MTE2>(5);
  }
  if ASCEND_IS_AIV {
    CrossCoreWaitFlag(5);
  }
}
TEST(cross_core_wait_nobody_sets_is_a_hang) {
  try {
    NoGm(Cfg("hang", 2, KernelType::kMixAic1_2, Order::kInOrder), WaitsForever);
    CHECK(false);
  } catch (const ascendc_cpu::EmulatorError& e) {
    std::printf("    (expected) %s\n", e.what());
    CHECK_EQ(e.check(), std::string("hang"));
    CHECK(e.detail().find("CrossCoreWaitFlag(5) on AIV 0") != std::string::npos);
    CHECK(e.detail().find("the AIC of block 0 with mode 2") != std::string::npos);
  }
  NoGm(Cfg("no_hang", 2, KernelType::kMixAic1_2), SetsThenWaits);
  NoGm(Cfg("no_hang", 2, KernelType::kMixAic1_1), SetsThenWaits);
}

void FloodsFlag(GM_ADDR) {
  if ASCEND_IS_AIC {
    for (int i = 0; i < 16; ++i) CrossCoreSetFlag<2, PIPE_MTE2>(1);
  }
  if ASCEND_IS_AIV {
    for (int i = 0; i < 16; ++i) CrossCoreWaitFlag(1);
  }
}
void AlternatesFlag(GM_ADDR) {
  for (int i = 0; i < 16; ++i) {
    if ASCEND_IS_AIC {
      CrossCoreSetFlag<2, PIPE_MTE2>(1);
      CrossCoreWaitFlag(2);
    }
    if ASCEND_IS_AIV {
      CrossCoreWaitFlag(1);
      CrossCoreSetFlag<2, PIPE_MTE3>(2);
    }
  }
}
TEST(more_than_15_pending_cross_core_sets_is_an_error) {
  EXPECT_EMU_ERROR(NoGm(Cfg("flood", 1, KernelType::kMixAic1_2, Order::kInOrder), FloodsFlag), "sync-mismatch",
                   "flood", 0);
  NoGm(Cfg("alternate", 2, KernelType::kMixAic1_2), AlternatesFlag);
}

// ---- event-id-exhausted: 8 ids per HardEvent -------------------------------------------------
template <int kIds>
void AllocIds(GM_ADDR) {
  TPipe pipe;
  std::vector<event_t> ids;
  for (int i = 0; i < kIds; ++i) ids.push_back(pipe.AllocEventID<HardEvent::MTE2_V>());
  for (event_t id : ids) pipe.ReleaseEventID<HardEvent::MTE2_V>(id);
}
void AllocWhileQueuesHoldIds(GM_ADDR) {  // 4 enqueued VECIN tensors hold 4 MTE2_V ids
  TPipe pipe;
  TQue<TPosition::VECIN, 4> in;
  pipe.InitBuffer(in, 4, 64);
  for (int i = 0; i < 4; ++i) {
    LocalTensor<float> t = in.AllocTensor<float>();
    Duplicate(t, 0.f, 16);
    in.EnQue(t);
  }
  std::vector<event_t> ids;
  for (int i = 0; i < 5; ++i) ids.push_back(pipe.AllocEventID<HardEvent::MTE2_V>());
}
TEST(event_id_pool_exhaustion) {
  EXPECT_EMU_ERROR(NoGm(Cfg("ids9", 1, KernelType::kAivOnly), AllocIds<9>), "event-id-exhausted", "ids9", 0);
  NoGm(Cfg("ids8", 1, KernelType::kAivOnly), AllocIds<8>);
  EXPECT_EMU_ERROR(NoGm(Cfg("ids_queue", 1, KernelType::kAivOnly), AllocWhileQueuesHoldIds), "event-id-exhausted",
                   "ids_queue", 0);
}

void FetchIsAPeek(GM_ADDR) {
  TPipe pipe;
  const event_t a = pipe.FetchEventID(HardEvent::V_MTE3);
  const event_t b = pipe.FetchEventID<HardEvent::V_MTE3>();
  const event_t c = pipe.AllocEventID<HardEvent::V_MTE3>();
  const event_t d = pipe.FetchEventID(HardEvent::V_MTE3);
  if (a != 0 || b != 0 || c != 0 || d != 1) throw std::runtime_error("unexpected event ids");
  pipe.ReleaseEventID<HardEvent::V_MTE3>(c);
}
void ReleaseTwice(GM_ADDR) {
  TPipe pipe;
  const event_t c = pipe.AllocEventID<HardEvent::V_MTE3>();
  pipe.ReleaseEventID<HardEvent::V_MTE3>(c);
  pipe.ReleaseEventID<HardEvent::V_MTE3>(c);
}
TEST(fetch_peeks_alloc_takes_release_gives_back) {
  NoGm(Cfg("fetch", 1, KernelType::kAivOnly), FetchIsAPeek);
  EXPECT_EMU_ERROR(NoGm(Cfg("release2", 1, KernelType::kAivOnly), ReleaseTwice), "api-constraint", "release2", 0);
}

}  // namespace
