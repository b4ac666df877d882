// The cube path, enough for q.k^T tiles: GM -> L1 (A1/B1) with ND->NZ conversion, L1 -> L0A/L0B
// (A2/B2) with LoadData, Mmad into L0C (CO1), and Fixpipe L0C -> GM with NZ->ND conversion.
//
// Modelled as documented for Atlas A2:
//  * DataCopy(dst A1/B1, src GM, Nd2NzParams): for each of ndNum matrices, row j of the ND
//    source (srcDValue elements apart) goes to dst + j * dstNzNStride * 32 B, its k-th 32-byte
//    block to + k * dstNzC0Stride * 32 B; a partial last block is zero-filled. srcNdMatrixStride
//    and dstNzMatrixStride are in elements.
//  * LoadData(dst A2/B2, src A1/B1, LoadData2DParams): repeat r copies one 512-byte fractal
//    from fractal (startIndex + r * srcStride) to dst + r * (1 + dstGap) * 512 B; ifTranspose
//    transposes each 16x16 fractal (16-bit types only).
//  * Mmad(c CO1, a A2, b B2, MmadParams with fields m, n, k set): C (+)= A * B with A in "ZZ" (16 x C0
//    fractals, row-major inside and between), B in "ZN" (C0 x 16 fractals, column-major inside,
//    row-major between), C in "NZ" (16 x 16 fractals, row-major inside, column-major between),
//    C0 = 32 B / sizeof(input). half/bfloat16_t/float inputs accumulate in float, int8_t in
//    int32_t. cmatrixInitVal = true starts from 0, else from C in L0C (isBias, deprecated,
//    also accumulates). m = 1 is GEMV: A is read as ND (K contiguous elements).
//  * Fixpipe<T, U, CFG_ROW_MAJOR>(dst GM, src CO1, FixpipeParamsV220): writes the mSize x nSize
//    result row-major with dstStride elements per row; column block j of the NZ source starts
//    at j * srcStride * 16 elements. quantPre F322F16 / F322BF16 round to nearest even; reluEn
//    applies ReLU first. The (L0C, dst) type pair and quantPre must match the dav-c220 table
//    (float -> float/half/bf16, int32 -> int32/half; NoQuant only for same-type copies);
//    DEQF16 (int32 -> half, scalar quantisation) computes fp16(int32 * deq scale), the scale
//    being bits [31:13] of deqScalar read as an fp32 (kernel_operator_fixpipe_v2_impl.h).
// Pipes: Nd2Nz DataCopy MTE2, LoadData MTE1, Mmad M, Fixpipe FIX; all of them AIC-only (an AIV
// calling them is a core-type error). Simplified: only rows < m and
// columns < n (and k < k) are computed, so padding is never read; products are summed in k
// order in float, not in the cube's fractal order; bias tables, quantisation tables, NZ output,
// LoadData3D and the Matmul high-level API are not modelled.
#pragma once
#include "ascendc_cpu/cast.h"
#include "ascendc_cpu/global_tensor.h"
#include "ascendc_cpu/vec_common.h"

