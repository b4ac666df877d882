// The real API's limits that are checked at run time (issue 14 item 4): each broken call is
// caught beside a correct twin that passes. Compile-time rejections (parameter-struct shapes,
// scalar deduction, Atlas A2 dtypes, Cast pairs) are in compile_fail.cpp.
#include <cstring>
#include <vector>

#include "in_block.h"
#include "test_framework.h"

namespace {

using namespace AscendC;
using ascendc_cpu::GmKind;
using emu_test::Fill;
using emu_test::InBlock;
using emu_test::InCubeBlock;

// ---- repeatTime <= 255 (Sort32.md, Sort.md, Extract.md) -----------------------------------
void ExtractRepeat(int32_t repeat) {
  TPipe pipe;
  TBuf<TPosition::VECCALC> sb, vb, ib;
  pipe.InitBuffer(sb, 256 * 32 * 8);
  pipe.InitBuffer(vb, 256 * 32 * sizeof(float));
  pipe.InitBuffer(ib, 256 * 32 * sizeof(uint32_t));
  LocalTensor<float> sorted = sb.Get<float>();
  Duplicate(sorted, 0.f, 256 * 32 * 2);
  Extract(vb.Get<float>(), ib.Get<uint32_t>(), sorted, repeat);
}

TEST(extract_repeat_255_passes) {
  InBlock([] { ExtractRepeat(255); });
}
TEST(extract_repeat_256_is_api_constraint) {
  EXPECT_EMU_ERROR(InBlock([] { ExtractRepeat(256); }), "api-constraint", "ops", 0);
}
TEST(sort32_repeat_256_is_api_constraint) {
  EXPECT_EMU_ERROR(InBlock([] {
                     TPipe pipe;
                     TBuf<TPosition::VECCALC> db, sb, ib;
                     pipe.InitBuffer(db, 256 * 32 * 8);
                     pipe.InitBuffer(sb, 256 * 32 * 4);
                     pipe.InitBuffer(ib, 256 * 32 * 4);
                     Duplicate(sb.Get<float>(), 0.f, 256 * 32);
                     Duplicate(ib.Get<uint32_t>(), 0u, 256 * 32);
                     Sort32(db.Get<float>(), sb.Get<float>(), ib.Get<uint32_t>(), 256);
                   }),
                   "api-constraint", "ops", 0);
}

// ---- MrgSort: elementCountList[i] <= 4095 (MrgSort-93.md) ---------------------------------
void MergeTwo(uint16_t first) {
  TPipe pipe;
  TBuf<TPosition::VECCALC> ab, bb, db;
  pipe.InitBuffer(ab, 4096 * 8);
  pipe.InitBuffer(bb, 32 * 8);
  pipe.InitBuffer(db, 4128 * 8);
  LocalTensor<float> a = ab.Get<float>(), b = bb.Get<float>();
  Duplicate(a, 0.f, 4096 * 2);
  Duplicate(b, 0.f, 32 * 2);
  const uint16_t counts[4] = {first, 32, 0, 0};
  uint32_t sorted[4] = {};
  MrgSort<float>(db.Get<float>(), MrgSortSrcList<float>(a, b, a, a), counts, sorted, 0b11, 1);
}
TEST(mrgsort_list_of_4095_passes) {
  InBlock([] { MergeTwo(4095); });
}
TEST(mrgsort_list_of_4096_is_api_constraint) {
  EXPECT_EMU_ERROR(InBlock([] { MergeTwo(4096); }), "api-constraint", "ops", 0);
}

// ---- Mmad m = 1 is GEMV: L0A is read as ND (Mmad.md constraints, GEMV.md) -----------------
// a [1, 32] half, b [32, 16] half, c = a . b. The A tile is prepared either as ND (32
// contiguous halves) or as the Zz fractals of a 16-row padded tile (row 0 real, rows 1..15
// zero), and Mmad is called with m = 1 or with m = 16.
constexpr uint32_t kK = 32, kN = 16;
float AVal(uint32_t k) { return static_cast<float>(k % 7) - 3.f; }
float BVal(uint32_t k, uint32_t n) { return static_cast<float>((k + 2 * n) % 5) - 2.f; }

float GemvRow0(bool zz_layout, uint16_t m, uint32_t col) {
  float out = 0.f;
  InCubeBlock([&] {
    TPipe pipe;
    TBuf<TPosition::A2> ab;
    TBuf<TPosition::B2> bb;
    TBuf<TPosition::CO1> cb;
    pipe.InitBuffer(ab, 16 * kK * sizeof(half));
    pipe.InitBuffer(bb, kK * kN * sizeof(half));
    pipe.InitBuffer(cb, 16 * kN * sizeof(float));
    LocalTensor<half> a = ab.Get<half>(), b = bb.Get<half>();
    for (uint32_t i = 0; i < 16 * kK; ++i) a.SetValue(i, static_cast<half>(0.f));
    for (uint32_t k = 0; k < kK; ++k) {
      // Zz: fractal (row block 0, k block k/16), row 0 inside it; ND: element k.
      const uint32_t off = zz_layout ? (k / 16) * 256 + k % 16 : k;
      a.SetValue(off, static_cast<half>(AVal(k)));
      for (uint32_t n = 0; n < kN; ++n) b.SetValue((k / 16) * 256 + n * 16 + k % 16, static_cast<half>(BVal(k, n)));
    }
    LocalTensor<float> c = cb.Get<float>();
    MmadParams p;
    p.m = m;
    p.n = kN;
    p.k = kK;
    PipeBarrier<PIPE_ALL>();  // the scalar fills before the cube reads (there is no S_M event)
    Mmad(c, a, b, p);
    PipeBarrier<PIPE_ALL>();  // the cube's result before the scalar reads
    out = c.GetValue(col);  // row 0, column col of the one 16x16 C fractal
  });
  return out;
}
float Row0Reference(uint32_t col) {
  float s = 0.f;
  for (uint32_t k = 0; k < kK; ++k) s += AVal(k) * BVal(k, col);
  return s;
}

TEST(mmad_m16_on_a_zz_tile_is_correct) {
  for (uint32_t n = 0; n < kN; ++n) CHECK_EQ(GemvRow0(true, 16, n), Row0Reference(n));
}
TEST(mmad_m1_on_an_nd_row_is_correct_gemv) {
  for (uint32_t n = 0; n < kN; ++n) CHECK_EQ(GemvRow0(false, 1, n), Row0Reference(n));
}
TEST(mmad_m1_on_a_zz_tile_reads_it_as_nd_and_is_wrong) {
  bool differs = false;
  for (uint32_t n = 0; n < kN; ++n) differs = differs || GemvRow0(true, 1, n) != Row0Reference(n);
  CHECK(differs);
}
TEST(mmad_m_past_4095_is_api_constraint) {
  EXPECT_EMU_ERROR(InCubeBlock([] {
                     TPipe pipe;
                     TBuf<TPosition::A2> ab;
                     TBuf<TPosition::B2> bb;
                     TBuf<TPosition::CO1> cb;
                     pipe.InitBuffer(ab, 512);
                     pipe.InitBuffer(bb, 512);
                     pipe.InitBuffer(cb, 1024);
                     MmadParams p;
                     p.m = 4096;
                     p.n = 16;
                     p.k = 16;
                     Mmad(cb.Get<float>(), ab.Get<half>(), bb.Get<half>(), p);
                   }),
                   "api-constraint", "ops", 0);
}

// ---- DataCopy GM address aligned to sizeof(T); DataCopyPad with nothing to move is a NOP ---
std::vector<uint8_t> g_gm(256, 1);
uint32_t g_gm_offset = 0;
void CopyAt(GM_ADDR x) {
  GlobalTensor<float> g;
  g.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(x + g_gm_offset));
  TPipe pipe;
  TBuf<TPosition::VECCALC> ub;
  pipe.InitBuffer(ub, 64);
  DataCopy(ub.Get<float>(), g, 8);
}
ascendc_cpu::LaunchReport CopyFrom(uint32_t offset) {
  g_gm_offset = offset;
  return ascendc_cpu::Launch({"copy_at", 1, 196608}, {{g_gm.data(), g_gm.size(), "x", GmKind::kInput}}, CopyAt,
                             g_gm.data());
}
TEST(datacopy_from_an_element_aligned_gm_address_passes) { CopyFrom(4); }
TEST(datacopy_from_a_misaligned_gm_address_is_datacopy_unaligned) {
  EXPECT_EMU_ERROR(CopyFrom(2), "datacopy-unaligned", "copy_at", 0);
}

