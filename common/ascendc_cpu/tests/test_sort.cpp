// Sort32 / Sort / MrgSort / Extract in the Atlas A2 (score, index) layout, and TopK.
#include <cmath>
#include <vector>

#include "in_block.h"
#include "test_framework.h"

namespace {

using namespace AscendC;
using emu_test::Fill;
using emu_test::InBlock;
using emu_test::Read;

TEST(sort32_sort_extract_a2_layout) {
  InBlock([] {
    TPipe pipe;
    TBuf<TPosition::VECCALC> sb, ib, db, tb, vb, xb;
    pipe.InitBuffer(sb, 64 * sizeof(float));
    pipe.InitBuffer(ib, 64 * sizeof(uint32_t));
    pipe.InitBuffer(db, 64 * 8);
    pipe.InitBuffer(tb, 64 * 8);
    pipe.InitBuffer(vb, 64 * sizeof(float));
    pipe.InitBuffer(xb, 64 * sizeof(uint32_t));
    LocalTensor<float> s = sb.Get<float>(), d = db.Get<float>(), t = tb.Get<float>(), v = vb.Get<float>();
    LocalTensor<uint32_t> ix = ib.Get<uint32_t>(), ox = xb.Get<uint32_t>();
    std::vector<float> scores(64);
    std::vector<uint32_t> idx(64);
    for (uint32_t i = 0; i < 64; ++i) {
      scores[i] = static_cast<float>((i * 29) % 64);
      idx[i] = 1000 + i;
    }
    scores[5] = scores[9] = 100.f;  // tie inside the first 32: position 5 first
    Fill(s, scores);
    Fill(ix, idx);
    Sort32(d, s, ix, 2);
    // Structure layout: score in bytes 0-3, index in bytes 4-7.
    CHECK_EQ(d.GetValue(0), 100.f);
    CHECK_EQ(d.ReinterpretCast<uint32_t>().GetValue(1), 1005u);
    CHECK_EQ(d.ReinterpretCast<uint32_t>().GetValue(3), 1009u);
    for (uint32_t i = 1; i < 32; ++i) CHECK(d.GetValue(2 * i) <= d.GetValue(2 * (i - 1)));
    float second_max = 0.f;
    for (uint32_t i = 32; i < 64; ++i) second_max = std::max(second_max, scores[i]);
    CHECK_EQ(d.GetValue(64), second_max);  // the second run is sorted on its own
    Sort<float, true>(d, s, ix, t, 2);
    Extract(v, ox, d, 2);
    for (uint32_t i = 1; i < 64; ++i) CHECK(v.GetValue(i) <= v.GetValue(i - 1));
    CHECK_EQ(ox.GetValue(0), 1005u);
    CHECK_EQ(GetSortLen<float>(64), 128u);
    CHECK_EQ(GetSortLen<half>(64), 256u);
  });
}

TEST(sort_half_layout_reserves_bytes_2_3) {
  InBlock([] {
    TPipe pipe;
    TBuf<TPosition::VECCALC> sb, ib, db;
    pipe.InitBuffer(sb, 32 * sizeof(half));
    pipe.InitBuffer(ib, 32 * sizeof(uint32_t));
    pipe.InitBuffer(db, 32 * 8);
    LocalTensor<half> s = sb.Get<half>(), d = db.Get<half>();
    LocalTensor<uint32_t> ix = ib.Get<uint32_t>();
    for (uint32_t i = 0; i < 32; ++i) {
      s.SetValue(i, static_cast<half>(static_cast<float>(i)));
      ix.SetValue(i, i);
    }
    Sort32(d, s, ix, 1);
    CHECK_EQ(static_cast<float>(d.GetValue(0)), 31.f);
    CHECK_EQ(d.ReinterpretCast<uint32_t>().GetValue(1), 31u);
    CHECK_EQ(static_cast<float>(d.GetValue(4)), 30.f);  // next structure: 8 bytes = 4 halves on
  });
}

TEST(mrgsort_merges_and_suspends) {
  InBlock([] {
    TPipe pipe;
    TBuf<TPosition::VECCALC> lb, db, sb, ib;
    pipe.InitBuffer(lb, 4 * 32 * 8);
    pipe.InitBuffer(db, 4 * 32 * 8);
    pipe.InitBuffer(sb, 128 * sizeof(float));
    pipe.InitBuffer(ib, 128 * sizeof(uint32_t));
    LocalTensor<float> lists = lb.Get<float>(), d = db.Get<float>(), s = sb.Get<float>();
    LocalTensor<uint32_t> ix = ib.Get<uint32_t>();
    for (uint32_t i = 0; i < 128; ++i) {
      s.SetValue(i, static_cast<float>((i * 53) % 128));
      ix.SetValue(i, i);
    }
    Sort32(lists, s, ix, 4);  // 4 sorted runs of 32, contiguous
    const uint16_t counts[4] = {32, 32, 32, 32};
    uint32_t sorted[4] = {};
    MrgSortSrcList<float> src(lists, lists[64], lists[128], lists[192]);
    MrgSort<float, false>(d, src, counts, sorted, 0b1111, 1);
    for (uint32_t i = 0; i < 128; ++i) CHECK_EQ(d.GetValue(2 * i), 127.f - static_cast<float>(i));
    CHECK_EQ(sorted[0] + sorted[1] + sorted[2] + sorted[3], 128u);
    // Two lists, the first much shorter: suspension stops when it runs out.
    const uint16_t counts2[4] = {2, 32, 0, 0};
    MrgSortSrcList<float> two(lists, lists[64], lists, lists);  // the real struct has no 2-list constructor
    MrgSort<float, true>(d, two, counts2, sorted, 0b11, 1);
    CHECK_EQ(sorted[0], 2u);
    CHECK(sorted[1] < 32u);
  });
}

TEST(topk_largest_smallest_finish_and_index) {
  InBlock([] {
    TPipe pipe;
    TBuf<TPosition::VECCALC> sb, vb, ib, fb, xb;
    pipe.InitBuffer(sb, 2 * 64 * sizeof(float));
    pipe.InitBuffer(vb, 2 * 8 * sizeof(float));
    pipe.InitBuffer(ib, 2 * 8 * sizeof(int32_t));
    pipe.InitBuffer(fb, 32);
    pipe.InitBuffer(xb, 64 * sizeof(int32_t));
    LocalTensor<float> s = sb.Get<float>(), v = vb.Get<float>();
    LocalTensor<int32_t> ix = ib.Get<int32_t>(), six = xb.Get<int32_t>();
    LocalTensor<bool> fin = fb.Get<bool>();
    for (uint32_t r = 0; r < 2; ++r) {
      for (uint32_t i = 0; i < 64; ++i) s.SetValue(r * 64 + i, i < 60 ? static_cast<float>((i * 7 + r) % 60) : -1e30f);
    }
    s.SetValue(10, 59.f);  // row 0: 59 at 10 and at its natural position (i*7 % 60 == 59 -> i = 17)
    fin.SetValue(0, false);
    fin.SetValue(1, true);
    for (uint32_t i = 0; i < 64; ++i) six.SetValue(i, static_cast<int32_t>(500 + i));
    TopKInfo info{2, 64, 60};
    TopkTiling tiling;
    TopK<float, false, false>(v, ix, s, six, fin, 3, tiling, info, true);
    CHECK_EQ(v.GetValue(0), 59.f);
    CHECK_EQ(ix.GetValue(0), 10);  // tie: lower position first
    CHECK_EQ(ix.GetValue(1), 17);
    CHECK_EQ(v.GetValue(2), 58.f);
    TopK<float, true, true>(v, ix, s, six, fin, 3, tiling, info, true);
    CHECK_EQ(ix.GetValue(0), 510);
    CHECK_EQ(ix.GetValue(8), 60);  // finished row: every index is n
    TopK<float, false, false>(v, ix, s, six, fin, 2, tiling, info, false);
    CHECK_EQ(v.GetValue(0), -1e30f);  // padding takes part: fill it with a value that loses
  });
}

}  // namespace