namespace AscendC {

// The parameter structs have exactly the public shape of the CANN headers for Atlas A2
// (kernel_struct_data_copy.h, kernel_struct_mm.h, kernel_struct_fixpipe.h): a user-provided
// default constructor (not aggregates: `{...}` calls one of the listed constructors), the listed
// constructors only, none with defaulted arguments, and the same fields, types and defaults.
// In particular there is no MmadParams(m, n, k) and no 6-argument LoadData2DParams: set the
// fields, or pass every argument of a real constructor.
struct Nd2NzParams {
  Nd2NzParams() {}
  Nd2NzParams(const uint16_t ndNumIn, const uint16_t nValueIn, const uint16_t dValueIn,
              const uint16_t srcNdMatrixStrideIn, const uint16_t srcDValueIn, const uint16_t dstNzC0StrideIn,
              const uint16_t dstNzNStrideIn, const uint16_t dstNzMatrixStrideIn)
      : ndNum(ndNumIn), nValue(nValueIn), dValue(dValueIn), srcNdMatrixStride(srcNdMatrixStrideIn),
        srcDValue(srcDValueIn), dstNzC0Stride(dstNzC0StrideIn), dstNzNStride(dstNzNStrideIn),
        dstNzMatrixStride(dstNzMatrixStrideIn) {}
  uint16_t ndNum = 0;
  uint16_t nValue = 0;
  uint16_t dValue = 0;
  uint16_t srcNdMatrixStride = 0;
  uint16_t srcDValue = 0;
  uint16_t dstNzC0Stride = 0;
  uint16_t dstNzNStride = 0;
  uint16_t dstNzMatrixStride = 0;
};

struct LoadData2DParams {
  LoadData2DParams() {}
  LoadData2DParams(const uint16_t startIndexIn, const uint8_t repeatTimesIn, const uint16_t srcStrideIn,
                   const uint8_t sidIn, const uint16_t dstGapIn, const bool ifTransposeIn, const uint8_t addrModeIn)
      : startIndex(startIndexIn), dstGap(dstGapIn), srcStride(srcStrideIn), ifTranspose(ifTransposeIn),
        repeatTimes(repeatTimesIn), sid(sidIn), addrMode(addrModeIn) {}
  uint16_t startIndex = 0;
  uint16_t dstGap = 0;
  uint16_t srcStride = 0;
  bool ifTranspose = 0;
  uint8_t repeatTimes = 0;
  uint8_t sid = 0;
  uint8_t addrMode = 0;
};
using LoadData2dParams = LoadData2DParams;

struct MmadParams {
  MmadParams() {}
  MmadParams(const uint16_t mIn, const uint16_t nIn, const uint16_t kIn, const bool isBiasIn, const int32_t fmOffsetIn,
             const bool enSsparseIn, const bool enWinogradAIn, const bool enWinogradBIn)
      : m(mIn), n(nIn), k(kIn), isBias(isBiasIn), fmOffset(fmOffsetIn), enSsparse(enSsparseIn),
        enWinogradA(enWinogradAIn), enWinogradB(enWinogradBIn) {}
  MmadParams(const uint16_t mIn, const uint16_t nIn, const uint16_t kIn, const uint8_t unitFlagIn,
             const bool cmatrixSourceIn, const bool cmatrixInitValIn)
      : m(mIn), n(nIn), k(kIn), unitFlag(unitFlagIn), cmatrixSource(cmatrixSourceIn),
        cmatrixInitVal(cmatrixInitValIn) {}
  uint16_t m = 0;
  uint16_t n = 0;
  uint16_t k = 0;
  bool isBias = false;
  int32_t fmOffset = 0;
  bool enSsparse = false;
  bool enWinogradA = false;
  bool enWinogradB = false;
  uint8_t unitFlag = 0;
  bool kDirectionAlign = false;
  bool cmatrixSource = false;
  bool cmatrixInitVal = true;
};

// The Atlas A2 values, in the documented order (Fixpipe(L0C到GM数据搬运).md). Modelled: NoQuant,
// F322F16, F322BF16 and DEQF16 (scalar deq scale); the others are an api-constraint.
enum QuantMode_t { NoQuant, F322F16, F322BF16, DEQF16, VDEQF16, QF322B8_PRE, VQF322B8_PRE, REQ8, VREQ8 };

enum class CO2Layout : uint8_t { NZ = 0, ROW_MAJOR, COLUMN_MAJOR };
struct FixpipeConfig {
  CO2Layout format;
  constexpr FixpipeConfig(CO2Layout format_) : format(format_) {}
  constexpr FixpipeConfig(CO2Layout format_, bool) : format(format_) {}        // isToUB: not on A2
  constexpr FixpipeConfig(CO2Layout format_, bool, bool) : format(format_) {}  // enableFixVal: not on A2
};
inline constexpr FixpipeConfig CFG_NZ = {CO2Layout::NZ};
inline constexpr FixpipeConfig CFG_ROW_MAJOR = {CO2Layout::ROW_MAJOR};
inline constexpr FixpipeConfig CFG_COLUMN_MAJOR = {CO2Layout::COLUMN_MAJOR};

struct FixpipeParamsV220 {
  FixpipeParamsV220() {}
  FixpipeParamsV220(const uint16_t nSizeIn, const uint16_t mSizeIn, const uint16_t srcStrideIn,
                    const uint32_t dstStrideIn, const bool reluEnIn)
      : nSize(nSizeIn), mSize(mSizeIn), srcStride(srcStrideIn), dstStride(dstStrideIn), reluEn(reluEnIn) {}
  FixpipeParamsV220(const uint16_t nSizeIn, const uint16_t mSizeIn, const uint16_t srcStrideIn,
                    const uint32_t dstStrideIn, const bool reluEnIn, const QuantMode_t quantPreIn,
                    const int64_t deqScalarIn, const uint16_t ndNumIn, const uint16_t srcNdStrideIn,
                    const uint16_t dstNdStrideIn, const uint8_t unitFlagIn)
      : nSize(nSizeIn), mSize(mSizeIn), srcStride(srcStrideIn), dstStride(dstStrideIn), quantPre(quantPreIn),
        deqScalar(deqScalarIn), ndNum(ndNumIn), srcNdStride(srcNdStrideIn), dstNdStride(dstNdStrideIn),
        reluEn(reluEnIn), unitFlag(unitFlagIn) {}
  FixpipeParamsV220(const uint16_t nSizeIn, const uint16_t mSizeIn, const uint16_t srcStrideIn,
                    const uint32_t dstStrideIn, const bool reluEnIn, const QuantMode_t quantPreIn,
                    const int64_t deqScalarIn, const uint16_t ndNumIn, const uint16_t srcNdStrideIn,
                    const uint16_t dstNdStrideIn, const uint8_t unitFlagIn, const bool isChannelSplitIn)
      : nSize(nSizeIn), mSize(mSizeIn), srcStride(srcStrideIn), dstStride(dstStrideIn), quantPre(quantPreIn),
        deqScalar(deqScalarIn), ndNum(ndNumIn), srcNdStride(srcNdStrideIn), dstNdStride(dstNdStrideIn),
        reluEn(reluEnIn), unitFlag(unitFlagIn), isChannelSplit(isChannelSplitIn) {}
  uint16_t nSize = 0;
  uint16_t mSize = 0;
  uint16_t srcStride = 0;
  uint32_t dstStride = 0;
  QuantMode_t quantPre = QuantMode_t::NoQuant;
  // No default in the real struct (uninitialised): here a marker that a DEQF16 Fixpipe refuses.
  uint64_t deqScalar = 0xDEADBEEFDEADBEEFull;
  uint16_t ndNum = 1;
  uint16_t srcNdStride = 0;
  uint16_t dstNdStride = 0;
  bool reluEn = false;
  uint8_t unitFlag = 0;
  bool isChannelSplit = false;
};

}  // namespace AscendC

