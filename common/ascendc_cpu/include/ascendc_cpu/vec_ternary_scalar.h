// Axpy: dst[i] = src[i] * scalarValue + dst[i] (PIPE_V), as documented for Atlas A2/A3 (NPU arch
// 2201) in asc-devkit docs/zh/api/SIMD-API/基础API/Memory矢量计算/复合计算/Axpy.md and declared in
// include/basic_api/kernel_operator_vec_ternary_scalar_intf.h:
//   template <typename T, typename U> Axpy(const LocalTensor<T>& dst, const LocalTensor<U>& src,
//                                           const U& scalarValue, const int32_t& count)
//   template <typename T, typename U, bool isSetMask = true> Axpy(dst, src, const U& scalarValue,
//       uint64_t mask / uint64_t mask[], const uint8_t repeatTime, const UnaryRepeatParams&)
// U is deduced from src AND the scalar: Axpy(halfDst, halfSrc, 2.0f, n) does not compile.
//  * Type pairs (src/scalar -> dst) on Atlas A2/A3: half -> half (128 elements per repeat), float
//    -> float (64), half -> float (64: a repeat reads 64 halves, 4 DataBlocks, and writes 8 DataBlocks
//    of float). Others: static_assert (the dav-c220 impl lists the same three pairs).
//  * Masks (level-0 forms) are set for the wider of T and U (dav-c220 impl): continuous mask in
//    [1, 256 / max(sizeof T, sizeof U)], bitwise mask[1] must be 0 when either type is 32-bit.
//  * count / repeatTime 0 is a NOP (Axpy.md, A2/A3); a negative count: api-constraint.
//  * Overlap (Axpy.md and 通用说明和约束.md 通用地址重叠约束): half -> float does not allow src and dst
//    to overlap at all; same-type pairs allow an element to be its own dst only (full overlap inside
//    one repeat), not a partial overlap nor a src read of an earlier repeat's dst. What the hardware
//    gets wrong fails here as `api-constraint`.
//  * Rounding: the docs (功能调试/精度正常.md) say Axpy combines the multiply and the add into one
//    instruction whose result can differ from separate Muls + Add: it is modelled as fused (one
//    rounding to T): fmaf for float results (exact, float(half) operands are exact), a double fma
//    rounded once to half for half results (double rounding through double is possible in rare
//    cases). INF/NAN mode only; saturation mode is not modelled.
//  * Timing: one vector instruction charged as every vector op (bytes read incl. dst, and written).
#pragma once
#include <cmath>
#include <type_traits>
#include <unordered_map>

#include "ascendc_cpu/dtype_support.h"
#include "ascendc_cpu/vec_common.h"
#include "ascendc_cpu/vec_repeat.h"

