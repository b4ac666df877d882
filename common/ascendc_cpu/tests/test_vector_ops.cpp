// Semantics of the vector arithmetic, reduce and compare/select APIs (count and level-0 forms).
#include <cmath>
#include <vector>

#include "in_block.h"
#include "test_framework.h"

namespace {

using namespace AscendC;
using emu_test::Fill;
using emu_test::InBlock;
using emu_test::Read;

TEST(binary_unary_scalar_ops) {
  InBlock([] {
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 4 * 64 * sizeof(float));
    LocalTensor<float> a = buf.Get<float>(), b = a[64], c = a[128], d = a[192];
    std::vector<float> va, vb;
    for (int i = 0; i < 20; ++i) {
      va.push_back(static_cast<float>(i) - 9.5f);
      vb.push_back(static_cast<float>(i % 5) + 1.f);
    }
    Fill(a, va);
    Fill(b, vb);
    Add(c, a, b, 20);
    Sub(d, c, b, 20);
    for (int i = 0; i < 20; ++i) CHECK_EQ(d.GetValue(i), va[i]);
    Mul(c, a, b, 20);
    Div(c, c, b, 20);  // in place
    for (int i = 0; i < 20; ++i) CHECK_NEAR(c.GetValue(i), va[i], 1e-6);
    Max(c, a, b, 20);
    Min(d, a, b, 20);
    for (int i = 0; i < 20; ++i) {
      CHECK_EQ(c.GetValue(i), std::max(va[i], vb[i]));
      CHECK_EQ(d.GetValue(i), std::min(va[i], vb[i]));
    }
    Relu(c, a, 20);
    Abs(d, a, 20);
    for (int i = 0; i < 20; ++i) {
      CHECK_EQ(c.GetValue(i), std::max(va[i], 0.f));
      CHECK_EQ(d.GetValue(i), std::fabs(va[i]));
    }
    Exp(c, b, 20);
    Sqrt(d, b, 20);
    for (int i = 0; i < 20; ++i) {
      CHECK_NEAR(c.GetValue(i), std::exp(vb[i]), 1e-4);
      CHECK_NEAR(d.GetValue(i), std::sqrt(vb[i]), 1e-6);
    }
    Adds(c, a, 2.5f, 20);
    Muls(d, a, -2.f, 20);
    for (int i = 0; i < 20; ++i) {
      CHECK_EQ(c.GetValue(i), va[i] + 2.5f);
      CHECK_EQ(d.GetValue(i), va[i] * -2.f);
    }
    Maxs(c, a, 0.5f, 20);
    Mins(d, a, 0.5f, 20);
    for (int i = 0; i < 20; ++i) {
      CHECK_EQ(c.GetValue(i), std::max(va[i], 0.5f));
      CHECK_EQ(d.GetValue(i), std::min(va[i], 0.5f));
    }
    Duplicate(c, 7.f, 64);
    for (int i = 0; i < 64; ++i) CHECK_EQ(c.GetValue(i), 7.f);
  });
}

TEST(half_arithmetic_rounds_to_half) {
  InBlock([] {
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 3 * 16 * sizeof(half));
    LocalTensor<half> a = buf.Get<half>(), b = a[16], c = a[32];
    Duplicate(a, static_cast<half>(2048.f), 16);
    Duplicate(b, static_cast<half>(1.f), 16);
    Add(c, a, b, 16);  // 2049 is not a half: ties to even gives 2048
    CHECK_EQ(static_cast<float>(c.GetValue(0)), 2048.f);
    Muls(c, b, static_cast<half>(3.f), 16);
    CHECK_EQ(static_cast<float>(c.GetValue(15)), 3.f);
  });
}