namespace ascendc_cpu::detail {

void CheckPosition(const TensorDesc& t, AscendC::TPosition want, const char* what, const char* api, SrcLoc loc);

template <class T>
constexpr uint32_t C0() {
  return 32 / sizeof(T);
}
inline uint32_t CeilDiv(uint32_t a, uint32_t b) { return (a + b - 1) / b; }

inline constexpr uint64_t kDeqScalarUnset = 0xDEADBEEFDEADBEEFull;
// The scale of a DEQF16 deqScalar (bits [31:13], an fp32 with its 13 low mantissa bits dropped),
// refusing what the hardware would silently change (see Fixpipe below).
float DeqF16Scale(uint64_t deq, const char* api, SrcLoc loc);
// Checks the (L0C type U, destination type T) pair and quantPre against the Atlas A2 table.
void CheckFixpipeMode(bool src_float, bool src_int32, const char* dst_type, AscendC::QuantMode_t q, bool to_l1, SrcLoc loc);

// One L0C value U through Fixpipe into T (to GM or L1): reluPre first, then a copy (T = U), or
// times the DEQF16 scale (`deq`; a result outside float16 is refused: the hardware's saturation is
// not documented) or plainly converted, rounded once to nearest even (int32 -> fp32 is exact for
// |v| <= 2^24).
template <class T, class U>
T FixpipeValue(U v, bool relu, bool deq, double scale, const char* api, SrcLoc loc) {
  if (relu && v < U(0)) v = U(0);
  if constexpr (std::is_same_v<T, U>) {
    return v;
  } else {
    const double x = static_cast<double>(v) * scale;
    if (deq && !(std::fabs(x) <= 65504.0)) {
      Fail(ascendc_cpu::check::kApiConstraint, loc,
           std::string(api) + " DEQF16: " + std::to_string(static_cast<double>(v)) + " * deq scale " +
               std::to_string(scale) + " = " + std::to_string(x) +
               " is outside the float16 range (the hardware's saturation is not documented; choose a smaller scale)");
    }
    return FromDouble<T>(x, AscendC::RoundMode::CAST_RINT, loc);
  }
}

template <class In>
struct Acc {
  using type = float;
};
template <>
struct Acc<int8_t> {
  using type = int32_t;
};

}  // namespace ascendc_cpu::detail

