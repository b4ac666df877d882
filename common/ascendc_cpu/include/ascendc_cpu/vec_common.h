// Shared plumbing of the vector APIs (count form, documented as "tensor前n个数据计算"):
// operands are local tensors starting 32-byte aligned; sources must have been written.
#pragma once
#include <algorithm>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "ascendc_cpu/local_tensor.h"

namespace ascendc_cpu::detail {

inline uint64_t CheckedCount(int32_t count, uint64_t scale, const char* api, SrcLoc loc) {
  if (count < 0) Fail(check::kApiConstraint, loc, std::string(api) + ": negative count " + std::to_string(count));
  return static_cast<uint64_t>(count) * scale;
}

template <class T>
const T* VecSrc(const AscendC::LocalTensor<T>& t, uint64_t n, const char* api, SrcLoc loc, uint32_t align = 32) {
  return reinterpret_cast<const T*>(ReadLocal(t.Desc(), 0, static_cast<int64_t>(n * sizeof(T)), align, api, loc));
}
template <class T>
T* VecDst(const AscendC::LocalTensor<T>& t, uint64_t n, const char* api, SrcLoc loc, uint32_t align = 32) {
  return reinterpret_cast<T*>(WriteLocal(t.Desc(), 0, static_cast<int64_t>(n * sizeof(T)), align, api, loc));
}
inline void CountVectorOp(SrcLoc loc) { VectorOpDone(loc); }  // counts it and ends the V instruction

// Arithmetic the way the vector unit does it: in the operand type (half and bfloat16_t
// results are rounded to the type after every operation).
template <class T>
struct Arith {
  using Compute = T;
};
template <>
struct Arith<half> {
  using Compute = float;
};
template <>
struct Arith<bfloat16_t> {
  using Compute = float;
};
template <class T>
using ComputeT = typename Arith<T>::Compute;

// Element-wise driver: dst[i] = f(i) for i < n, with every source checked before dst is marked.
template <class T, class F>
void Elementwise(const AscendC::LocalTensor<T>& dst, uint64_t n, const char* api, SrcLoc loc, F&& f) {
  T* d = VecDst(dst, n, api, loc);
  for (uint64_t i = 0; i < n; ++i) d[i] = f(i);
  CountVectorOp(loc);
}

template <class T>
struct Identity {
  using type = T;
};

}  // namespace ascendc_cpu::detail
