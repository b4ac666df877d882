// Reductions over the first `count` elements (documented count form):
//   ReduceSum(dst, src, work, count)            dst[0] = sum
//   ReduceMax/ReduceMin(dst, src, work, count, calIndex)
//                                               dst[0] = max/min; with calIndex dst[1] holds
//                                               the index of its first occurrence as an integer
//                                               bit pattern (uint32 for float, uint16 for half):
//                                               read it with ReinterpretCast.
// dst must be 2*sizeof(T)-aligned, src 32-byte aligned. The sum is accumulated in double and
// rounded once, which can differ in the last bits from the hardware's tree of partial sums.
//
// The work tensor (sharedTmpBuffer) on dav-c220:
//  * ReduceMax / ReduceMin keep their per-repeat (value, index) pairs there. It must hold the
//    elements asc-tools' CPU-debug check asks for (kernel_vec_reduce_check.cpp,
//    CheckWorkTensorOffset; ReduceWorkElems below) and what the hardware writes there is
//    garbage afterwards (the result in dst is written last, so dst may overlap work). work may
//    be src (ReduceMax.md: the buffer may reuse the source's space).
//  * ReduceSum's count form runs one vcadd over the count (CheckFunVecReduceMode2, ReduceSumImpl
//    (dst, src, count); ReduceSum.md: A2 uses 方式一, "sharedTmpBuffer不会被使用"): work is not
//    touched and has no minimum size.
#pragma once
#include <cstring>
#include <type_traits>

#include "ascendc_cpu/dtype_support.h"
#include "ascendc_cpu/vec_common.h"

namespace ascendc_cpu::detail {

// Elements of work ReduceMax / ReduceMin need for `count` elements of `type_size` bytes: the
// repeat count is count / (256 / type_size), at least 1; without calIndex every repeat leaves a
// (value, index) pair; with it the later rounds go after the first's, each 32-byte aligned.
inline uint64_t ReduceWorkElems(uint64_t count, uint32_t type_size, bool cal_index) {
  const uint64_t per_rep = 256 / type_size;
  const uint64_t repeats = count < per_rep ? 1 : count / per_rep;
  if (!cal_index) return 2 * repeats;
  if (repeats == 1) return 2;
  const auto align = [&](uint64_t e) { return (e * type_size + 31) / 32 * 32 / type_size; };
  const auto outputs = [&](uint64_t in) { return 2 * ((in + per_rep - 1) / per_rep); };
  const uint64_t start2 = align(2 * repeats);
  const uint64_t out2 = outputs(2 * repeats);
  if (out2 == 2) return start2 + 2;
  const uint64_t start3 = align(start2 + out2);
  if (out2 <= per_rep) return start3 + 2;
  return align(start3 + outputs(out2)) + 2;
}
// What the hardware writes into work: all of it, except with calIndex over one repeat and no
// tail (the single vcmax writes dst directly).
inline uint64_t ReduceWorkClobbered(uint64_t count, uint32_t type_size, bool cal_index) {
  const uint64_t per_rep = 256 / type_size;
  if (cal_index && count <= per_rep) return 0;
  return ReduceWorkElems(count, type_size, cal_index);
}

template <class T, class Better>
void ReduceBest(const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& src, const AscendC::LocalTensor<T>& work,
                int32_t count, bool cal_index, const char* api, SrcLoc loc, Better better) {
  RuntimeDtype(kFloatTypes<T>, api, "half/float", loc);  // debug-run check of the A2 implementation
  const uint64_t n = CheckedCount(count, 1, api, loc);
  if (n == 0) Fail(check::kApiConstraint, loc, std::string(api) + " of 0 elements");
  WriteLocal(work.Desc(), 0, 0, 32, api, loc);
  const uint64_t need = ReduceWorkElems(n, sizeof(T), cal_index);
  const uint64_t given = work.Desc().extent > 0 ? static_cast<uint64_t>(work.Desc().extent) / sizeof(T) : 0;
  if (given < need) {
    Fail(check::kApiConstraint, loc,
         std::string(api) + " of " + std::to_string(n) + " elements" + (cal_index ? " with calIndex" : "") +
             ": the work tensor needs at least " + std::to_string(need) + " elements (" +
             std::to_string(need * sizeof(T)) + " bytes), given " + std::to_string(given) +
             " (asc-tools kernel_vec_reduce_check.cpp; ReduceMax.md sharedTmpBuffer size)");
  }
  const T* s = VecSrc(src, n, api, loc);
  uint64_t best = 0;
  for (uint64_t i = 1; i < n; ++i) {
    if (better(static_cast<ComputeT<T>>(s[i]), static_cast<ComputeT<T>>(s[best]))) best = i;
  }
  const T value = s[best];
  // The per-repeat pairs the hardware leaves in work (after src was read: work may be src).
  WriteGarbage(work.Desc(), 0, static_cast<int64_t>(ReduceWorkClobbered(n, sizeof(T), cal_index) * sizeof(T)), api, loc);
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
