// Cast with every documented RoundMode, float <-> int32 / half / bfloat16_t.
#include <cmath>
#include <vector>

#include "in_block.h"
#include "test_framework.h"

namespace {

using namespace AscendC;
using emu_test::Fill;
using emu_test::InBlock;
using emu_test::Read;

TEST(cast_round_modes_float_to_int32) {
  InBlock([] {
    TPipe pipe;
    TBuf<TPosition::VECCALC> fb, ib;
    pipe.InitBuffer(fb, 8 * sizeof(float));
    pipe.InitBuffer(ib, 8 * sizeof(int32_t));
    LocalTensor<float> f = fb.Get<float>();
    LocalTensor<int32_t> i = ib.Get<int32_t>();
    Fill(f, std::vector<float>{2.5f, 3.5f, -2.5f, -0.7f, 1.2f, 3e9f, -3e9f, NAN});
    const std::vector<std::pair<RoundMode, std::vector<int32_t>>> expect = {
        {RoundMode::CAST_RINT, {2, 4, -2, -1, 1, INT32_MAX, INT32_MIN, 0}},
        {RoundMode::CAST_ROUND, {3, 4, -3, -1, 1, INT32_MAX, INT32_MIN, 0}},
        {RoundMode::CAST_FLOOR, {2, 3, -3, -1, 1, INT32_MAX, INT32_MIN, 0}},
        {RoundMode::CAST_CEIL, {3, 4, -2, 0, 2, INT32_MAX, INT32_MIN, 0}},
        {RoundMode::CAST_TRUNC, {2, 3, -2, 0, 1, INT32_MAX, INT32_MIN, 0}},
    };
    for (const auto& [mode, want] : expect) {
      Cast(i, f, mode, 8);
      CHECK(Read(i, 8) == want);
    }
  });
}

TEST(cast_round_modes_float_to_half_and_back) {
  InBlock([] {
    TPipe pipe;
    TBuf<TPosition::VECCALC> fb, hb;
    pipe.InitBuffer(fb, 8 * sizeof(float));
    pipe.InitBuffer(hb, 16 * sizeof(half));
    LocalTensor<float> f = fb.Get<float>();
    LocalTensor<half> h = hb.Get<half>();
    // 1 + 2^-11 lies halfway between the halves 1 and 1 + 2^-10; 1 + 3*2^-12 above halfway.
    const float tie = 1.f + std::ldexp(1.f, -11), above = 1.f + 3 * std::ldexp(1.f, -12);
    Fill(f, std::vector<float>{tie, -tie, above, 1e6f, -1e6f, 1.f, 0.1f, -0.f});
    auto cast = [&](RoundMode m) {
      Cast(h, f, m, 8);
      std::vector<float> r;
      for (half v : Read(h, 8)) r.push_back(static_cast<float>(v));
      return r;
    };
    const float up = 1.f + std::ldexp(1.f, -10);
    std::vector<float> r = cast(RoundMode::CAST_RINT);
    CHECK_EQ(r[0], 1.f);
    CHECK_EQ(r[1], -1.f);
    CHECK_EQ(r[2], up);
    CHECK(std::isinf(r[3]) && r[3] > 0);
    CHECK_EQ(r[5], 1.f);
    CHECK(std::signbit(r[7]));
    CHECK(cast(RoundMode::CAST_NONE) == r);
    r = cast(RoundMode::CAST_ROUND);
    CHECK_EQ(r[0], up);
    CHECK_EQ(r[1], -up);
    r = cast(RoundMode::CAST_TRUNC);
    CHECK_EQ(r[2], 1.f);
    CHECK_EQ(r[3], 65504.f);
    CHECK_EQ(r[4], -65504.f);
    r = cast(RoundMode::CAST_FLOOR);
    CHECK_EQ(r[1], -up);
    CHECK_EQ(r[3], 65504.f);
    CHECK(std::isinf(r[4]));
    r = cast(RoundMode::CAST_CEIL);
    CHECK_EQ(r[0], up);
    CHECK(std::isinf(r[3]));
    r = cast(RoundMode::CAST_ODD);
    CHECK_EQ(r[0], up);  // inexact: the neighbour with an odd last bit
    CHECK_EQ(r[5], 1.f);  // exact stays
    // half -> float is exact.
    Cast(f, h, RoundMode::CAST_NONE, 8);
    CHECK_EQ(f.GetValue(0), up);
  });
}

TEST(cast_float_to_bfloat16) {
  InBlock([] {
    TPipe pipe;
    TBuf<TPosition::VECCALC> fb, bb;
    pipe.InitBuffer(fb, 8 * sizeof(float));
    pipe.InitBuffer(bb, 16 * sizeof(bfloat16_t));
    LocalTensor<float> f = fb.Get<float>();
    LocalTensor<bfloat16_t> b = bb.Get<bfloat16_t>();
    const float tie = 1.f + std::ldexp(1.f, -8);  // halfway between 1 and 1 + 2^-7
    Fill(f, std::vector<float>{tie, 3.f, -tie, 0.f, 0.f, 0.f, 0.f, 0.f});
    Cast(b, f, RoundMode::CAST_RINT, 8);
    CHECK_EQ(static_cast<float>(b.GetValue(0)), 1.f);
    CHECK_EQ(static_cast<float>(b.GetValue(1)), 3.f);
    Cast(b, f, RoundMode::CAST_ROUND, 8);
    CHECK_EQ(static_cast<float>(b.GetValue(2)), -(1.f + std::ldexp(1.f, -7)));
  });
}

TEST(cast_float_to_float_rounds_to_an_integral_value) {
  // A2's vconv_f322f32{r,a,f,c,z}: not a no-op (asc-devkit's cos floors with it).
  InBlock([] {
    TPipe pipe;
    TBuf<TPosition::VECCALC> ab, bb;
    pipe.InitBuffer(ab, 8 * sizeof(float));
    pipe.InitBuffer(bb, 8 * sizeof(float));
    LocalTensor<float> a = ab.Get<float>();
    LocalTensor<float> b = bb.Get<float>();
    Fill(a, std::vector<float>{2.5f, 3.5f, -2.5f, -0.3f, 86.51f, 1e9f + 64, INFINITY, 0.7f});
    const std::vector<std::pair<RoundMode, std::vector<float>>> expect = {
        {RoundMode::CAST_RINT, {2, 4, -2, -0.f, 87, 1e9f + 64, INFINITY, 1}},
        {RoundMode::CAST_ROUND, {3, 4, -3, -0.f, 87, 1e9f + 64, INFINITY, 1}},
        {RoundMode::CAST_FLOOR, {2, 3, -3, -1, 86, 1e9f + 64, INFINITY, 0}},
        {RoundMode::CAST_CEIL, {3, 4, -2, -0.f, 87, 1e9f + 64, INFINITY, 1}},
        {RoundMode::CAST_TRUNC, {2, 3, -2, -0.f, 86, 1e9f + 64, INFINITY, 0}},
    };
    for (const auto& [mode, want] : expect) {
      Cast(b, a, mode, 8);
      CHECK(Read(b, 8) == want);
      CHECK(std::signbit(b.GetValue(3)));  // -0.3: -0 or -1, negative either way (== takes -0 for 0)
    }
  });
}

}  // namespace
