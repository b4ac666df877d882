// Reductions over the first `count` elements (documented count form):
//   ReduceSum(dst, src, work, count)            dst[0] = sum
//   ReduceMax/ReduceMin(dst, src, work, count, calIndex)
//                                               dst[0] = max/min; with calIndex dst[1] holds
//                                               the index of its first occurrence as an integer
//                                               bit pattern (uint32 for float, uint16 for half):
//                                               read it with ReinterpretCast.
// dst must be 2*sizeof(T)-aligned, src 32-byte aligned; `work` is scratch the API may clobber
// (the emulator leaves it alone). The sum is accumulated in double and rounded once, which
// can differ in the last bits from the hardware's tree of partial sums.
#pragma once
#include <cstring>
#include <type_traits>

#include "ascendc_cpu/dtype_support.h"
#include "ascendc_cpu/vec_common.h"

namespace ascendc_cpu::detail {

template <class T, class Better>
void ReduceBest(const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& src, const AscendC::LocalTensor<T>& work,
                int32_t count, bool cal_index, const char* api, SrcLoc loc, Better better) {
  RuntimeDtype(kFloatTypes<T>, api, "half/float", loc);  // debug-run check of the A2 implementation
  const uint64_t n = CheckedCount(count, 1, api, loc);
  if (n == 0) Fail(check::kApiConstraint, loc, std::string(api) + " of 0 elements");
  WriteLocal(work.Desc(), 0, 0, 32, api, loc);
  const T* s = VecSrc(src, n, api, loc);
  uint64_t best = 0;
  for (uint64_t i = 1; i < n; ++i) {
    if (better(static_cast<ComputeT<T>>(s[i]), static_cast<ComputeT<T>>(s[best]))) best = i;
  }
  const T value = s[best];
  T* d = VecDst(dst, cal_index ? 2 : 1, api, loc, 2 * sizeof(T));
  d[0] = value;
  if (cal_index) {
    using Index = std::conditional_t<sizeof(T) == 2, uint16_t, uint32_t>;
    const auto idx = static_cast<Index>(best);
    std::memcpy(static_cast<void*>(d + 1), &idx, sizeof idx);
  }
  CountVectorOp(loc);
}

}  // namespace ascendc_cpu::detail

namespace AscendC {

template <class T>
void ReduceSum(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& work, int32_t count,
               ascendc_cpu::SrcLoc loc = ascendc_cpu::SrcLoc::Here()) {
  using namespace ascendc_cpu::detail;
  RuntimeDtype(kFloatTypes<T>, "ReduceSum", "half/float", loc);  // debug-run check of the A2 implementation
  const uint64_t n = CheckedCount(count, 1, "ReduceSum", loc);
  WriteLocal(work.Desc(), 0, 0, 32, "ReduceSum", loc);
  const T* s = VecSrc(src, n, "ReduceSum", loc);
  double sum = 0;
  for (uint64_t i = 0; i < n; ++i) sum += static_cast<double>(static_cast<ComputeT<T>>(s[i]));
  VecDst(dst, 1, "ReduceSum", loc, 2 * sizeof(T))[0] = static_cast<T>(static_cast<ComputeT<T>>(sum));
  CountVectorOp(loc);
}

template <class T>
void ReduceMax(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& work, int32_t count,
               bool calIndex = false, ascendc_cpu::SrcLoc loc = ascendc_cpu::SrcLoc::Here()) {
  ascendc_cpu::detail::ReduceBest(dst, src, work, count, calIndex, "ReduceMax", loc, [](auto a, auto b) { return a > b; });
}

template <class T>
void ReduceMin(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& work, int32_t count,
               bool calIndex = false, ascendc_cpu::SrcLoc loc = ascendc_cpu::SrcLoc::Here()) {
  ascendc_cpu::detail::ReduceBest(dst, src, work, count, calIndex, "ReduceMin", loc, [](auto a, auto b) { return a < b; });
}

}  // namespace AscendC