void PadCount(GM_ADDR x) {
  GlobalTensor<float> g;
  g.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(x));
  TPipe pipe;
  TBuf<TPosition::VECCALC> ub;
  pipe.InitBuffer(ub, 64);
  LocalTensor<float> t = ub.Get<float>();
  DataCopyPad(t, g, DataCopyExtParams(0, 32, 0, 0, 0), DataCopyPadExtParams<float>(false, 0, 0, 0.f));  // NOP
  DataCopyPad(t, g, DataCopyExtParams(1, 0, 0, 0, 0), DataCopyPadExtParams<float>(false, 0, 0, 0.f));   // NOP
  DataCopyPad(g, t, DataCopyExtParams(0, 32, 0, 0, 0));                                                  // NOP
}
TEST(datacopypad_with_block_count_or_len_0_is_a_nop) {
  const auto rep =
      ascendc_cpu::Launch({"pad_nop", 1, 196608}, {{g_gm.data(), g_gm.size(), "x", GmKind::kInput}}, PadCount, g_gm.data());
  CHECK_EQ(rep.totals.gm_read_bytes, 0u);
  CHECK_EQ(rep.totals.gm_write_bytes, 0u);
}

// ---- Cast round modes per pair; dtypes checked at run time by the real implementation -----
void CastToBf16(RoundMode mode) {
  TPipe pipe;
  TBuf<TPosition::VECCALC> fb, bb;
  pipe.InitBuffer(fb, 64);
  pipe.InitBuffer(bb, 64);
  LocalTensor<float> f = fb.Get<float>();
  Duplicate(f, 1.5f, 16);
  Cast(bb.Get<bfloat16_t>(), f, mode, 16);
}
TEST(cast_float_to_bf16_with_cast_rint_passes) {
  InBlock([] { CastToBf16(RoundMode::CAST_RINT); });
}
TEST(cast_float_to_bf16_with_cast_none_is_api_constraint) {
  EXPECT_EMU_ERROR(InBlock([] { CastToBf16(RoundMode::CAST_NONE); }), "api-constraint", "ops", 0);
}