namespace AscendC {

template <class T>
void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const Nd2NzParams& p,
              ascendc_cpu::SrcLoc loc = ascendc_cpu::SrcLoc::Here()) {
  using namespace ascendc_cpu::detail;
  const char* api = "DataCopy(Nd2Nz)";
  PipeScope scope(Pipe::kMte2, api, loc);
  CheckPositionIn(dst.Desc(), Mem::kL1, "dst", api, loc);
  WriteLocal(dst.Desc(), 0, 0, 32, api, loc);
  const uint32_t c0 = C0<T>(), blocks = CeilDiv(p.dValue, c0);
  for (uint32_t i = 0; i < p.ndNum; ++i) {
    for (uint32_t j = 0; j < p.nValue; ++j) {
      const T* row = src.GetPhyAddr() + uint64_t{i} * p.srcNdMatrixStride + uint64_t{j} * p.srcDValue;
      GmRead(row, uint64_t{p.dValue} * sizeof(T), src.Bounds(), api, loc);
      for (uint32_t b = 0; b < blocks; ++b) {
        const int64_t off = (int64_t{i} * p.dstNzMatrixStride) * int64_t{sizeof(T)} +
                            (int64_t{j} * p.dstNzNStride + int64_t{b} * p.dstNzC0Stride) * 32;
        T* d = reinterpret_cast<T*>(WriteLocal(dst.Desc(), off, 32, 1, api, loc));
        for (uint32_t e = 0; e < c0; ++e) d[e] = b * c0 + e < p.dValue ? row[b * c0 + e] : T(0);
      }
    }
  }
  BlockCounters(loc).gm_to_local.Add(uint64_t{p.ndNum} * p.nValue * p.dValue * sizeof(T), uint64_t{p.ndNum} * p.nValue);
}

template <class T>
void LoadData(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LoadData2DParams& p,
              ascendc_cpu::SrcLoc loc = ascendc_cpu::SrcLoc::Here()) {
  using namespace ascendc_cpu::detail;
  const char* api = "LoadData";
  PipeScope scope(Pipe::kMte1, api, loc);
  CheckPositionIn(src.Desc(), Mem::kL1, "src", api, loc);
  if (dst.Desc().mem != Mem::kL0A && dst.Desc().mem != Mem::kL0B) {
    Fail(ascendc_cpu::check::kApiConstraint, loc, "LoadData: dst must be at A2 or B2");
  }
  if (p.ifTranspose && sizeof(T) != 2) {
    Fail(ascendc_cpu::check::kApiConstraint, loc, "LoadData: ifTranspose is modelled for 16-bit types only");
  }
  constexpr int64_t kFrac = 512;
  std::vector<uint8_t> frac(kFrac);
  for (uint32_t r = 0; r < p.repeatTimes; ++r) {
    const uint8_t* s = ReadLocal(src.Desc(), (int64_t{p.startIndex} + int64_t{r} * p.srcStride) * kFrac, kFrac, 32, api, loc);
    std::copy(s, s + kFrac, frac.begin());
    uint8_t* d = WriteLocal(dst.Desc(), int64_t{r} * (1 + p.dstGap) * kFrac, kFrac, 32, api, loc);
    if (!p.ifTranspose) {
      std::copy(frac.begin(), frac.end(), d);
      continue;
    }
    for (int a = 0; a < 16; ++a) {
      for (int b = 0; b < 16; ++b) std::copy_n(&frac[(b * 16 + a) * 2], 2, d + (a * 16 + b) * 2);
    }
  }
  BlockCounters(loc).local_to_local.Add(uint64_t{p.repeatTimes} * kFrac, p.repeatTimes);
}