TEST(reduce_sum_max_min_with_index) {
  InBlock([] {
    TPipe pipe;
    TBuf<TPosition::VECCALC> sb, db, wb;
    pipe.InitBuffer(sb, 100 * sizeof(float));
    pipe.InitBuffer(db, 8 * sizeof(float));
    pipe.InitBuffer(wb, 64 * sizeof(float));
    LocalTensor<float> s = sb.Get<float>(), d = db.Get<float>(), w = wb.Get<float>();
    std::vector<float> v(100);
    for (int i = 0; i < 100; ++i) v[i] = static_cast<float>((i * 37) % 101) - 50.f;
    v[71] = 99.f;
    v[88] = 99.f;  // a tie: the first index wins
    v[13] = -77.f;
    Fill(s, v);
    ReduceSum(d, s, w, 100);
    double sum = 0;
    for (float x : v) sum += x;
    CHECK_NEAR(d.GetValue(0), sum, 1e-3);
    ReduceMax(d, s, w, 100, true);
    CHECK_EQ(d.GetValue(0), 99.f);
    CHECK_EQ(d.ReinterpretCast<uint32_t>().GetValue(1), 71u);
    ReduceMin(d, s, w, 100, true);
    CHECK_EQ(d.GetValue(0), -77.f);
    CHECK_EQ(d.ReinterpretCast<uint32_t>().GetValue(1), 13u);
  });
}

TEST(compare_and_select) {
  InBlock([] {
    TPipe pipe;
    TBuf<TPosition::VECCALC> ab, bb, mb, ob;
    pipe.InitBuffer(ab, 64 * sizeof(float));
    pipe.InitBuffer(bb, 64 * sizeof(float));
    pipe.InitBuffer(mb, 32);
    pipe.InitBuffer(ob, 64 * sizeof(float));
    LocalTensor<float> a = ab.Get<float>(), b = bb.Get<float>(), o = ob.Get<float>();
    LocalTensor<uint8_t> m = mb.Get<uint8_t>();
    std::vector<float> va(64), vb(64);
    for (int i = 0; i < 64; ++i) {
      va[i] = static_cast<float>(i % 7);
      vb[i] = 3.f;
    }
    Fill(a, va);
    Fill(b, vb);
    for (CMPMODE mode : {CMPMODE::LT, CMPMODE::GT, CMPMODE::EQ, CMPMODE::LE, CMPMODE::GE, CMPMODE::NE}) {
      Compare(m, a, b, mode, 64);
      for (int i = 0; i < 64; ++i) {
        const bool bit = (m.GetValue(i / 8) >> (i % 8)) & 1;
        const bool want = mode == CMPMODE::LT ? va[i] < 3 : mode == CMPMODE::GT ? va[i] > 3 : mode == CMPMODE::EQ ? va[i] == 3
                        : mode == CMPMODE::LE ? va[i] <= 3 : mode == CMPMODE::GE ? va[i] >= 3 : va[i] != 3;
        CHECK_EQ(bit, want);
      }
    }
    Compares(m, a, 3.f, CMPMODE::GT, 64);
    Select(o, m, a, b, SELMODE::VSEL_TENSOR_TENSOR_MODE, 64);  // max(a, 3)
    for (int i = 0; i < 64; ++i) CHECK_EQ(o.GetValue(i), std::max(va[i], 3.f));
    Select(o, m, a, -1.f, SELMODE::VSEL_TENSOR_SCALAR_MODE, 64);
    for (int i = 0; i < 64; ++i) CHECK_EQ(o.GetValue(i), va[i] > 3 ? va[i] : -1.f);
  });
}

TEST(compare_count_must_fill_whole_repeats) {
  EXPECT_EMU_ERROR(InBlock([] {
                     TPipe pipe;
                     TBuf<TPosition::VECCALC> ab, mb;
                     pipe.InitBuffer(ab, 64 * sizeof(float));
                     pipe.InitBuffer(mb, 32);
                     LocalTensor<float> a = ab.Get<float>();
                     Duplicate(a, 1.f, 64);
                     LocalTensor<uint8_t> m = mb.Get<uint8_t>();
                     Compare(m, a, a, CMPMODE::EQ, 40);
                   }),
                   "api-constraint", "ops", 0);
}