template <class T>
void AndCount() {
  TPipe pipe;
  TBuf<TPosition::VECCALC> xb;
  pipe.InitBuffer(xb, 256);
  LocalTensor<T> x = xb.Get<T>();
  Duplicate(x, T(3), 256 / sizeof(T));
  And(x, x, x, 256 / sizeof(T));
}
TEST(and_count_form_on_int16_passes) {
  InBlock([] { AndCount<int16_t>(); });
}
TEST(and_count_form_on_int32_processes_half_and_is_api_constraint) {
  EXPECT_EMU_ERROR(InBlock([] { AndCount<int32_t>(); }), "api-constraint", "ops", 0);
}

TEST(reduce_max_of_int32_is_api_constraint_and_of_float_passes) {
  auto reduce = [](auto zero) {
    using T = decltype(zero);
    TPipe pipe;
    TBuf<TPosition::VECCALC> sb, db, wb;
    pipe.InitBuffer(sb, 256);
    pipe.InitBuffer(db, 32);
    pipe.InitBuffer(wb, 256);
    Duplicate(sb.Get<T>(), T(1), 256 / sizeof(T));
    ReduceMax(db.Get<T>(), sb.Get<T>(), wb.Get<T>(), 256 / sizeof(T));
  };
  InBlock([&] { reduce(0.f); });
  EXPECT_EMU_ERROR(InBlock([&] { reduce(int32_t{0}); }), "api-constraint", "ops", 0);
}