template <class Out, class In, class InB>
void Mmad(const LocalTensor<Out>& c, const LocalTensor<In>& a, const LocalTensor<InB>& b, const MmadParams& p,
          ascendc_cpu::SrcLoc loc = ascendc_cpu::SrcLoc::Here()) {
  using namespace ascendc_cpu::detail;
  static_assert(std::is_same_v<In, InB>, "Mmad: A and B must have the same type");
  using AccT = typename Acc<In>::type;
  static_assert(std::is_same_v<Out, AccT>, "Mmad: L0C holds float for half/bfloat16_t/float inputs, int32_t for int8_t");
  const char* api = "Mmad";
  PipeScope scope(Pipe::kM, api, loc);
  CheckPosition(a.Desc(), TPosition::A2, "fm", api, loc);
  CheckPosition(b.Desc(), TPosition::B2, "filter", api, loc);
  CheckPosition(c.Desc(), TPosition::CO1, "dst", api, loc);
  if (a.Desc().offset % 512 != 0 || b.Desc().offset % 512 != 0) {
    Fail(ascendc_cpu::check::kApiConstraint, loc, "Mmad: fm (L0A) and filter (L0B) must start 512-byte aligned");
  }
  const uint32_t m = p.m, n = p.n, k = p.k, c0 = C0<In>();
  if (m > 4095 || n > 4095 || k > 4095) {
    Fail(ascendc_cpu::check::kApiConstraint, loc,
         "Mmad: m, n and k must be in [0, 4095], got m=" + std::to_string(m) + " n=" + std::to_string(n) +
             " k=" + std::to_string(k));
  }
  if (m == 0 || n == 0 || k == 0) return;  // documented: the instruction is a NOP
  const uint32_t kf = CeilDiv(k, c0), nf = CeilDiv(n, 16), mf = CeilDiv(m, 16);
  // m == 1 is GEMV on Atlas A2 (Mmad.md constraints, GEMV.md): L0A is read as ND, the K
  // elements of the row contiguous from the start of fm (not as Zz fractals); C keeps the
  // layout of one 16-row block (valid data in row 0 of each 16x16 fractal).
  const bool gemv = m == 1;
  auto a_off = [&](uint32_t r, uint32_t kk) {
    return gemv ? kk : ((r / 16) * kf + kk / c0) * 16 * c0 + (r % 16) * c0 + kk % c0;
  };
  auto b_off = [&](uint32_t kk, uint32_t nn) { return ((kk / c0) * nf + nn / 16) * 16 * c0 + (nn % 16) * c0 + kk % c0; };
  auto c_off = [&](uint32_t r, uint32_t nn) { return ((nn / 16) * mf + r / 16) * 256 + (r % 16) * 16 + nn % 16; };
  std::vector<AccT> av(uint64_t{m} * k), bv(uint64_t{k} * n);
  for (uint32_t r = 0; r < m; ++r) {
    for (uint32_t kk = 0; kk < k; kk += c0) {
      const uint32_t len = std::min(c0, k - kk);
      const In* s = reinterpret_cast<const In*>(ReadLocal(a.Desc(), int64_t{a_off(r, kk)} * int64_t{sizeof(In)}, len * sizeof(In), 1, api, loc));
      for (uint32_t e = 0; e < len; ++e) av[uint64_t{r} * k + kk + e] = static_cast<AccT>(s[e]);
    }
  }
  for (uint32_t nn = 0; nn < n; ++nn) {
    for (uint32_t kk = 0; kk < k; kk += c0) {
      const uint32_t len = std::min(c0, k - kk);
      const In* s = reinterpret_cast<const In*>(ReadLocal(b.Desc(), int64_t{b_off(kk, nn)} * int64_t{sizeof(In)}, len * sizeof(In), 1, api, loc));
      for (uint32_t e = 0; e < len; ++e) bv[uint64_t{kk + e} * n + nn] = static_cast<AccT>(s[e]);
    }
  }
  const bool accumulate = p.isBias || !p.cmatrixInitVal;
  if (p.cmatrixSource) Fail(ascendc_cpu::check::kApiConstraint, loc, "Mmad: cmatrixSource (bias table) is not modelled");
  for (uint32_t r = 0; r < m; ++r) {
    for (uint32_t nn = 0; nn < n; ++nn) {
      const int64_t off = int64_t{c_off(r, nn)} * int64_t{sizeof(AccT)};
      AccT sum = accumulate ? *reinterpret_cast<const AccT*>(ReadLocal(c.Desc(), off, sizeof(AccT), 1, api, loc)) : AccT(0);
      for (uint32_t kk = 0; kk < k; ++kk) sum += av[uint64_t{r} * k + kk] * bv[uint64_t{kk} * n + nn];
      *reinterpret_cast<AccT*>(WriteLocal(c.Desc(), off, sizeof(AccT), 1, api, loc)) = sum;
    }
  }
  ascendc_cpu::Counters& cnt = BlockCounters(loc);
  ++cnt.cube_ops;
  cnt.cube_macs += uint64_t{m} * n * k;
  if constexpr (std::is_same_v<In, int8_t>) cnt.cube_int8_macs += uint64_t{m} * n * k;
}

