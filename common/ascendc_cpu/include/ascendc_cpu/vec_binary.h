// Binary element-wise vector ops, count form: dst[i] = src0[i] op src1[i] for i < count
// (documented Add, Sub, Mul, Div, Max, Min, And, Or). In-place use (dst == src) is allowed.
// Each also has the level-0 mask / repeatTime / BinaryRepeatParams forms (vec_repeat.h).
#pragma once
#include "ascendc_cpu/dtype_support.h"
#include "ascendc_cpu/vec_common.h"
#include "ascendc_cpu/vec_repeat.h"

namespace ascendc_cpu::detail {

template <class T, class Op>
void Binary(const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& src0, const AscendC::LocalTensor<T>& src1,
            int32_t count, const char* api, SrcLoc loc, Op op) {
  const uint64_t n = CheckedCount(count, 1, api, loc);
  const T* a = VecSrc(src0, n, api, loc);
  const T* b = VecSrc(src1, n, api, loc);
  using C = ComputeT<T>;
  Elementwise(dst, n, api, loc, [&](uint64_t i) { return static_cast<T>(op(static_cast<C>(a[i]), static_cast<C>(b[i]))); });
}

template <class T, bool isSetMask, class Op>
void BinaryRepeat(const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& src0,
                  const AscendC::LocalTensor<T>& src1, const RepeatMask& mask, uint8_t repeat,
                  const AscendC::BinaryRepeatParams& p, const char* api, SrcLoc loc, Op op) {
  static_assert(isSetMask, "only isSetMask = true is modelled");
  RepeatApply<T, 2>({&dst.Desc(), p.dstBlkStride, p.dstRepStride},
                    {{{&src0.Desc(), p.src0BlkStride, p.src0RepStride}, {&src1.Desc(), p.src1BlkStride, p.src1RepStride}}},
                    mask, repeat, api, loc, [&](const auto& v) { return op(v[0], v[1]); });
}

// And / Or count form on 32-bit types: the A2 implementation reinterprets the operands as
// int16_t and keeps `count` as the element count, so only the first half of the data is
// processed (it warns "not recommended"). Rejected here rather than silently truncated.
template <class T>
void BitCount32(const char* api, SrcLoc loc) {
  if constexpr (sizeof(T) == 4) {
    const std::string name(api);
    if (name == "And" || name == "Or") {
      Fail(check::kApiConstraint, loc,
           name + " count form on a 32-bit type processes only count 16-bit elements (half the data) on Atlas A2; "
                  "reinterpret the tensors as int16_t / uint16_t with twice the count");
    }
  }
}

}  // namespace ascendc_cpu::detail

#define ASCENDC_CPU_BINARY(NAME, EXPR, COUNT_OK, REPEAT_OK)                                                                        \
  namespace AscendC {                                                                                           \
  template <class T>                                                                                            \
  void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1, int32_t count,    \
            ascendc_cpu::SrcLoc loc = ascendc_cpu::SrcLoc::Here()) {                                            \
    static_assert(ascendc_cpu::detail::COUNT_OK<T>, #NAME ": dtype not supported on Atlas A2");                \
    ascendc_cpu::detail::BitCount32<T>(#NAME, loc);                                                             \
    ascendc_cpu::detail::Binary(dst, src0, src1, count, #NAME, loc, [](auto a, auto b) { return EXPR; });       \
  }                                                                                                             \
  template <class T, bool isSetMask = true>                                                                     \
  void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1, uint64_t mask,   \
            uint8_t repeatTime, const BinaryRepeatParams& p, ascendc_cpu::SrcLoc loc = ascendc_cpu::SrcLoc::Here()) { \
    static_assert(ascendc_cpu::detail::REPEAT_OK<T>, #NAME ": dtype not supported on Atlas A2");               \
    ascendc_cpu::detail::BinaryRepeat<T, isSetMask>(dst, src0, src1,                                            \
        ascendc_cpu::detail::ContinuousMask<T>(mask, #NAME, loc), repeatTime, p, #NAME, loc,                    \
        [](auto a, auto b) { return EXPR; });                                                                   \
  }                                                                                                             \
  template <class T, bool isSetMask = true>                                                                     \
  void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1, uint64_t mask[],       \
            uint8_t repeatTime, const BinaryRepeatParams& p, ascendc_cpu::SrcLoc loc = ascendc_cpu::SrcLoc::Here()) { \
    static_assert(ascendc_cpu::detail::REPEAT_OK<T>, #NAME ": dtype not supported on Atlas A2");               \
    ascendc_cpu::detail::BinaryRepeat<T, isSetMask>(dst, src0, src1, ascendc_cpu::detail::BitMask<T>(mask, #NAME, loc), \
        repeatTime, p, #NAME, loc, [](auto a, auto b) { return EXPR; });                                        \
  }                                                                                                             \
  }

ASCENDC_CPU_BINARY(Add, a + b, kArithTypes, kArithTypes)
ASCENDC_CPU_BINARY(Sub, a - b, kArithTypes, kArithTypes)
ASCENDC_CPU_BINARY(Mul, a * b, kArithTypes, kArithTypes)
ASCENDC_CPU_BINARY(Div, a / b, kFloatTypes, kFloatTypes)
ASCENDC_CPU_BINARY(Max, a > b ? a : b, kArithTypes, kArithTypes)
ASCENDC_CPU_BINARY(Min, a < b ? a : b, kArithTypes, kArithTypes)
ASCENDC_CPU_BINARY(And, a & b, kBitCountTypes, kBitTypes)
ASCENDC_CPU_BINARY(Or, a | b, kBitCountTypes, kBitTypes)

#undef ASCENDC_CPU_BINARY