TEST(compare_gt_of_int32_is_api_constraint_eq_passes) {
  auto compare = [](CMPMODE mode) {
    TPipe pipe;
    TBuf<TPosition::VECCALC> sb, mb;
    pipe.InitBuffer(sb, 256);
    pipe.InitBuffer(mb, 32);
    LocalTensor<int32_t> s = sb.Get<int32_t>();
    Duplicate(s, 1, 64);
    Compare(mb.Get<uint8_t>(), s, s, mode, 64);
  };
  InBlock([&] { compare(CMPMODE::EQ); });
  EXPECT_EMU_ERROR(InBlock([&] { compare(CMPMODE::GT); }), "api-constraint", "ops", 0);
}

// ---- ReduceMax / ReduceMin work size (asc-tools kernel_vec_reduce_check.cpp CheckWorkTensorOffset)
TEST(reduce_work_elems_follow_the_cpu_debug_check) {
  using ascendc_cpu::detail::ReduceWorkElems;
  CHECK_EQ(ReduceWorkElems(100, 4, false), 2u);          // one repeat (count < 64)
  CHECK_EQ(ReduceWorkElems(100, 4, true), 2u);
  CHECK_EQ(ReduceWorkElems(65408, 2, false), 1022u);     // ReduceMax.md: 511 repeats * 2
  CHECK_EQ(ReduceWorkElems(8320, 2, true), 162u);        // 65 repeats: 144 + 16 + 2
  CHECK_EQ(ReduceWorkElems(32640, 2, true), 530u);       // 255 repeats: 512 + 16 + 2
  CHECK_EQ(ReduceWorkElems(512, 2, true), 18u);          // 4 repeats: round 2 gives the pair
  CHECK_EQ(ReduceWorkElems(8320, 4, true), 282u);        // 130 repeats of float
}
// count 4096 floats = 64 repeats: 128 work floats without the index, 138 with it.
void ReduceWithWork(bool min, bool cal_index, uint32_t work_bytes) {
  TPipe pipe;
  TBuf<TPosition::VECCALC> sb, db, wb;
  pipe.InitBuffer(sb, 4096 * sizeof(float));
  pipe.InitBuffer(db, 32);
  pipe.InitBuffer(wb, work_bytes);
  Duplicate(sb.Get<float>(), 1.f, 4096);
  if (min) {
    ReduceMin(db.Get<float>(), sb.Get<float>(), wb.Get<float>(), 4096, cal_index);
  } else {
    ReduceMax(db.Get<float>(), sb.Get<float>(), wb.Get<float>(), 4096, cal_index);
  }
}
TEST(reduce_max_work_of_2_per_repeat_passes_one_block_less_is_api_constraint) {
  InBlock([] { ReduceWithWork(false, false, 128 * 4); });
  EXPECT_EMU_ERROR(InBlock([] { ReduceWithWork(false, false, 120 * 4); }), "api-constraint", "ops", 0);
}
TEST(reduce_min_with_index_needs_the_later_rounds_too) {
  InBlock([] { ReduceWithWork(true, true, 144 * 4); });
  EXPECT_EMU_ERROR(InBlock([] { ReduceWithWork(true, true, 136 * 4); }), "api-constraint", "ops", 0);
}
TEST(reduce_max_leaves_garbage_in_work_but_work_may_be_src_or_dst) {
  InBlock([] {
    TPipe pipe;
    TBuf<TPosition::VECCALC> sb, db, wb;
    pipe.InitBuffer(sb, 4096 * sizeof(float));
    pipe.InitBuffer(db, 32);
    pipe.InitBuffer(wb, 256 * sizeof(float));
    LocalTensor<float> s = sb.Get<float>(), d = db.Get<float>(), w = wb.Get<float>();
    Duplicate(s, 1.f, 4096);
    s.SetValue(3000, 7.f);
    Duplicate(w, 5.f, 256);
    ReduceMax(d, s, w, 4096);
    CHECK_EQ(d.GetValue(0), 7.f);
    // The broken twin: a kernel that reads its work buffer afterwards reads garbage.
    uint32_t bits = 0;
    const float w0 = w.GetValue(0);
    std::memcpy(&bits, &w0, 4);
    CHECK_EQ(bits, 0x7F7F7F7Fu);
    CHECK(w.GetValue(127) != 5.f);
    CHECK_EQ(w.GetValue(128), 5.f);  // past the 64 pairs: untouched
    ReduceMax(w, s, w, 4096, true);  // dst inside work: the result is written last
    CHECK_EQ(w.GetValue(0), 7.f);
    CHECK_EQ(w.ReinterpretCast<uint32_t>().GetValue(1), 3000u);
    ReduceMin(d, s, s, 4096);  // work = src (ReduceMax.md / ReduceMin.md)
    CHECK_EQ(d.GetValue(0), 1.f);
  });
}
TEST(reduce_sum_count_form_does_not_use_work) {
  InBlock([] {
    TPipe pipe;
    TBuf<TPosition::VECCALC> sb, db, wb;
    pipe.InitBuffer(sb, 4096 * sizeof(float));
    pipe.InitBuffer(db, 32);
    pipe.InitBuffer(wb, 32);
    LocalTensor<float> w = wb.Get<float>();
    Duplicate(sb.Get<float>(), 1.f, 4096);
    Duplicate(w, 5.f, 8);
    ReduceSum(db.Get<float>(), sb.Get<float>(), w, 4096);
    CHECK_EQ(db.Get<float>().GetValue(0), 4096.f);
    CHECK_EQ(w.GetValue(0), 5.f);
  });
}