template <class T>
constexpr const char* FixpipeTypeName() {
  if constexpr (std::is_same_v<T, float>) return "float";
  else if constexpr (std::is_same_v<T, half>) return "half";
  else if constexpr (std::is_same_v<T, bfloat16_t>) return "bfloat16_t";
  else if constexpr (std::is_same_v<T, int32_t>) return "int32_t";
  else if constexpr (std::is_same_v<T, int8_t>) return "int8_t";
  else if constexpr (std::is_same_v<T, uint8_t>) return "uint8_t";
  else return "other";
}

// Sets the scalar quantisation register that DataCopy(L0C->GM/L1) reads. Fixpipe with
// FixpipeParamsV220 writes the same register from its deqScalar field (the real impl calls
// SetQuantPre(deqScalar) for DEQF16), so for Fixpipe only deqScalar counts. AIC only.
inline void SetFixpipePreQuantFlag(uint64_t config, ascendc_cpu::SrcLoc loc = ascendc_cpu::SrcLoc::Here()) {
  using namespace ascendc_cpu::detail;
  PipeScope scope(Pipe::kFix, "SetFixpipePreQuantFlag", loc);
  (void)config;
}

template <class T, class U, const FixpipeConfig& config = CFG_ROW_MAJOR>
void Fixpipe(const GlobalTensor<T>& dst, const LocalTensor<U>& src, const FixpipeParamsV220& p,
             ascendc_cpu::SrcLoc loc = ascendc_cpu::SrcLoc::Here()) {
  using namespace ascendc_cpu::detail;
  const char* api = "Fixpipe";
  PipeScope scope(Pipe::kFix, api, loc);
  static_assert(config.format == CO2Layout::ROW_MAJOR, "Fixpipe: only CFG_ROW_MAJOR (NZ -> ND) is modelled");
  CheckPosition(src.Desc(), TPosition::CO1, "src", api, loc);
  if (p.ndNum > 1) Fail(ascendc_cpu::check::kApiConstraint, loc, "Fixpipe: ndNum > 1 is not modelled");
  CheckFixpipeMode(std::is_same_v<U, float>, std::is_same_v<U, int32_t>, FixpipeTypeName<T>(), p.quantPre, false, loc);
  const bool deq = p.quantPre == DEQF16;
  const double scale = deq ? static_cast<double>(DeqF16Scale(p.deqScalar, api, loc)) : 1.0;
  ReadLocal(src.Desc(), 0, 0, 64, api, loc);
  std::vector<T> row(p.nSize);
  for (uint32_t r = 0; r < p.mSize; ++r) {
    for (uint32_t nn = 0; nn < p.nSize; ++nn) {
      const int64_t off = (int64_t{nn / 16} * p.srcStride * 16 + int64_t{r} * 16 + nn % 16) * int64_t{sizeof(U)};
      const U v = *reinterpret_cast<const U*>(ReadLocal(src.Desc(), off, sizeof(U), 1, api, loc));
      row[nn] = FixpipeValue<T>(v, p.reluEn, deq, scale, api, loc);
    }
    T* d = dst.GetPhyAddr() + uint64_t{r} * p.dstStride;
    GmWrite(d, uint64_t{p.nSize} * sizeof(T), dst.Bounds(), api, loc);
    std::copy(row.begin(), row.end(), d);
  }
  BlockCounters(loc).local_to_gm.Add(uint64_t{p.mSize} * p.nSize * sizeof(T), p.mSize);
}

