// Unary element-wise vector ops, count form: dst[i] = f(src[i]) for i < count (documented
// Relu, Exp, Ln, Abs, Sqrt, Rsqrt, Reciprocal, Not). half / bfloat16_t are computed in float and
// rounded once; the hardware's transcendental units may differ in the last bits. Each also has
// the level-0 mask / repeatTime / UnaryRepeatParams forms (vec_repeat.h).
#pragma once
#include <cmath>

#include "ascendc_cpu/dtype_support.h"
#include "ascendc_cpu/vec_common.h"
#include "ascendc_cpu/vec_repeat.h"

namespace ascendc_cpu::detail {

template <class T, class Op>
void Unary(const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& src, int32_t count, const char* api,
           SrcLoc loc, Op op) {
  const uint64_t n = CheckedCount(count, 1, api, loc);
  const T* s = VecSrc(src, n, api, loc);
  using C = ComputeT<T>;
  Elementwise(dst, n, api, loc, [&](uint64_t i) { return static_cast<T>(op(static_cast<C>(s[i]))); });
}

template <class T, bool isSetMask, class Op>
void UnaryRepeat(const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& src, const RepeatMask& mask,
                 uint8_t repeat, const AscendC::UnaryRepeatParams& p, const char* api, SrcLoc loc, Op op) {
  static_assert(isSetMask, "only isSetMask = true is modelled");
  RepeatApply<T, 1>({&dst.Desc(), p.dstBlkStride, p.dstRepStride}, {{{&src.Desc(), p.srcBlkStride, p.srcRepStride}}},
                    mask, repeat, api, loc, [&](const auto& v) { return op(v[0]); });
}

}  // namespace ascendc_cpu::detail

#define ASCENDC_CPU_UNARY(NAME, EXPR, OK)                                                                         \
  namespace AscendC {                                                                                           \
  template <class T>                                                                                            \
  void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, int32_t count,                                \
            ascendc_cpu::SrcLoc loc = ascendc_cpu::SrcLoc::Here()) {                                            \
    static_assert(ascendc_cpu::detail::OK<T>, #NAME ": dtype not supported on Atlas A2");                      \
    ascendc_cpu::detail::Unary(dst, src, count, #NAME, loc, [](auto x) {                                        \
      using C = decltype(x);                                                                                    \
      (void)sizeof(C);                                                                                          \
      return EXPR;                                                                                              \
    });                                                                                                         \
  }                                                                                                             \
  template <class T, bool isSetMask = true>                                                                     \
  void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, uint64_t mask, uint8_t repeatTime,            \
            const UnaryRepeatParams& p, ascendc_cpu::SrcLoc loc = ascendc_cpu::SrcLoc::Here()) {                \
    static_assert(ascendc_cpu::detail::OK<T>, #NAME ": dtype not supported on Atlas A2");                      \
    ascendc_cpu::detail::UnaryRepeat<T, isSetMask>(dst, src, ascendc_cpu::detail::ContinuousMask<T>(mask, #NAME, loc), \
        repeatTime, p, #NAME, loc, [](auto x) { using C = decltype(x); (void)sizeof(C); return EXPR; });         \
  }                                                                                                             \
  template <class T, bool isSetMask = true>                                                                     \
  void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, uint64_t mask[], uint8_t repeatTime,          \
            const UnaryRepeatParams& p, ascendc_cpu::SrcLoc loc = ascendc_cpu::SrcLoc::Here()) {                \
    static_assert(ascendc_cpu::detail::OK<T>, #NAME ": dtype not supported on Atlas A2");                      \
    ascendc_cpu::detail::UnaryRepeat<T, isSetMask>(dst, src, ascendc_cpu::detail::BitMask<T>(mask, #NAME, loc), \
        repeatTime, p, #NAME, loc, [](auto x) { using C = decltype(x); (void)sizeof(C); return EXPR; });         \
  }                                                                                                             \
  }

ASCENDC_CPU_UNARY(Relu, x > C(0) ? x : C(0), kReluTypes)
ASCENDC_CPU_UNARY(Exp, static_cast<C>(std::exp(x)), kFloatTypes)
ASCENDC_CPU_UNARY(Ln, static_cast<C>(std::log(x)), kFloatTypes)
ASCENDC_CPU_UNARY(Abs, x < C(0) ? C(-x) : x, kFloatTypes)
ASCENDC_CPU_UNARY(Sqrt, static_cast<C>(std::sqrt(x)), kFloatTypes)
ASCENDC_CPU_UNARY(Rsqrt, static_cast<C>(C(1) / std::sqrt(x)), kFloatTypes)
ASCENDC_CPU_UNARY(Reciprocal, static_cast<C>(C(1) / x), kFloatTypes)
ASCENDC_CPU_UNARY(Not, static_cast<C>(~x), kBitTypes)

#undef ASCENDC_CPU_UNARY