namespace ascendc_cpu::detail {

template <class T, class U>
T AxpyOne(U s, U k, T d) {
  if constexpr (std::is_same_v<T, float>) {
    return std::fmaf(static_cast<float>(s), static_cast<float>(k), d);
  } else {
    return static_cast<T>(std::fma(static_cast<double>(s), static_cast<double>(k), static_cast<double>(d)));
  }
}

// Element e of repeat r of the level-0 addressing, in bytes from the tensor start.
template <class T>
int64_t RepeatOffset(uint32_t blk, uint32_t rep, uint32_t r, uint32_t e) {
  constexpr uint32_t per_block = 32 / sizeof(T);
  return (int64_t{r} * rep + int64_t{e / per_block} * blk) * 32 + int64_t{e % per_block} * int64_t{sizeof(T)};
}

// The overlap rules above. src_at(r, e) / dst_at(r, e): arena byte address of element e of repeat
// r, has(r, e): whether it takes part; repeats [0, repeat), `per_repeat` element slots per repeat.
template <class T, class U, class SrcAt, class DstAt, class Has>
void AxpyOverlap(const TensorDesc& dst, const TensorDesc& src, uint32_t repeat, uint32_t per_repeat, SrcAt src_at,
                 DstAt dst_at, Has has, const char* api, SrcLoc loc) {
  if (dst.mem != src.mem || repeat == 0) return;
  // Byte spans first: disjoint spans (the usual case) need nothing more.
  int64_t s_lo = INT64_MAX, s_hi = INT64_MIN, d_lo = INT64_MAX, d_hi = INT64_MIN;
  for (uint32_t r = 0; r < repeat; ++r) {
    for (uint32_t e = 0; e < per_repeat; ++e) {
      if (!has(r, e)) continue;
      s_lo = std::min(s_lo, src_at(r, e));
      s_hi = std::max(s_hi, src_at(r, e) + int64_t{sizeof(U)});
      d_lo = std::min(d_lo, dst_at(r, e));
      d_hi = std::max(d_hi, dst_at(r, e) + int64_t{sizeof(T)});
    }
  }
  if (s_hi <= d_lo || d_hi <= s_lo) return;
  if constexpr (!std::is_same_v<T, U>) {
    Fail(check::kApiConstraint, loc,
         std::string(api) + ": src (half) and dst (float) overlap; Axpy.md: the half -> float form does not support "
                            "address overlap");
  } else {
    std::unordered_map<int64_t, uint32_t> first_write;  // dst byte -> first repeat writing it
    for (uint32_t r = 0; r < repeat; ++r) {
      for (uint32_t e = 0; e < per_repeat; ++e) {
        if (!has(r, e)) continue;
        for (int64_t b = 0; b < int64_t{sizeof(T)}; ++b) first_write.emplace(dst_at(r, e) + b, r);
      }
    }
    for (uint32_t r = 0; r < repeat; ++r) {
      for (uint32_t e = 0; e < per_repeat; ++e) {
        if (!has(r, e)) continue;
        const int64_t a = src_at(r, e);
        for (int64_t b = 0; b < int64_t{sizeof(U)}; ++b) {
          auto it = first_write.find(a + b);
          if (it == first_write.end()) continue;
          if (it->second < r) {
            Fail(check::kApiConstraint, loc,
                 std::string(api) + ": src of repeat " + std::to_string(r) + " reads dst bytes written by repeat " +
                     std::to_string(it->second) + " (通用地址重叠约束: not supported)");
          }
          if (a != dst_at(r, e)) {
            Fail(check::kApiConstraint, loc,
                 std::string(api) + ": src and dst overlap partially (通用地址重叠约束: inside one repeat src and "
                                    "dst must overlap 100% or not at all)");
          }
        }
      }
    }
  }
}

template <class T, class U>
void AxpyCount(const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<U>& src, U scalar, int32_t count,
               const char* api, SrcLoc loc) {
  const uint64_t n = CheckedCount(count, 1, api, loc);
  constexpr uint32_t par = 256 / (sizeof(T) > sizeof(U) ? sizeof(T) : sizeof(U));
  const uint32_t repeats = static_cast<uint32_t>((n + par - 1) / par);
  const TensorDesc &dd = dst.Desc(), &sd = src.Desc();
  const bool in_place = std::is_same_v<T, U> && dd.mem == sd.mem && dd.offset == sd.offset;  // allowed, and common
  if (!in_place) {
    AxpyOverlap<T, U>(
        dd, sd, repeats, par,
        [&](uint32_t r, uint32_t e) { return int64_t{sd.offset} + (int64_t{r} * par + e) * int64_t{sizeof(U)}; },
        [&](uint32_t r, uint32_t e) { return int64_t{dd.offset} + (int64_t{r} * par + e) * int64_t{sizeof(T)}; },
        [&](uint32_t r, uint32_t e) { return uint64_t{r} * par + e < n; }, api, loc);
  }
  const U* s = VecSrc(src, n, api, loc);
  const T* d0 = VecSrc(dst, n, api, loc);
  std::vector<T> out(n);
  for (uint64_t i = 0; i < n; ++i) out[i] = AxpyOne<T, U>(s[i], scalar, d0[i]);
  T* d = VecDst(dst, n, api, loc);
  std::copy(out.begin(), out.end(), d);
  CountVectorOp(loc);
}

template <class T, class U>
void AxpyRepeat(const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<U>& src, U scalar, const RepeatMask& mask,
                uint8_t repeat, const AscendC::UnaryRepeatParams& p, const char* api, SrcLoc loc) {
  constexpr uint32_t per_repeat = 256 / (sizeof(T) > sizeof(U) ? sizeof(T) : sizeof(U));
  const TensorDesc &dd = dst.Desc(), &sd = src.Desc();
  auto s_off = [&](uint32_t r, uint32_t e) { return RepeatOffset<U>(p.srcBlkStride, p.srcRepStride, r, e); };
  auto d_off = [&](uint32_t r, uint32_t e) { return RepeatOffset<T>(p.dstBlkStride, p.dstRepStride, r, e); };
  auto has = [&](uint32_t, uint32_t e) { return mask.Has(e); };
  AxpyOverlap<T, U>(
      dd, sd, repeat, per_repeat, [&](uint32_t r, uint32_t e) { return int64_t{sd.offset} + s_off(r, e); },
      [&](uint32_t r, uint32_t e) { return int64_t{dd.offset} + d_off(r, e); }, has, api, loc);
  ReadLocal(dd, 0, 0, 32, api, loc);
  ReadLocal(sd, 0, 0, 32, api, loc);
  for (uint32_t r = 0; r < repeat; ++r) {
    for (uint32_t e = 0; e < per_repeat; ++e) {
      if (!has(r, e)) continue;
      U s;
      T d;
      std::memcpy(static_cast<void*>(&s), ReadLocal(sd, s_off(r, e), sizeof(U), 1, api, loc), sizeof(U));
      std::memcpy(static_cast<void*>(&d), ReadLocal(dd, d_off(r, e), sizeof(T), 1, api, loc), sizeof(T));
      const T out = AxpyOne<T, U>(s, scalar, d);
      std::memcpy(WriteLocal(dd, d_off(r, e), sizeof(T), 1, api, loc), static_cast<const void*>(&out), sizeof(T));
    }
  }
  CountVectorOp(loc);
}

template <class T, class U>
using AxpyMaskT = std::conditional_t<(sizeof(T) >= sizeof(U)), T, U>;

}  // namespace ascendc_cpu::detail