// Fixpipe L0C -> L1 (NZ2NZ; Fixpipe(L0C到L1数据搬运).md): column block j (16 columns) of the NZ
// source (at j * srcStride * 16 elements) goes to dst + j * dstStride * 32 B, its mSize rows of 16
// values 32 B apart. Converting only (no NoQuant on this path): float -> half / bfloat16_t,
// int32 -> half (DEQF16), as to GM. nSize a multiple of 16, dstStride != 0, config CFG_NZ.
// Modelled for 16-bit destinations only.
template <class T, class U, const FixpipeConfig& config = CFG_ROW_MAJOR>
void Fixpipe(const LocalTensor<T>& dst, const LocalTensor<U>& src, const FixpipeParamsV220& p,
             ascendc_cpu::SrcLoc loc = ascendc_cpu::SrcLoc::Here()) {
  using namespace ascendc_cpu::detail;
  const char* api = "Fixpipe(L0C->L1)";
  PipeScope scope(Pipe::kFix, api, loc);
  CheckPosition(src.Desc(), TPosition::CO1, "src", api, loc);
  CheckPositionIn(dst.Desc(), Mem::kL1, "dst", api, loc);
  if (config.format != CO2Layout::NZ) {
    Fail(ascendc_cpu::check::kApiConstraint, loc, "Fixpipe(L0C->L1): the format must be CFG_NZ (NZ2NZ)");
  }
  CheckFixpipeMode(std::is_same_v<U, float>, std::is_same_v<U, int32_t>, FixpipeTypeName<T>(), p.quantPre, true, loc);
  if (sizeof(T) != 2) Fail(ascendc_cpu::check::kApiConstraint, loc, "Fixpipe(L0C->L1): only 16-bit outputs are modelled");
  if (p.isChannelSplit) Fail(ascendc_cpu::check::kApiConstraint, loc, "Fixpipe(L0C->L1): isChannelSplit must be false");
  if (p.nSize % 16 != 0 || p.dstStride == 0) {
    Fail(ascendc_cpu::check::kApiConstraint, loc,
         "Fixpipe(L0C->L1): nSize must be a multiple of 16 and dstStride (32-byte units) non-zero, got nSize=" +
             std::to_string(p.nSize) + " dstStride=" + std::to_string(p.dstStride));
  }
  if (p.nSize == 0 || p.mSize == 0) return;  // documented NOP
  const bool deq = p.quantPre == DEQF16;
  const double scale = deq ? static_cast<double>(DeqF16Scale(p.deqScalar, api, loc)) : 1.0;
  ReadLocal(src.Desc(), 0, 0, 64, api, loc);
  for (uint32_t j = 0; j < p.nSize / 16u; ++j) {
    for (uint32_t r = 0; r < p.mSize; ++r) {
      T* d = reinterpret_cast<T*>(WriteLocal(dst.Desc(), (int64_t{j} * p.dstStride + r) * 32, 32, 32, api, loc));
      for (uint32_t c = 0; c < 16; ++c) {
        const int64_t off = (int64_t{j} * p.srcStride * 16 + int64_t{r} * 16 + c) * int64_t{sizeof(U)};
        const U v = *reinterpret_cast<const U*>(ReadLocal(src.Desc(), off, sizeof(U), 1, api, loc));
        d[c] = FixpipeValue<T>(v, p.reluEn, deq, scale, api, loc);
      }
    }
  }
  BlockCounters(loc).local_to_local.Add(uint64_t{p.mSize} * p.nSize * sizeof(T), p.nSize / 16u);
}

}  // namespace AscendC