TEST(level0_mask_repeat_and_strides) {
  InBlock([] {
    TPipe pipe;
    TBuf<TPosition::VECCALC> ab, bb, cb;
    pipe.InitBuffer(ab, 2 * 64 * sizeof(float));
    pipe.InitBuffer(bb, 2 * 64 * sizeof(float));
    pipe.InitBuffer(cb, 2 * 64 * sizeof(float));
    LocalTensor<float> a = ab.Get<float>(), b = bb.Get<float>(), c = cb.Get<float>();
    for (uint32_t i = 0; i < 128; ++i) {
      a.SetValue(i, static_cast<float>(i));
      b.SetValue(i, 1000.f);
    }
    Duplicate(c, -1.f, 128);
    // 2 repeats of 64 floats, only the first 10 of each repeat.
    Add(c, a, b, 10, 2, BinaryRepeatParams(1, 1, 1, 8, 8, 8));
    CHECK_EQ(c.GetValue(9), 1009.f);
    CHECK_EQ(c.GetValue(10), -1.f);  // masked out: untouched
    CHECK_EQ(c.GetValue(64 + 3), 1067.f);
    // Bit mask: elements 0 and 63 of one repeat.
    uint64_t bits[2] = {1ull | (1ull << 63), 0};  // the real API takes a non-const uint64_t mask[]
    Muls(c, a, 2.f, bits, 1, UnaryRepeatParams(1, 1, 8, 8));
    CHECK_EQ(c.GetValue(0), 0.f);
    CHECK_EQ(c.GetValue(63), 126.f);
    CHECK_EQ(c.GetValue(1), 1001.f);
    // Block stride 2: the 8 blocks of one repeat are every other DataBlock of the source.
    Duplicate(c, 0.f, 128);
    Exp(c, a, 64, 1, UnaryRepeatParams(1, 2, 8, 16));
    CHECK_NEAR(c.GetValue(8), std::exp(16.f), 1e-2);  // dst block 1 <- src block 2
    // Duplicate level-0 with a repeat stride of one block: repeats overlap.
    Duplicate(c, 5.f, 8, 3, 1, 1);
    CHECK_EQ(c.GetValue(23), 5.f);
    CHECK_EQ(c.GetValue(24), std::exp(48.f));  // dst block 3 <- src block 6
  });
}

TEST(level0_reads_only_masked_elements) {
  InBlock([] {
    TPipe pipe;
    TBuf<TPosition::VECCALC> ab, cb;
    pipe.InitBuffer(ab, 64 * sizeof(float));
    pipe.InitBuffer(cb, 64 * sizeof(float));
    LocalTensor<float> a = ab.Get<float>(), c = cb.Get<float>();
    for (uint32_t i = 0; i < 16; ++i) a.SetValue(i, 1.f);  // the rest is never written
    Relu(c, a, 16, 1, UnaryRepeatParams());
    CHECK_EQ(c.GetValue(15), 1.f);
  });
  EXPECT_EMU_ERROR(InBlock([] {
                     TPipe pipe;
                     TBuf<TPosition::VECCALC> ab, cb;
                     pipe.InitBuffer(ab, 64 * sizeof(float));
                     pipe.InitBuffer(cb, 64 * sizeof(float));
                     LocalTensor<float> a = ab.Get<float>(), c = cb.Get<float>();
                     for (uint32_t i = 0; i < 16; ++i) a.SetValue(i, 1.f);
                     Relu(c, a, 17, 1, UnaryRepeatParams());
                   }),
                   "ub-uninitialized-read", "ops", 0);
}

TEST(vector_ops_are_counted) {
  const auto r = InBlock([] {
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 64 * sizeof(float));
    LocalTensor<float> a = buf.Get<float>();
    Duplicate(a, 1.f, 64);
    Adds(a, a, 1.f, 64);
    Exp(a, a, 64);
  });
  CHECK_EQ(r.totals.vector_ops, 3u);
  CHECK_EQ(r.blocks[0].ub_high_water, 256u);
}

}  // namespace
