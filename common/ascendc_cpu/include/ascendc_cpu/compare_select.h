// Compare / Compares and Select, count form (documented):
//   Compare(dst, src0, src1, CMPMODE, count)   bit i of dst (LSB first within each byte) =
//                                              src0[i] <op> src1[i]; count * sizeof(T) must
//                                              be a multiple of 256 bytes (one repeat)
//   Compares(dst, src0, scalar, CMPMODE, count) the same against a scalar
//   Select(dst, selMask, src0, src1, SELMODE::VSEL_TENSOR_TENSOR_MODE, count)
//   Select(dst, selMask, src0, scalar, SELMODE::VSEL_TENSOR_SCALAR_MODE, count)
//                                              dst[i] = bit i of selMask ? src0[i] : src1
#pragma once
#include "ascendc_cpu/dtype_support.h"
#include "ascendc_cpu/vec_common.h"

namespace ascendc_cpu::detail {

template <class C>
bool CompareOp(C a, C b, AscendC::CMPMODE mode) {
  switch (mode) {
    case AscendC::CMPMODE::LT: return a < b;
    case AscendC::CMPMODE::GT: return a > b;
    case AscendC::CMPMODE::EQ: return a == b;
    case AscendC::CMPMODE::LE: return a <= b;
    case AscendC::CMPMODE::GE: return a >= b;
    case AscendC::CMPMODE::NE: return a != b;
  }
  return false;
}

template <class U, class F>
void WriteBits(const AscendC::LocalTensor<U>& dst, uint64_t n, const char* api, SrcLoc loc, F bit) {
  std::vector<uint8_t> bits((n + 7) / 8, 0);
  for (uint64_t i = 0; i < n; ++i) bits[i / 8] |= static_cast<uint8_t>(bit(i) ? 1u << (i % 8) : 0u);
  uint8_t* d = WriteLocal(dst.Desc(), 0, static_cast<int64_t>(bits.size()), 32, api, loc);
  std::copy(bits.begin(), bits.end(), d);
  CountVectorOp(loc);
}

template <class T, class U, class S>
void SelectImpl(const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<U>& mask, const AscendC::LocalTensor<T>& src0,
                uint32_t count, SrcLoc loc, S src1_at) {
  const char* api = "Select";
  RuntimeDtype(kFloatTypes<T> && kOneOf<U, uint8_t, uint16_t, uint32_t, uint64_t>, api,
               "dst/src half/float; selMask uint8_t/uint16_t/uint32_t/uint64_t", loc);
  const uint8_t* m = ReadLocal(mask.Desc(), 0, (count + 7) / 8, 32, api, loc);
  const T* a = VecSrc(src0, count, api, loc);
  std::vector<T> out(count);
  for (uint32_t i = 0; i < count; ++i) out[i] = (m[i / 8] >> (i % 8)) & 1u ? a[i] : src1_at(i);
  std::copy(out.begin(), out.end(), VecDst(dst, count, api, loc));
  CountVectorOp(loc);
}

}  // namespace ascendc_cpu::detail

namespace AscendC {

template <class T, class U>
void Compare(const LocalTensor<U>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1, CMPMODE mode,
             uint32_t count, ascendc_cpu::SrcLoc loc = ascendc_cpu::SrcLoc::Here()) {
  using namespace ascendc_cpu::detail;
  if (uint64_t{count} * sizeof(T) % ONE_REPEAT_BYTE_SIZE != 0) {
    Fail(ascendc_cpu::check::kApiConstraint, loc,
         "Compare: count * sizeof(T) = " + std::to_string(uint64_t{count} * sizeof(T)) + " bytes must be a multiple of 256");
  }
  // Atlas A2 (debug-run checks of the real implementation): dst uint8_t/int8_t bits; T half or
  // float, or int32_t with CMPMODE::EQ.
  RuntimeDtype(kOneOf<U, int8_t, uint8_t> && (kFloatTypes<T> || (std::is_same_v<T, int32_t> && mode == CMPMODE::EQ)),
               "Compare", "dst int8_t/uint8_t; src half/float, or int32_t with CMPMODE::EQ", loc);
  const T* a = VecSrc(src0, count, "Compare", loc);
  const T* b = VecSrc(src1, count, "Compare", loc);
  using C = ComputeT<T>;
  WriteBits(dst, count, "Compare", loc, [&](uint64_t i) { return CompareOp(static_cast<C>(a[i]), static_cast<C>(b[i]), mode); });
}

template <class T, class U>
void Compares(const LocalTensor<U>& dst, const LocalTensor<T>& src0, const T scalar, CMPMODE mode, uint32_t count, ascendc_cpu::SrcLoc loc = ascendc_cpu::SrcLoc::Here()) {
  using namespace ascendc_cpu::detail;
  RuntimeDtype(std::is_same_v<U, uint8_t> && (kFloatTypes<T> || (std::is_same_v<T, int32_t> && mode == CMPMODE::EQ)),
               "Compares", "dst uint8_t; src half/float, or int32_t with CMPMODE::EQ", loc);
  const T* a = VecSrc(src0, count, "Compares", loc);
  using C = ComputeT<T>;
  WriteBits(dst, count, "Compares", loc, [&](uint64_t i) { return CompareOp(static_cast<C>(a[i]), static_cast<C>(scalar), mode); });
}

template <class T, class U>
void Select(const LocalTensor<T>& dst, const LocalTensor<U>& selMask, const LocalTensor<T>& src0, const LocalTensor<T>& src1,
            SELMODE mode, uint32_t count, ascendc_cpu::SrcLoc loc = ascendc_cpu::SrcLoc::Here()) {
  using namespace ascendc_cpu::detail;
  if (mode != SELMODE::VSEL_TENSOR_TENSOR_MODE) {
    Fail(ascendc_cpu::check::kApiConstraint, loc, "Select with two tensors needs SELMODE::VSEL_TENSOR_TENSOR_MODE");
  }
  const T* b = VecSrc(src1, count, "Select", loc);
  SelectImpl(dst, selMask, src0, count, loc, [&](uint32_t i) { return b[i]; });
}

template <class T, class U>
void Select(const LocalTensor<T>& dst, const LocalTensor<U>& selMask, const LocalTensor<T>& src0, T scalar,
            SELMODE mode, uint32_t count,
            ascendc_cpu::SrcLoc loc = ascendc_cpu::SrcLoc::Here()) {
  using namespace ascendc_cpu::detail;
  if (mode != SELMODE::VSEL_TENSOR_SCALAR_MODE) {
    Fail(ascendc_cpu::check::kApiConstraint, loc, "Select with a scalar needs SELMODE::VSEL_TENSOR_SCALAR_MODE");
  }
  SelectImpl(dst, selMask, src0, count, loc, [&](uint32_t) { return scalar; });
}

}  // namespace AscendC
