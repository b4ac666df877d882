// Axpy (vec_ternary_scalar.h): dst = src * scalar + dst for the three Atlas A2 type pairs, count
// form (with tails past whole repeats) and level-0 forms, against a reference computed here; the
// documented constraints (overlap, masks, count) each caught beside a correct twin.
#include <cmath>
#include <cstring>
#include <vector>

#include "in_block.h"
#include "test_framework.h"

namespace {

using namespace AscendC;
using emu_test::Fill;
using emu_test::InBlock;
using emu_test::Read;

// Reference: one rounding of the exact s * k + d to the dst type (the docs' fused multiply-add).
template <class T, class U>
T Ref(U s, U k, T d) {
  return static_cast<T>(static_cast<double>(s) * static_cast<double>(k) + static_cast<double>(d));
}

template <class T>
bool SameBits(T a, T b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

template <class T, class U>
void CountCase(int32_t n) {
  InBlock([n] {
    TPipe pipe;
    TBuf<TPosition::VECCALC> sb, db;
    const uint32_t cap = (static_cast<uint32_t>(n) + 127) / 128 * 128 + 128;
    pipe.InitBuffer(sb, cap * sizeof(U));
    pipe.InitBuffer(db, cap * sizeof(T));
    LocalTensor<U> s = sb.Get<U>();
    LocalTensor<T> d = db.Get<T>();
    std::vector<U> vs(cap);
    std::vector<T> vd(cap);
    for (uint32_t i = 0; i < cap; ++i) {
      vs[i] = static_cast<U>(static_cast<float>(static_cast<int>(i * 37 % 101) - 50) / 7.f);
      vd[i] = static_cast<T>(static_cast<float>(static_cast<int>(i * 53 % 89) - 44) / 3.f);
    }
    Fill(s, vs);
    Fill(d, vd);
    const U k = static_cast<U>(1.37f);
    Axpy(d, s, k, n);
    const std::vector<T> got = Read(d, cap);
    for (uint32_t i = 0; i < cap; ++i) {
      const T want = i < static_cast<uint32_t>(n) ? Ref<T, U>(vs[i], k, vd[i]) : vd[i];  // past n: untouched
      CHECK(SameBits(got[i], want));
    }
  });
}

TEST(axpy_count_form_half_half) {
  for (int32_t n : {0, 1, 127, 128, 129, 300, 1024}) CountCase<half, half>(n);
}
TEST(axpy_count_form_float_float) {
  for (int32_t n : {1, 63, 64, 65, 200, 1024}) CountCase<float, float>(n);
}
TEST(axpy_count_form_half_to_float) {
  for (int32_t n : {1, 63, 64, 65, 200, 1024}) CountCase<float, half>(n);
}

TEST(axpy_is_fused_one_rounding) {
  // float: s * k + d with s * k not representable: a separate Muls would round it first.
  InBlock([] {
    TPipe pipe;
    TBuf<TPosition::VECCALC> sb, db;
    pipe.InitBuffer(sb, 256);
    pipe.InitBuffer(db, 256);
    LocalTensor<float> s = sb.Get<float>(), d = db.Get<float>();
    const float x = 1.f + std::ldexp(1.f, -12), k = 1.f + std::ldexp(1.f, -12);
    Duplicate(s, x, 64);
    Duplicate(d, -1.f, 64);
    Axpy(d, s, k, 64);
    // exact: 2^-11 + 2^-24; unfused: (x*k rounded to 1 + 2^-11) - 1 = 2^-11.
    CHECK_EQ(d.GetValue(0), std::ldexp(1.f, -11) + std::ldexp(1.f, -24));
  });
}

TEST(axpy_in_place_full_overlap_passes) {
  InBlock([] {
    TPipe pipe;
    TBuf<TPosition::VECCALC> b;
    pipe.InitBuffer(b, 200 * sizeof(float));
    LocalTensor<float> t = b.Get<float>();
    Duplicate(t, 3.f, 200);
    Axpy(t, t, 2.f, 200);  // dst = 3 * 2 + 3
    for (int i = 0; i < 200; ++i) CHECK_EQ(t.GetValue(i), 9.f);
  });
}

// Level-0 forms: mask continuous / bitwise, repeat strides, the half -> float layout (a repeat
// reads 4 DataBlocks of half and writes 8 of float).
TEST(axpy_level0_half_half_mask_and_strides) {
  InBlock([] {
    TPipe pipe;
    TBuf<TPosition::VECCALC> sb, db;
    pipe.InitBuffer(sb, 3 * 256);
    pipe.InitBuffer(db, 3 * 256);
    LocalTensor<half> s = sb.Get<half>(), d = db.Get<half>();
    std::vector<half> vs(384), vd(384);
    for (int i = 0; i < 384; ++i) {
      vs[i] = static_cast<half>(static_cast<float>(i % 17) - 8.f);
      vd[i] = static_cast<half>(static_cast<float>(i % 5));
    }
    Fill(s, vs);
    Fill(d, vd);
    const half k = static_cast<half>(0.5f);
    Axpy(d, s, k, uint64_t{100}, 3, UnaryRepeatParams(1, 1, 8, 8));
    for (int r = 0; r < 3; ++r) {
      for (int e = 0; e < 128; ++e) {
        const int i = r * 128 + e;
        CHECK(SameBits(d.GetValue(i), e < 100 ? (Ref<half, half>(vs[i], k, vd[i])) : vd[i]));
      }
    }
    uint64_t bits[2] = {0x5555555555555555ull, 0x1ull};
    Fill(d, vd);
    Axpy(d, s, k, bits, 1, UnaryRepeatParams(1, 1, 8, 8));
    for (int e = 0; e < 128; ++e) {
      const bool on = e < 64 ? (e % 2 == 0) : e == 64;
      CHECK(SameBits(d.GetValue(e), on ? (Ref<half, half>(vs[e], k, vd[e])) : vd[e]));
    }
  });
}

TEST(axpy_level0_float_float_block_stride) {
  InBlock([] {
    TPipe pipe;
    TBuf<TPosition::VECCALC> sb, db;
    pipe.InitBuffer(sb, 2 * 512);
    pipe.InitBuffer(db, 2 * 256);
    LocalTensor<float> s = sb.Get<float>(), d = db.Get<float>();
    std::vector<float> vs(256), vd(128);
    for (int i = 0; i < 256; ++i) vs[i] = static_cast<float>(i) * 0.25f;
    for (int i = 0; i < 128; ++i) vd[i] = static_cast<float>(-i);
    Fill(s, vs);
    Fill(d, vd);
    // src blocks every other DataBlock, src repeats 16 blocks apart.
    Axpy(d, s, 3.f, uint64_t{64}, 2, UnaryRepeatParams(1, 2, 8, 16));
    for (int r = 0; r < 2; ++r) {
      for (int e = 0; e < 64; ++e) {
        const int si = r * 128 + (e / 8) * 16 + e % 8, di = r * 64 + e;
        CHECK_EQ(d.GetValue(di), std::fmaf(vs[si], 3.f, vd[di]));
      }
    }
  });
}

TEST(axpy_level0_half_to_float) {
  InBlock([] {
    TPipe pipe;
    TBuf<TPosition::VECCALC> sb, db;
    pipe.InitBuffer(sb, 512 * sizeof(half));
    pipe.InitBuffer(db, 512 * sizeof(float));
    LocalTensor<half> s = sb.Get<half>();
    LocalTensor<float> d = db.Get<float>();
    std::vector<half> vs(512);
    std::vector<float> vd(512);
    for (int i = 0; i < 512; ++i) {
      vs[i] = static_cast<half>(static_cast<float>(i % 29) / 4.f - 3.f);
      vd[i] = static_cast<float>(i % 7) / 3.f;
    }
    Fill(s, vs);
    Fill(d, vd);
    const half k = static_cast<half>(2.0f);
    Axpy(d, s, k, uint64_t{64}, 8, UnaryRepeatParams(1, 1, 8, 4));  // Axpy.md's example: 512 elements
    for (int i = 0; i < 512; ++i) CHECK_EQ(d.GetValue(i), (Ref<float, half>(vs[i], k, vd[i])));
    uint64_t bits[2] = {0xF0F0F0F0F0F0F0F0ull, 0};
    Fill(d, vd);
    Axpy(d, s, k, bits, 1, UnaryRepeatParams(1, 1, 8, 4));
    for (int e = 0; e < 64; ++e) {
      CHECK_EQ(d.GetValue(e), ((bits[0] >> e) & 1) ? (Ref<float, half>(vs[e], k, vd[e])) : vd[e]);
    }
  });
}

// ---- constraints ----------------------------------------------------------------------------
void HalfToFloatOverlap(bool overlap) {
  TPipe pipe;
  TBuf<TPosition::VECCALC> b;
  pipe.InitBuffer(b, 128 * sizeof(float));
  LocalTensor<float> d = b.Get<float>();
  // src: the upper half of the same buffer (disjoint from dst's first 64 floats), or dst's own bytes.
  LocalTensor<half> s = overlap ? d.ReinterpretCast<half>() : d[64].ReinterpretCast<half>();
  Duplicate(d, 1.f, 128);
  Axpy(d, s, static_cast<half>(1.f), 64);
}
TEST(axpy_half_to_float_disjoint_passes) {
  InBlock([] { HalfToFloatOverlap(false); });
}
TEST(axpy_half_to_float_overlap_is_api_constraint) {
  EXPECT_EMU_ERROR(InBlock([] { HalfToFloatOverlap(true); }), "api-constraint", "ops", 0);
}

void SameTypeShifted(uint32_t shift) {
  TPipe pipe;
  TBuf<TPosition::VECCALC> b;
  pipe.InitBuffer(b, 256 * sizeof(float));
  LocalTensor<float> t = b.Get<float>();
  Duplicate(t, 1.f, 256);
  Axpy(t, t[shift], 2.f, 128);
}
TEST(axpy_same_type_src_equal_to_dst_or_disjoint_passes) {
  InBlock([] { SameTypeShifted(0); });
  InBlock([] { SameTypeShifted(128); });
}
TEST(axpy_same_type_partial_overlap_is_api_constraint) {
  EXPECT_EMU_ERROR(InBlock([] { SameTypeShifted(8); }), "api-constraint", "ops", 0);  // src ahead of dst
}

void Level0EarlierRepeat(uint8_t src_rep) {
  TPipe pipe;
  TBuf<TPosition::VECCALC> b;
  pipe.InitBuffer(b, 4 * 256);
  LocalTensor<float> t = b.Get<float>();
  Duplicate(t, 1.f, 256);
  // dst repeats 8 blocks apart from t[0]; src = t with repeat stride src_rep: with 8 it is each
  // repeat's own dst (full overlap); with 0 repeat r >= 1 reads repeat 0's dst.
  Axpy(t, t, 2.f, uint64_t{64}, 2, UnaryRepeatParams(1, 1, 8, src_rep));
}
TEST(axpy_level0_own_dst_each_repeat_passes) {
  InBlock([] { Level0EarlierRepeat(8); });
}
TEST(axpy_level0_src_reading_an_earlier_repeats_dst_is_api_constraint) {
  EXPECT_EMU_ERROR(InBlock([] { Level0EarlierRepeat(0); }), "api-constraint", "ops", 0);
}

void HalfToFloatMask(uint64_t mask) {
  TPipe pipe;
  TBuf<TPosition::VECCALC> sb, db;
  pipe.InitBuffer(sb, 256);
  pipe.InitBuffer(db, 512);
  Duplicate(sb.Get<half>(), static_cast<half>(1.f), 128);
  Duplicate(db.Get<float>(), 0.f, 128);
  Axpy(db.Get<float>(), sb.Get<half>(), static_cast<half>(1.f), mask, 1, UnaryRepeatParams(1, 1, 8, 4));
}
TEST(axpy_half_to_float_mask_64_passes) {
  InBlock([] { HalfToFloatMask(64); });
}
TEST(axpy_half_to_float_mask_past_64_is_api_constraint) {
  EXPECT_EMU_ERROR(InBlock([] { HalfToFloatMask(65); }), "api-constraint", "ops", 0);
}
TEST(axpy_half_to_float_bitmask_high_word_is_api_constraint) {
  EXPECT_EMU_ERROR(InBlock([] {
                     TPipe pipe;
                     TBuf<TPosition::VECCALC> sb, db;
                     pipe.InitBuffer(sb, 256);
                     pipe.InitBuffer(db, 512);
                     Duplicate(sb.Get<half>(), static_cast<half>(1.f), 128);
                     Duplicate(db.Get<float>(), 0.f, 128);
                     uint64_t bits[2] = {~uint64_t{0}, 1};
                     Axpy(db.Get<float>(), sb.Get<half>(), static_cast<half>(1.f), bits, 1,
                          UnaryRepeatParams(1, 1, 8, 4));
                   }),
                   "api-constraint", "ops", 0);
}

void Count(int32_t n) {
  TPipe pipe;
  TBuf<TPosition::VECCALC> b;
  pipe.InitBuffer(b, 512);
  LocalTensor<float> t = b.Get<float>();
  Duplicate(t, 1.f, 128);
  Axpy(t[64], t, 2.f, n);
}
TEST(axpy_count_0_is_a_nop_and_negative_is_api_constraint) {
  InBlock([] {
    Count(0);
  });
  EXPECT_EMU_ERROR(InBlock([] { Count(-1); }), "api-constraint", "ops", 0);
}

TEST(axpy_unaligned_operand_is_ub_unaligned) {
  EXPECT_EMU_ERROR(InBlock([] {
                     TPipe pipe;
                     TBuf<TPosition::VECCALC> b;
                     pipe.InitBuffer(b, 1024);
                     LocalTensor<float> t = b.Get<float>();
                     Duplicate(t, 1.f, 256);
                     Axpy(t[128], t[1], 2.f, 64);  // src 4 bytes past a 32-byte boundary
                   }),
                   "ub-unaligned", "ops", 0);
}

TEST(axpy_reads_dst_so_an_unwritten_dst_is_uninitialized_read) {
  EXPECT_EMU_ERROR(InBlock([] {
                     TPipe pipe;
                     TBuf<TPosition::VECCALC> sb, db;
                     pipe.InitBuffer(sb, 256);
                     pipe.InitBuffer(db, 256);
                     Duplicate(sb.Get<float>(), 1.f, 64);
                     Axpy(db.Get<float>(), sb.Get<float>(), 2.f, 64);
                   }),
                   "ub-uninitialized-read", "ops", 0);
}

TEST(axpy_is_one_vector_op) {
  const auto r = InBlock([] {
    TPipe pipe;
    TBuf<TPosition::VECCALC> sb, db;
    pipe.InitBuffer(sb, 1024);
    pipe.InitBuffer(db, 1024);
    Duplicate(sb.Get<float>(), 1.f, 256);
    Duplicate(db.Get<float>(), 1.f, 256);
    Axpy(db.Get<float>(), sb.Get<float>(), 2.f, 200);
  });
  CHECK_EQ(r.totals.vector_ops, 3u);
}

// ---- PIPE_V in the race detector: Axpy reads dst, so a dst loaded by MTE2 needs MTE2 -> V ----
template <bool kSync>
void LoadDstThenAxpy(GM_ADDR xp) {
  GlobalTensor<float> x;
  x.SetGlobalBuffer((__gm__ float*)xp);
  TPipe pipe;
  TBuf<TPosition::VECCALC> sb, db;
  pipe.InitBuffer(sb, 256 * sizeof(float));
  pipe.InitBuffer(db, 256 * sizeof(float));
  LocalTensor<float> s = sb.Get<float>(), d = db.Get<float>();
  Duplicate(s, 1.f, 256);
  DataCopy(d, x, 256);
  if (kSync) {
    SetFlag<HardEvent::MTE2_V>(0);
    WaitFlag<HardEvent::MTE2_V>(0);
  }
  Axpy(d, s, 2.f, 256);
}
ascendc_cpu::LaunchReport RunLoad(void (*kernel)(GM_ADDR)) {
  std::vector<float> x(256, 1.f);
  return ascendc_cpu::Launch({"axpy_race", 1, 196608, ascendc_cpu::Order::kInOrder},
                             {{x.data(), x.size() * 4, "x", ascendc_cpu::GmKind::kInput}}, kernel, x.data());
}
TEST(axpy_dst_loaded_by_mte2_without_a_flag_is_pipe_race) {
  EXPECT_EMU_ERROR(RunLoad(LoadDstThenAxpy<false>), "pipe-race", "axpy_race", 0);
  RunLoad(LoadDstThenAxpy<true>);
}

}  // namespace
