// Data types each vector API accepts on Atlas A2 (dav-c220), as the public AscendC
// implementation for that core checks them (impl/basic_api/dav_c220/*_impl.h in asc-devkit)
// and the API pages list them (docs/zh/api/SIMD-API/基础API/Memory矢量计算/...):
//  * where the real build rejects a type at compile time (a static_assert in the impl or no
//    overload of the intrinsic), the emulator rejects it with a static_assert;
//  * where the real implementation only checks it in a debug run (ASCENDC_ASSERT), the emulator
//    fails `api-constraint` at run time (RuntimeDtype).
#pragma once
#include <string>
#include <type_traits>

#include "ascendc_cpu/errors.h"
#include "ascendc_cpu/runtime.h"
#include "ascendc_cpu/types.h"

namespace AscendC {
// The primitive type of a tensor element type (TensorTrait is not modelled: the type itself).
template <class T>
using PrimT = T;
}  // namespace AscendC

namespace ascendc_cpu::detail {

template <class T, class... Ts>
inline constexpr bool kOneOf = (std::is_same_v<T, Ts> || ...);

// Type lists of Atlas A2, per API family.
template <class T>
inline constexpr bool kArithTypes = kOneOf<T, half, float, int16_t, int32_t>;  // Add Sub Mul Max Min Adds Muls Maxs Mins
template <class T>
inline constexpr bool kFloatTypes = kOneOf<T, half, float>;  // Div Exp Ln Abs Sqrt Rsqrt Reciprocal LeakyRelu
template <class T>
inline constexpr bool kReluTypes = kOneOf<T, half, float, int32_t>;
template <class T>
inline constexpr bool kBitTypes = kOneOf<T, int16_t, uint16_t>;  // And Or Not, level-0 forms
template <class T>
inline constexpr bool kBitCountTypes = kOneOf<T, int16_t, uint16_t, int32_t, uint32_t>;  // And Or Not, count form
// Axpy (dst T <- src U): Axpy.md's A2 table. dav_c220 only debug-asserts the pair and hands the types
// to the vaxpy intrinsic, as the count forms of Add & co. do: rejected here at compile time likewise.
template <class T, class U>
inline constexpr bool kAxpyPair = (std::is_same_v<T, half> && std::is_same_v<U, half>) ||
                                  (std::is_same_v<T, float> && std::is_same_v<U, float>) ||
                                  (std::is_same_v<T, float> && std::is_same_v<U, half>);
template <class T>
inline constexpr bool kDuplicateTypes = kOneOf<T, half, bfloat16_t, int16_t, uint16_t, int32_t, uint32_t, float>;

// Cast pairs with an Atlas A2 conversion (dst <- src), and the round modes each accepts.
// Pairs: compile time (no intrinsic for other pairs). Modes: run time (the real
// implementation only logs and does nothing, so dst is left unconverted).
template <class D, class S>
constexpr unsigned CastModes() {
  using M = AscendC::RoundMode;
  constexpr unsigned none = 1u << static_cast<unsigned>(M::CAST_NONE);
  constexpr unsigned odd = 1u << static_cast<unsigned>(M::CAST_ODD);
  constexpr unsigned directed = (1u << static_cast<unsigned>(M::CAST_RINT)) | (1u << static_cast<unsigned>(M::CAST_FLOOR)) |
                                (1u << static_cast<unsigned>(M::CAST_CEIL)) | (1u << static_cast<unsigned>(M::CAST_ROUND)) |
                                (1u << static_cast<unsigned>(M::CAST_TRUNC));
  if constexpr (std::is_same_v<D, half> && std::is_same_v<S, float>) return directed | odd | none;
  else if constexpr (std::is_same_v<D, float> && std::is_same_v<S, half>) return none;
  else if constexpr (std::is_same_v<D, float> && std::is_same_v<S, bfloat16_t>) return none;
  else if constexpr (std::is_same_v<D, bfloat16_t> && std::is_same_v<S, float>) return directed;
  else if constexpr (std::is_same_v<D, float> && std::is_same_v<S, float>) return directed;
  else if constexpr (std::is_same_v<D, int32_t> && std::is_same_v<S, float>) return directed;
  else if constexpr (std::is_same_v<D, int16_t> && std::is_same_v<S, float>) return directed;
  else if constexpr (std::is_same_v<D, int64_t> && std::is_same_v<S, float>) return directed;
  else if constexpr (std::is_same_v<D, int32_t> && std::is_same_v<S, half>) return directed;
  else if constexpr (std::is_same_v<D, int16_t> && std::is_same_v<S, half>) return directed;
  else if constexpr (std::is_same_v<D, int8_t> && std::is_same_v<S, half>) return directed | none;
  else if constexpr (std::is_same_v<D, uint8_t> && std::is_same_v<S, half>) return directed | none;
  else if constexpr (std::is_same_v<D, int32_t> && std::is_same_v<S, bfloat16_t>) return directed;
  else if constexpr (std::is_same_v<D, float> && std::is_same_v<S, int32_t>) return directed | none;
  else if constexpr (std::is_same_v<D, half> && std::is_same_v<S, int16_t>) return directed | none;
  else if constexpr (std::is_same_v<D, float> && std::is_same_v<S, int16_t>) return none;
  else if constexpr (std::is_same_v<D, half> && std::is_same_v<S, int8_t>) return none;
  else if constexpr (std::is_same_v<D, half> && std::is_same_v<S, uint8_t>) return none;
  else if constexpr (std::is_same_v<D, int16_t> && std::is_same_v<S, int32_t>) return none;
  else if constexpr (std::is_same_v<D, int64_t> && std::is_same_v<S, int32_t>) return none;
  else if constexpr (std::is_same_v<D, int32_t> && std::is_same_v<S, int64_t>) return none;
  else if constexpr (std::is_same_v<D, float> && std::is_same_v<S, int64_t>) return directed;
  else if constexpr (std::is_same_v<D, half> && std::is_same_v<S, int32_t>) return 0;  // needs SetDeqScale: not modelled
  else return ~0u;  // no such conversion
}

// The debug-run-only dtype checks of the real implementation, as an api-constraint error.
inline void RuntimeDtype(bool ok, const char* api, const char* allowed, SrcLoc loc) {
  if (!ok) Fail(check::kApiConstraint, loc, std::string(api) + ": dtype not supported on Atlas A2 (supported: " + allowed + ")");
}

}  // namespace ascendc_cpu::detail
