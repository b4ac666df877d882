// Tensor-scalar vector ops, count form: dst[i] = src[i] op scalar (documented Adds, Muls, Maxs,
// Mins, LeakyRelu) and Duplicate (dst[i] = scalar). The scalar is converted to the tensor type.
// Each also has the level-0 mask / repeatTime forms (vec_repeat.h); Duplicate's level-0 form
// takes (mask, repeatTime, dstBlockStride, dstRepeatStride).
// The scalar is `const T& scalarValue` with T deduced from the tensors AND the scalar, as in the
// real API (kernel_operator_vec_binary_scalar_intf.h, kernel_operator_vec_duplicate_intf.h):
// Duplicate(int32Tensor, -1.0f, n) or Muls(halfTensor, halfTensor, 2.0f, n) do not compile.
// (The real API's second overload, `const U&` with PrimT<T> == U, accepts the same calls here,
// where PrimT<T> is T, so it is not repeated.)
#pragma once
#include "ascendc_cpu/dtype_support.h"
#include "ascendc_cpu/vec_common.h"
#include "ascendc_cpu/vec_repeat.h"

namespace ascendc_cpu::detail {

template <class T, class Op>
void Scalar(const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& src, T scalar, int32_t count,
            const char* api, SrcLoc loc, Op op) {
  const uint64_t n = CheckedCount(count, 1, api, loc);
  const T* s = VecSrc(src, n, api, loc);
  using C = ComputeT<T>;
  const C k = static_cast<C>(scalar);
  Elementwise(dst, n, api, loc, [&](uint64_t i) { return static_cast<T>(op(static_cast<C>(s[i]), k)); });
}

template <class T, bool isSetMask, class Op>
void ScalarRepeat(const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& src, T scalar, const RepeatMask& mask,
                  uint8_t repeat, const AscendC::UnaryRepeatParams& p, const char* api, SrcLoc loc, Op op) {
  static_assert(isSetMask, "only isSetMask = true is modelled");
  const ComputeT<T> k = static_cast<ComputeT<T>>(scalar);
  RepeatApply<T, 1>({&dst.Desc(), p.dstBlkStride, p.dstRepStride}, {{{&src.Desc(), p.srcBlkStride, p.srcRepStride}}},
                    mask, repeat, api, loc, [&](const auto& v) { return op(v[0], k); });
}

}  // namespace ascendc_cpu::detail

#define ASCENDC_CPU_SCALAR(NAME, EXPR, OK)                                                                      \
  namespace AscendC {                                                                                           \
  template <class T, bool isSetMask = true>                                                                     \
  void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const T& scalarValue, int32_t count,          \
            ascendc_cpu::SrcLoc loc = ascendc_cpu::SrcLoc::Here()) {                                            \
    static_assert(ascendc_cpu::detail::OK<T>, #NAME ": dtype not supported on Atlas A2");                      \
    ascendc_cpu::detail::Scalar(dst, src, scalarValue, count, #NAME, loc, [](auto a, auto b) { return EXPR; }); \
  }                                                                                                             \
  template <class T, bool isSetMask = true>                                                                     \
  void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const T& scalarValue, uint64_t mask,          \
            uint8_t repeatTime, const UnaryRepeatParams& p, ascendc_cpu::SrcLoc loc = ascendc_cpu::SrcLoc::Here()) { \
    static_assert(ascendc_cpu::detail::OK<T>, #NAME ": dtype not supported on Atlas A2");                      \
    ascendc_cpu::detail::ScalarRepeat<T, isSetMask>(dst, src, scalarValue,                                      \
        ascendc_cpu::detail::ContinuousMask<T>(mask, #NAME, loc), repeatTime, p, #NAME, loc,                    \
        [](auto a, auto b) { return EXPR; });                                                                   \
  }                                                                                                             \
  template <class T, bool isSetMask = true>                                                                     \
  void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const T& scalarValue, uint64_t mask[],        \
            uint8_t repeatTime, const UnaryRepeatParams& p, ascendc_cpu::SrcLoc loc = ascendc_cpu::SrcLoc::Here()) { \
    static_assert(ascendc_cpu::detail::OK<T>, #NAME ": dtype not supported on Atlas A2");                      \
    ascendc_cpu::detail::ScalarRepeat<T, isSetMask>(dst, src, scalarValue,                                      \
        ascendc_cpu::detail::BitMask<T>(mask, #NAME, loc), repeatTime, p, #NAME, loc,                           \
        [](auto a, auto b) { return EXPR; });                                                                   \
  }                                                                                                             \
  }

ASCENDC_CPU_SCALAR(Adds, a + b, kArithTypes)
ASCENDC_CPU_SCALAR(Muls, a * b, kArithTypes)
ASCENDC_CPU_SCALAR(Maxs, a > b ? a : b, kArithTypes)
ASCENDC_CPU_SCALAR(Mins, a < b ? a : b, kArithTypes)
ASCENDC_CPU_SCALAR(LeakyRelu, a >= decltype(a)(0) ? a : a * b, kFloatTypes)

#undef ASCENDC_CPU_SCALAR

namespace AscendC {

template <class T>
void Duplicate(const LocalTensor<T>& dst, const T& scalarValue, int32_t count,
               ascendc_cpu::SrcLoc loc = ascendc_cpu::SrcLoc::Here()) {
  static_assert(ascendc_cpu::detail::kDuplicateTypes<T>, "Duplicate: dtype not supported on Atlas A2");
  const uint64_t n = ascendc_cpu::detail::CheckedCount(count, 1, "Duplicate", loc);
  ascendc_cpu::detail::Elementwise(dst, n, "Duplicate", loc, [&](uint64_t) { return scalarValue; });
}

template <class T, bool isSetMask = true>
void Duplicate(const LocalTensor<T>& dst, const T& scalarValue, uint64_t mask, uint8_t repeatTime,
               uint16_t dstBlockStride, uint8_t dstRepeatStride, ascendc_cpu::SrcLoc loc = ascendc_cpu::SrcLoc::Here()) {
  static_assert(isSetMask, "only isSetMask = true is modelled");
  static_assert(ascendc_cpu::detail::kDuplicateTypes<T>, "Duplicate: dtype not supported on Atlas A2");
  using namespace ascendc_cpu::detail;
  RepeatApply<T, 0>({&dst.Desc(), dstBlockStride, dstRepeatStride}, {}, ContinuousMask<T>(mask, "Duplicate", loc), repeatTime,
                    "Duplicate", loc, [&](const auto&) { return static_cast<ComputeT<T>>(scalarValue); });
}

}  // namespace AscendC