// ---- DataCopyPad's MOV_PAD_VAL register (dav_c220 DataCopyPadGm2UBImpl, SetPadValue) -------
std::vector<float> g_pad_gm(64, 2.f);
std::vector<float> g_pad_seen;
void PadRegister(GM_ADDR x) {
  GlobalTensor<float> g;
  g.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(x));
  TPipe pipe;
  TBuf<TPosition::VECCALC> ub;
  pipe.InitBuffer(ub, 128);
  LocalTensor<float> t = ub.Get<float>();
  g_pad_seen.clear();
  const auto to_scalar = [] {
    SetFlag<HardEvent::MTE2_S>(0);
    WaitFlag<HardEvent::MTE2_S>(0);
  };
  const auto to_mte2 = [] {
    SetFlag<HardEvent::S_MTE2>(0);
    WaitFlag<HardEvent::S_MTE2>(0);
  };
  // 3 floats, 1 left and 2 right of padding per copy: [pad][x x x][pad pad][dummy x2]
  const DataCopyExtParams p(1, 12, 0, 0, 0);
  SetPadValue(9.f);
  DataCopyPad(t, g, p, DataCopyPadExtParams<float>(false, 1, 2, 0.f));
  to_scalar();
  g_pad_seen.push_back(t.GetValue(0));  // 9: SetPadValue's
  to_mte2();
  DataCopyPad(t, g, p, DataCopyPadExtParams<float>(true, 1, 2, 4.f));
  to_scalar();
  g_pad_seen.push_back(t.GetValue(4));  // 4: the copy's own value
  g_pad_seen.push_back(t.GetValue(7));  // 4: the dummy up to 32 bytes too (DataCopyPad.md)
  to_mte2();
  DataCopyPad(t, g, p, DataCopyPadExtParams<float>(false, 1, 2, 0.f));
  to_scalar();
  g_pad_seen.push_back(t.GetValue(5));  // 4: the register still holds it, not SetPadValue's 9
  to_mte2();
  DataCopyPad(t, g, DataCopyParams(1, 12, 0, 0), DataCopyPadParams(true, 1, 0, 0x3F800000u));
  to_scalar();
  g_pad_seen.push_back(t.GetValue(0));  // 1.0f: the uint64_t's bits, not a conversion
  g_pad_seen.push_back(t.GetValue(1));  // the data
  g_pad_seen.push_back(t.GetValue(7));  // 1.0f: the dummy
  to_mte2();
  DataCopyPad(t, g, p, DataCopyPadExtParams<float>(true, 0, 0, 4.f));
  to_scalar();
  uint32_t bits = 0;
  const float dummy = t.GetValue(3);  // no padding: the dummy is garbage (the doc: x[0])
  std::memcpy(&bits, &dummy, 4);
  g_pad_seen.push_back(static_cast<float>(bits == 0x7F7F7F7Fu));
}
TEST(datacopypad_is_pad_overwrites_the_pad_register_set_pad_value_set) {
  ascendc_cpu::Launch({"pad_reg", 1, 196608},
                      {{g_pad_gm.data(), g_pad_gm.size() * sizeof(float), "x", GmKind::kInput}}, PadRegister,
                      g_pad_gm.data());
  CHECK_EQ(g_pad_seen.size(), 8u);
  CHECK_EQ(g_pad_seen[0], 9.f);
  CHECK_EQ(g_pad_seen[1], 4.f);
  CHECK_EQ(g_pad_seen[2], 4.f);
  CHECK_EQ(g_pad_seen[3], 4.f);
  CHECK_EQ(g_pad_seen[4], 1.f);
  CHECK_EQ(g_pad_seen[5], 2.f);
  CHECK_EQ(g_pad_seen[6], 1.f);
  CHECK_EQ(g_pad_seen[7], 1.f);
}

