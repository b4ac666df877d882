// Kernel snippets that must NOT compile against the emulator, because they do not compile
// against the real AscendC headers for Atlas A2 either (and one that must compile).
// compile_fail.cmake compiles this file once per case with -DCASE=<n> (g++ -fsyntax-only)
// and expects failure with the regular expression on the case's "// case" line in the output.
// Checked against the real headers with ../shared/tools/ascendc-api-check (2026-11-23): case 0
// compiles and cases 1, 2 and 6-14 fail there too. Cases 3-5 (count-form Add on int64 /
// uint8, Exp on int32) pass that check only because its generic stand-in for the intrinsic
// declarations accepts any type: the real level-2 implementation passes T straight to the
// vadd / vexp intrinsics (whether bisheng has overloads for these types cannot be checked here;
// the A2 docs do not list them), and the level-0 forms hit the implementation's static_assert.
// The emulator follows the documented type lists. Axpy (checked the same day with its forms in
// case 0): case 15 fails there too; cases 16-17 (float -> half, int32) pass it for the same
// reason: dav_c220's AxpyIntrinsicsImpl checks the pair only with ASCENDC_DEBUG_ASSERT (debug
// runs) and passes the types to the vaxpy intrinsic; Axpy.md lists three A2 pairs only.
#include "kernel_operator.h"

using namespace AscendC;

// case 0: ok
// case 1: no matching function for call to 'Duplicate|Duplicate\(
// case 2: no matching function for call to 'Muls|Muls\(
// case 3: Add: dtype not supported on Atlas A2
// case 4: Add: dtype not supported on Atlas A2
// case 5: Exp: dtype not supported on Atlas A2
// case 6: Cast: no such conversion on Atlas A2
// case 7: no matching function for call to .*MmadParams
// case 8: no matching function for call to .*LoadData2DParams
// case 9: no matching function for call to .*MrgSortSrcList
// case 10: no matching function for call to .*FixpipeParamsV220
// case 11: wrong number of template arguments|too few template arguments
// case 12: no matching function for call to .*DataCopyExtParams
// case 13: Duplicate: dtype not supported on Atlas A2
// case 14: no matching function for call to 'Compares|Compares\(
// case 15: no matching function for call to 'Axpy|Axpy\(
// case 16: Axpy: dtype pair not supported on Atlas A2
// case 17: Axpy: dtype pair not supported on Atlas A2
void Snippet(LocalTensor<int32_t> i32, LocalTensor<half> f16, LocalTensor<float> f32, LocalTensor<int64_t> i64,
             LocalTensor<uint8_t> u8, LocalTensor<bfloat16_t> bf16, LocalTensor<int8_t> i8, LocalTensor<double> f64) {
  (void)i32; (void)f16; (void)f32; (void)i64; (void)u8; (void)bf16; (void)i8; (void)f64;
#if CASE == 0
  // The forms the real API accepts.
  Duplicate(i32, -1, 64);
  Duplicate(f32, -1.0f, 64);
  Muls(f16, f16, static_cast<half>(2.0f), 128);
  Adds(i32, i32, static_cast<int32_t>(7), 64);
  Add(f32, f32, f32, 64);
  Cast(bf16, f32, RoundMode::CAST_RINT, 64);
  Cast(f32, f16, RoundMode::CAST_NONE, 64);
  MmadParams mp;
  mp.m = 16;
  MmadParams mp8(16, 16, 16, false, 0, false, false, false);
  MmadParams mp6(16, 16, 16, 0, false, true);
  LoadData2DParams ld(0, 1, 1, 0, 0, false, 0);
  MrgSortSrcList<float> list(f32, f32, f32, f32);
  FixpipeParamsV220 fp(16, 16, 16, 16, false);
  FixpipeParamsV220 fq(16, 16, 16, 16, true, QuantMode_t::DEQF16, 0x3a800000, 1, 0, 0, 0);
  SetFixpipePreQuantFlag(0x3a800000);
  DataCopyExtParams ext{1, 32, 0, 0, 0};
  DataCopyParams dcp{1, 1, 0, 0};
  dcp.srcGap = 1;
  TQue<TPosition::VECIN, 1> q;
  Compares(u8, f32, 1.0f, CMPMODE::GT, 64);
  Axpy(f16, f16, static_cast<half>(2.0f), 128);
  Axpy(f32, f32, 2.0f, 64);
  Axpy(f32, f16, static_cast<half>(2.0f), 64);
  Axpy(f32, f16, static_cast<half>(2.0f), uint64_t{64}, 1, UnaryRepeatParams(1, 1, 8, 4));
  uint64_t bits[2] = {~uint64_t{0}, 0};
  Axpy(f32, f16, static_cast<half>(2.0f), bits, 1, UnaryRepeatParams(1, 1, 8, 4));
  (void)mp; (void)mp8; (void)mp6; (void)ld; (void)list; (void)fp; (void)ext; (void)dcp;
#elif CASE == 1
  Duplicate(i32, -1.0f, 64);  // T deduced as int32_t and float
#elif CASE == 2
  Muls(f16, f16, 2.0f, 128);  // T deduced as half and float
#elif CASE == 3
  Add(i64, i64, i64, 32);  // no int64 vector arithmetic on A2
#elif CASE == 4
  Add(u8, u8, u8, 256);  // no uint8 Add on A2
#elif CASE == 5
  Exp(i32, i32, 64);  // Exp is half / float only
#elif CASE == 6
  Cast(i8, f32, RoundMode::CAST_RINT, 64);  // no float -> int8 conversion on A2
#elif CASE == 7
  MmadParams mp(16, 16, 16);  // no (m, n, k) constructor
#elif CASE == 8
  LoadData2DParams ld(0, 1, 1, 0, 0, false);  // addrMode has no default
#elif CASE == 9
  MrgSortSrcList<float> list(f32, f32);  // only the 4-list constructor
#elif CASE == 10
  FixpipeParamsV220 fp{16, 16, 16, 16};  // not an aggregate: no 4-argument constructor
#elif CASE == 11
  TQue<TPosition::VECIN> q;  // no default depth
#elif CASE == 12
  DataCopyExtParams ext{1, 32, 0, 0};  // rsv has no default
#elif CASE == 13
  Duplicate(f64, 1.0, 8);  // Duplicate takes 16- and 32-bit types
#elif CASE == 14
  Compares(u8, f32, 1, CMPMODE::GT, 64);  // T deduced as float and int
#elif CASE == 15
  Axpy(f16, f16, 2.0f, 128);  // U deduced as half (src) and float (scalar)
#elif CASE == 16
  Axpy(f16, f32, 2.0f, 64);  // float src -> half dst is not an A2 pair
#elif CASE == 17
  Axpy(i32, i32, 2, 64);  // Axpy is half / float only
#endif
}