namespace AscendC {

template <typename T, typename U>
void Axpy(const LocalTensor<T>& dst, const LocalTensor<U>& src, const U& scalarValue, const int32_t& count,
          ascendc_cpu::SrcLoc loc = ascendc_cpu::SrcLoc::Here()) {
  static_assert(ascendc_cpu::detail::kAxpyPair<T, U>,
                "Axpy: dtype pair not supported on Atlas A2 (src half -> dst half / float, src float -> dst float)");
  ascendc_cpu::detail::AxpyCount(dst, src, scalarValue, count, "Axpy", loc);
}

template <typename T, typename U, bool isSetMask = true>
void Axpy(const LocalTensor<T>& dst, const LocalTensor<U>& src, const U& scalarValue, uint64_t mask,
          const uint8_t repeatTime, const UnaryRepeatParams& repeatParams,
          ascendc_cpu::SrcLoc loc = ascendc_cpu::SrcLoc::Here()) {
  static_assert(isSetMask, "only isSetMask = true is modelled");
  static_assert(ascendc_cpu::detail::kAxpyPair<T, U>,
                "Axpy: dtype pair not supported on Atlas A2 (src half -> dst half / float, src float -> dst float)");
  using M = ascendc_cpu::detail::AxpyMaskT<T, U>;
  ascendc_cpu::detail::AxpyRepeat(dst, src, scalarValue, ascendc_cpu::detail::ContinuousMask<M>(mask, "Axpy", loc),
                                  repeatTime, repeatParams, "Axpy", loc);
}

template <typename T, typename U, bool isSetMask = true>
void Axpy(const LocalTensor<T>& dst, const LocalTensor<U>& src, const U& scalarValue, uint64_t mask[],
          const uint8_t repeatTime, const UnaryRepeatParams& repeatParams,
          ascendc_cpu::SrcLoc loc = ascendc_cpu::SrcLoc::Here()) {
  static_assert(isSetMask, "only isSetMask = true is modelled");
  static_assert(ascendc_cpu::detail::kAxpyPair<T, U>,
                "Axpy: dtype pair not supported on Atlas A2 (src half -> dst half / float, src float -> dst float)");
  using M = ascendc_cpu::detail::AxpyMaskT<T, U>;
  ascendc_cpu::detail::AxpyRepeat(dst, src, scalarValue, ascendc_cpu::detail::BitMask<M>(mask, "Axpy", loc),
                                  repeatTime, repeatParams, "Axpy", loc);
}

}  // namespace AscendC
