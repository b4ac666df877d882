// One deliberately broken kernel per check: each must trigger exactly that check, naming the
// kernel, the block and the kernel's own line.
#include <stdexcept>
#include <vector>

#include "ascendc_cpu/launch.h"
#include "kernel_operator.h"
#include "test_framework.h"

namespace {

using namespace AscendC;
using ascendc_cpu::GmKind;
using ascendc_cpu::Order;

constexpr uint32_t kN = 1024;  // floats in x and z
constexpr uint32_t kPerBlock = 256;
int g_line = 0;  // line of the broken call, set by the kernels that check it

struct Buffers {
  std::vector<float> x = std::vector<float>(kN, 1.f);
  std::vector<float> z = std::vector<float>(kN, 0.f);
};

ascendc_cpu::LaunchReport Go(const char* name, int32_t blocks, void (*kernel)(GM_ADDR, GM_ADDR),
                             Order order = Order::kInOrder, bool detect_races = true) {
  Buffers b;
  ascendc_cpu::LaunchConfig cfg{name, blocks, 196608, order, 3};
  cfg.kernel_type = ascendc_cpu::KernelType::kMixAiv1_0;  // vector cores with SyncAll (the cross-core scheduler)
  cfg.detect_races = detect_races;
  return ascendc_cpu::Launch(cfg,
                             {{b.x.data(), kN * 4ull, "x", GmKind::kInput}, {b.z.data(), kN * 4ull, "z", GmKind::kOutput}},
                             kernel, b.x.data(), b.z.data());
}

// Copies this block's slice x -> z through one queue pair; the knobs break one thing each.
struct Copy {
  TPipe pipe;
  TQue<TPosition::VECIN, 1> in;
  TQue<TPosition::VECOUT, 1> out;
  GlobalTensor<float> x, z;
  Copy(GM_ADDR xp, GM_ADDR zp, uint32_t len = kPerBlock) {
    x.SetGlobalBuffer((__gm__ float*)xp + GetBlockIdx() * kPerBlock);
    z.SetGlobalBuffer((__gm__ float*)zp + GetBlockIdx() * kPerBlock);
    pipe.InitBuffer(in, 1, len * sizeof(float));
    pipe.InitBuffer(out, 1, len * sizeof(float));
  }
};

void CorrectCopy(GM_ADDR xp, GM_ADDR zp) {
  Copy k(xp, zp);
  LocalTensor<float> a = k.in.AllocTensor<float>();
  DataCopy(a, k.x, kPerBlock);
  k.in.EnQue(a);
  a = k.in.DeQue<float>();
  LocalTensor<float> c = k.out.AllocTensor<float>();
  Muls(c, a, 2.f, kPerBlock);
  k.out.EnQue(c);
  k.in.FreeTensor(a);
  c = k.out.DeQue<float>();
  DataCopy(k.z, c, kPerBlock);
  k.out.FreeTensor(c);
}

TEST(correct_copy_passes_all_checks) {
  const auto r = Go("correct_copy", 4, CorrectCopy, Order::kBoth);
  CHECK_EQ(r.totals.gm_read_bytes, kN * 4ull);
  CHECK_EQ(r.totals.gm_write_bytes, kN * 4ull);
  CHECK_EQ(r.totals.vector_ops, 4u);
}

// ---- ub-overflow ---------------------------------------------------------------------------
void UbOverflow(GM_ADDR, GM_ADDR) {
  TPipe pipe;
  TQue<TPosition::VECIN, 2> in;
  TBuf<TPosition::VECCALC> tmp;
  pipe.InitBuffer(in, 2, 64 * 1024);
  g_line = __LINE__ + 1;
  pipe.InitBuffer(tmp, 64 * 1024 + 1);  // 128 KiB + 64 KiB + 32 B > 192 KiB
}
TEST(ub_overflow) {
  EXPECT_EMU_ERROR(Go("ub_overflow", 2, UbOverflow), "ub-overflow", "ub_overflow", 0);
  try {
    Go("ub_overflow", 2, UbOverflow);
  } catch (const ascendc_cpu::EmulatorError& e) {
    CHECK_EQ(e.file(), std::string("test_checks.cpp"));
    CHECK_EQ(e.line(), g_line);
    CHECK(e.detail().find("196608") != std::string::npos);
  }
}

// ---- datacopy-unaligned --------------------------------------------------------------------
void DataCopyUnaligned(GM_ADDR xp, GM_ADDR zp) {
  Copy k(xp, zp);
  LocalTensor<float> a = k.in.AllocTensor<float>();
  g_line = __LINE__ + 1;
  DataCopy(a, k.x, 13);  // 52 bytes: the hardware would move 32
  k.in.FreeTensor(a);
}
TEST(datacopy_unaligned) {
  EXPECT_EMU_ERROR(Go("datacopy_unaligned", 2, DataCopyUnaligned), "datacopy-unaligned", "datacopy_unaligned", 0);
  try {
    Go("datacopy_unaligned", 1, DataCopyUnaligned);
  } catch (const ascendc_cpu::EmulatorError& e) {
    CHECK_EQ(e.line(), g_line);
  }
}

// ---- ub-unaligned --------------------------------------------------------------------------
void UbUnaligned(GM_ADDR xp, GM_ADDR zp) {
  Copy k(xp, zp);
  LocalTensor<float> a = k.in.AllocTensor<float>();
  DataCopy(a, k.x, kPerBlock);
  LocalTensor<float> c = k.out.AllocTensor<float>();
  Adds(c, a[3], 1.f, 8);  // a[3] is 12 bytes into the buffer
  k.in.FreeTensor(a);
  k.out.FreeTensor(c);
}
TEST(ub_unaligned) { EXPECT_EMU_ERROR(Go("ub_unaligned", 2, UbUnaligned), "ub-unaligned", "ub_unaligned", 0); }

// ---- gm-out-of-bounds ----------------------------------------------------------------------
void GmOutOfBounds(GM_ADDR xp, GM_ADDR zp) {
  Copy k(xp, zp, 2 * kPerBlock);
  LocalTensor<float> a = k.in.AllocTensor<float>();
  DataCopy(a, k.x, 2 * kPerBlock);  // the last block reads past the end of x
  k.in.FreeTensor(a);
}
TEST(gm_out_of_bounds) {
  EXPECT_EMU_ERROR(Go("gm_out_of_bounds", 4, GmOutOfBounds), "gm-out-of-bounds", "gm_out_of_bounds", 3);
}

void GmScalarOutOfBounds(GM_ADDR xp, GM_ADDR) {
  GlobalTensor<float> x;
  x.SetGlobalBuffer((__gm__ float*)xp);
  (void)x.GetValue(kN + GetBlockIdx());
}
TEST(gm_out_of_bounds_scalar) {
  EXPECT_EMU_ERROR(Go("gm_scalar_oob", 2, GmScalarOutOfBounds), "gm-out-of-bounds", "gm_scalar_oob", 0);
}

void ReadPastX(GM_ADDR xp, GM_ADDR zp) {
  Copy k(xp, zp, 2 * kPerBlock);
  LocalTensor<float> a = k.in.AllocTensor<float>();
  DataCopy(a, k.x[kPerBlock], 2 * kPerBlock);  // runs off x into the region right after it
  k.in.FreeTensor(a);
}
TEST(gm_out_of_bounds_into_the_next_region) {
  std::vector<float> mem(2 * kPerBlock * 2, 1.f);  // x and z back to back in one allocation
  EXPECT_EMU_ERROR(ascendc_cpu::Launch({"read_past_x", 1, 196608},
                                       {{mem.data(), 2 * kPerBlock * 4ull, "x", GmKind::kInput},
                                        {mem.data() + 2 * kPerBlock, 2 * kPerBlock * 4ull, "z", GmKind::kOutput}},
                                       ReadPastX, mem.data(), mem.data() + 2 * kPerBlock),
                   "gm-out-of-bounds", "read_past_x", 0);
}

// ---- gm-out-of-bounds: a write into a gap of a strided view ---------------------------------
// K and V as the two halves of one [rows, 2, kRow] allocation: each a view with row stride 2 * kRow.
constexpr uint32_t kRow = 64, kRows = 4;
void WriteRows(GM_ADDR kp, GM_ADDR vp, uint32_t row_stride) {
  GlobalTensor<float> k;
  k.SetGlobalBuffer((__gm__ float*)kp);
  (void)vp;
  TPipe pipe;
  TBuf<TPosition::VECCALC> buf;
  pipe.InitBuffer(buf, kRow * sizeof(float));
  LocalTensor<float> ub = buf.Get<float>();
  Duplicate(ub, 1.f, kRow);
  PipeBarrier<PIPE_ALL>();
  for (uint32_t r = 0; r < kRows; ++r) {
    DataCopyExtParams params{1, kRow * 4, 0, 0, 0};
    DataCopyPad(k[r * row_stride], ub, params);
  }
}
void WriteKRowsRight(GM_ADDR kp, GM_ADDR vp) { WriteRows(kp, vp, 2 * kRow); }
void WriteKRowsDense(GM_ADDR kp, GM_ADDR vp) { WriteRows(kp, vp, kRow); }  // rows 1, 3 land in V's half
ascendc_cpu::LaunchReport GoViews(const char* name, void (*kernel)(GM_ADDR, GM_ADDR)) {
  std::vector<float> kv(kRows * 2 * kRow, 0.f);
  const uint64_t span = ((kRows - 1) * 2 * kRow + kRow) * 4ull;
  const std::vector<std::pair<int64_t, int64_t>> view = {{kRows, 2 * kRow * 4}, {kRow, 4}};
  return ascendc_cpu::Launch({name, 1, 196608},
                             {{kv.data(), span, "key_cache", GmKind::kOutput, view, 4},
                              {kv.data() + kRow, span, "value_cache", GmKind::kOutput, view, 4}},
                             kernel, kv.data(), kv.data() + kRow);
}
TEST(gm_view_writes_its_elements) { GoViews("kv_views", WriteKRowsRight); }
TEST(gm_write_into_a_view_gap) {
  EXPECT_EMU_ERROR(GoViews("kv_gap", WriteKRowsDense), "gm-out-of-bounds", "kv_gap", 0);
}
TEST(gm_views_sharing_bytes_are_refused) {
  std::vector<float> kv(kRows * 2 * kRow, 0.f);
  const std::vector<std::pair<int64_t, int64_t>> view = {{kRows, 2 * kRow * 4}, {kRow, 4}};
  const uint64_t span = ((kRows - 1) * 2 * kRow + kRow) * 4ull;
  bool threw = false;
  try {
    ascendc_cpu::Launch({"kv_alias", 1, 196608},
                        {{kv.data(), span, "key_cache", GmKind::kOutput, view, 4},
                         {kv.data() + kRow / 2, span, "value_cache", GmKind::kOutput, view, 4}},
                        WriteKRowsRight, kv.data(), kv.data() + kRow / 2);
  } catch (const std::invalid_argument&) {
    threw = true;
  }
  CHECK(threw);
}

// ---- ub-out-of-bounds ----------------------------------------------------------------------
void UbOutOfBounds(GM_ADDR xp, GM_ADDR zp) {
  Copy k(xp, zp);
  LocalTensor<float> a = k.in.AllocTensor<float>();
  DataCopy(a, k.x, kPerBlock);
  LocalTensor<float> c = k.out.AllocTensor<float>();
  Muls(c, a, 2.f, kPerBlock + 8);  // 8 floats past both buffers
  k.in.FreeTensor(a);
  k.out.FreeTensor(c);
}
TEST(ub_out_of_bounds) {
  EXPECT_EMU_ERROR(Go("ub_out_of_bounds", 2, UbOutOfBounds), "ub-out-of-bounds", "ub_out_of_bounds", 0);
}

// ---- ub-uninitialized-read -----------------------------------------------------------------
void UninitializedRead(GM_ADDR xp, GM_ADDR zp) {
  Copy k(xp, zp);
  LocalTensor<float> a = k.in.AllocTensor<float>();
  DataCopy(a, k.x, kPerBlock - 8);  // the last 8 floats are never loaded
  LocalTensor<float> c = k.out.AllocTensor<float>();
  Muls(c, a, 2.f, kPerBlock);
  k.in.FreeTensor(a);
  k.out.FreeTensor(c);
}
TEST(ub_uninitialized_read) {
  EXPECT_EMU_ERROR(Go("uninit", 2, UninitializedRead), "ub-uninitialized-read", "uninit", 0);
}

void StaleTileRead(GM_ADDR xp, GM_ADDR zp) {
  Copy k(xp, zp);
  for (int i = 0; i < 2; ++i) {
    LocalTensor<float> a = k.in.AllocTensor<float>();
    if (i == 0) DataCopy(a, k.x, kPerBlock);  // the second tile forgets its copy-in
    k.in.EnQue(a);
    a = k.in.DeQue<float>();
    LocalTensor<float> c = k.out.AllocTensor<float>();
    Muls(c, a, 2.f, kPerBlock);
    k.in.FreeTensor(a);
    k.out.FreeTensor(c);
  }
}
TEST(ub_uninitialized_read_of_a_reallocated_buffer) {
  EXPECT_EMU_ERROR(Go("stale", 1, StaleTileRead), "ub-uninitialized-read", "stale", 0);
}

// ---- queue misuse --------------------------------------------------------------------------
void DeQueEmpty(GM_ADDR xp, GM_ADDR zp) {
  Copy k(xp, zp);
  LocalTensor<float> a = k.in.AllocTensor<float>();
  DataCopy(a, k.x, kPerBlock);
  LocalTensor<float> b = k.in.DeQue<float>();  // never enqueued
  k.in.FreeTensor(b);
}
TEST(queue_deque_empty) { EXPECT_EMU_ERROR(Go("deque_empty", 2, DeQueEmpty), "queue-deque-empty", "deque_empty", 0); }

void DoubleFree(GM_ADDR xp, GM_ADDR zp) {
  Copy k(xp, zp);
  LocalTensor<float> a = k.in.AllocTensor<float>();
  k.in.FreeTensor(a);
  if (GetBlockIdx() == 1) k.in.FreeTensor(a);
}
TEST(queue_double_free) { EXPECT_EMU_ERROR(Go("double_free", 2, DoubleFree), "queue-double-free", "double_free", 1); }

void Leak(GM_ADDR xp, GM_ADDR zp) {
  Copy k(xp, zp);
  LocalTensor<float> a = k.in.AllocTensor<float>();
  DataCopy(a, k.x, kPerBlock);
  k.in.EnQue(a);
  LocalTensor<float> b = k.in.DeQue<float>();
  g_line = __LINE__ + 1;
  LocalTensor<float> c = k.out.AllocTensor<float>();  // never freed
  Muls(c, b, 2.f, kPerBlock);
  k.in.FreeTensor(b);
}
TEST(queue_leak) {
  EXPECT_EMU_ERROR(Go("leak", 2, Leak), "queue-leak", "leak", 0);
  try {
    Go("leak", 1, Leak);
  } catch (const ascendc_cpu::EmulatorError& e) {
    CHECK_EQ(e.line(), g_line);  // the site of the AllocTensor that leaked
  }
}

void AllocExhausted(GM_ADDR xp, GM_ADDR zp) {
  Copy k(xp, zp);
  LocalTensor<float> a = k.in.AllocTensor<float>();
  LocalTensor<float> b = k.in.AllocTensor<float>();  // one buffer only: the hardware waits forever
  k.in.FreeTensor(a);
  k.in.FreeTensor(b);
}
TEST(queue_alloc_exhausted) { EXPECT_EMU_ERROR(Go("exhausted", 1, AllocExhausted), "queue-misuse", "exhausted", 0); }

void UseAfterFree(GM_ADDR xp, GM_ADDR zp) {
  Copy k(xp, zp);
  LocalTensor<float> a = k.in.AllocTensor<float>();
  DataCopy(a, k.x, kPerBlock);
  LocalTensor<float> c = k.out.AllocTensor<float>();
  k.in.FreeTensor(a);
  Muls(c, a, 2.f, kPerBlock);
  k.out.FreeTensor(c);
}
TEST(queue_use_after_free) { EXPECT_EMU_ERROR(Go("use_after_free", 1, UseAfterFree), "queue-misuse", "use_after_free", 0); }

// ---- gm-cross-block-write / gm-write-readonly ------------------------------------------------
void CrossBlockWrite(GM_ADDR xp, GM_ADDR zp) {
  Copy k(xp, zp);
  GlobalTensor<float> z0;
  z0.SetGlobalBuffer((__gm__ float*)zp);
  LocalTensor<float> a = k.in.AllocTensor<float>();
  DataCopy(a, k.x, kPerBlock);
  SetFlag<HardEvent::MTE2_MTE3>(0);
  WaitFlag<HardEvent::MTE2_MTE3>(0);
  DataCopy(z0, a, 8);  // every block writes z[0..8)
  k.in.FreeTensor(a);
}
TEST(gm_cross_block_write) {
  EXPECT_EMU_ERROR(Go("cross_write", 3, CrossBlockWrite), "gm-cross-block-write", "cross_write", 1);
}

void CrossBlockWriteAcrossSyncAll(GM_ADDR xp, GM_ADDR zp) {
  GlobalTensor<float> z;
  z.SetGlobalBuffer((__gm__ float*)zp);
  GlobalTensor<float> x;
  x.SetGlobalBuffer((__gm__ float*)xp);
  // Phase b writes z[0]; the barriers order the writes, so this is legal.
  for (int64_t phase = 0; phase < GetBlockNum(); ++phase) {
    if (phase == GetBlockIdx()) {
      z.SetValue(0, x.GetValue(0) + static_cast<float>(phase));
      DataCacheCleanAndInvalid<float, CacheLine::SINGLE_CACHE_LINE, DcciDst::CACHELINE_OUT>(z);  // to GM
    }
    SyncAll();
  }
}
TEST(gm_writes_ordered_by_syncall_are_allowed) {
  const auto r = Go("ordered_writes", 3, CrossBlockWriteAcrossSyncAll, Order::kBoth);
  CHECK_EQ(r.totals.sync_alls, 9u);
}

void WriteInput(GM_ADDR xp, GM_ADDR) {
  GlobalTensor<float> x;
  x.SetGlobalBuffer((__gm__ float*)xp);
  x.SetValue(GetBlockIdx(), 0.f);
}
TEST(gm_write_readonly) { EXPECT_EMU_ERROR(Go("write_input", 2, WriteInput), "gm-write-readonly", "write_input", 0); }

// ---- block-order-dependence ----------------------------------------------------------------
void OrderDependent(GM_ADDR, GM_ADDR zp) {
  GlobalTensor<float> z;
  z.SetGlobalBuffer((__gm__ float*)zp);
  float seen = 0.f;  // reads what the other blocks already wrote: a race on hardware
  for (int64_t b = 0; b < GetBlockNum(); ++b) {
    if (b != GetBlockIdx()) seen += z.GetValue(8 * b);
  }
  z.SetValue(8 * GetBlockIdx(), seen + 1.f);
}
TEST(block_order_dependence) {
  // The race detector catches this kernel first (its scalar reads see other cores' unflushed
  // data); block-order-dependence is the backstop behind it, tested with the detector off.
  EXPECT_EMU_ERROR(Go("order_dep", 4, OrderDependent, Order::kBoth), "dcache-stale", "order_dep", 1);
  EXPECT_EMU_ERROR(Go("order_dep", 4, OrderDependent, Order::kBoth, false), "block-order-dependence", "order_dep", -1);
  Go("order_dep", 4, OrderDependent, Order::kInOrder, false);  // one order alone cannot see it
}

// ---- sync-mismatch -------------------------------------------------------------------------
void SyncAllInOneBlock(GM_ADDR, GM_ADDR) {
  if (GetBlockIdx() == 0) SyncAll();
}
TEST(syncall_not_reached_by_all) {
  EXPECT_EMU_ERROR(Go("sync_one", 3, SyncAllInOneBlock), "sync-mismatch", "sync_one", 0);
}

void WaitWithoutSet(GM_ADDR, GM_ADDR) {
  SetFlag<HardEvent::MTE2_V>(0);
  WaitFlag<HardEvent::MTE2_V>(0);
  WaitFlag<HardEvent::V_MTE3>(1);
}
TEST(waitflag_without_setflag) {
  EXPECT_EMU_ERROR(Go("wait_flag", 2, WaitWithoutSet), "sync-mismatch", "wait_flag", 0);
}

// ---- api-constraint / kernel-exception -----------------------------------------------------
void PadTooWide(GM_ADDR xp, GM_ADDR zp) {
  Copy k(xp, zp);
  LocalTensor<float> a = k.in.AllocTensor<float>();
  DataCopyPad(a, k.x, DataCopyExtParams{1, 40, 0, 0, 0}, DataCopyPadExtParams<float>{true, 9, 0, 0.f});
  k.in.FreeTensor(a);
}
TEST(datacopypad_padding_over_32_bytes) {
  EXPECT_EMU_ERROR(Go("pad_wide", 1, PadTooWide), "api-constraint", "pad_wide", 0);
}

void Throws(GM_ADDR, GM_ADDR) {
  if (GetBlockIdx() == 1) throw std::runtime_error("boom");
}
TEST(kernel_exception_is_reported_with_its_block) {
  EXPECT_EMU_ERROR(Go("throws", 3, Throws, Order::kBoth), "kernel-exception", "throws", 1);
}

TEST(shuffled_run_errors_name_the_order) {
  try {
    Go("cross_write", 4, CrossBlockWrite, Order::kShuffled);
    CHECK(false);
  } catch (const ascendc_cpu::EmulatorError& e) {
    CHECK_EQ(e.check(), std::string("gm-cross-block-write"));
    CHECK(std::string(e.what()).find("shuffled (seed 3") != std::string::npos);
    CHECK(e.block() == ascendc_cpu::ShuffledOrder(4, 3)[1]);  // the second block to run
  }
}

TEST(api_outside_a_launch_is_an_error) {
  bool thrown = false;
  try {
    TPipe pipe;
  } catch (const ascendc_cpu::EmulatorError& e) {
    thrown = true;
  }
  CHECK(thrown);
}

}  // namespace