// ---- DataCopyPad moves between GM and UB only: on dav_c220 its GM -> L1 and L1 -> GM forms call
// ReportNotSupport (asc-devkit impl/basic_api/dav_c220/kernel_operator_data_copy_impl.h) -----
std::vector<uint8_t> g_l1_gm(256, 1);
int g_l1_case = 0;
void PadL1(GM_ADDR x) {
  GlobalTensor<float> g;
  g.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(x));
  TPipe pipe;
  TBuf<TPosition::A1> l1;
  pipe.InitBuffer(l1, 64);
  LocalTensor<float> t = l1.Get<float>();
  if (g_l1_case == 0) DataCopy(t, g, 8);  // DataCopy GM -> L1: supported
  if (g_l1_case == 1) DataCopyPad(t, g, DataCopyExtParams(1, 32, 0, 0, 0), DataCopyPadExtParams<float>(false, 0, 0, 0.f));
  if (g_l1_case == 2) DataCopyPad(g, t, DataCopyExtParams(1, 32, 0, 0, 0));
}
ascendc_cpu::LaunchReport PadL1Case(int which) {
  g_l1_case = which;
  ascendc_cpu::LaunchConfig config{"pad_l1", 1, 196608, ascendc_cpu::Order::kInOrder};
  config.kernel_type = ascendc_cpu::KernelType::kAicOnly;
  return ascendc_cpu::Launch(config, {{g_l1_gm.data(), g_l1_gm.size(), "x", GmKind::kWorkspace}}, PadL1,
                             g_l1_gm.data());
}
TEST(datacopy_gm_to_l1_passes) { PadL1Case(0); }
TEST(datacopypad_gm_to_l1_is_api_constraint) { EXPECT_EMU_ERROR(PadL1Case(1), "api-constraint", "pad_l1", 0); }
TEST(datacopypad_l1_to_gm_is_api_constraint) { EXPECT_EMU_ERROR(PadL1Case(2), "api-constraint", "pad_l1", 0); }

}  // namespace
