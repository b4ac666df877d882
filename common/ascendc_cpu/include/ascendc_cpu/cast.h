// Cast(dst, src, RoundMode, count): element-wise type conversion with the documented rounding
// modes (CAST_NONE = CAST_RINT when the conversion loses precision; CAST_ODD = round to odd).
// Floating targets round exactly per mode from the source value; results beyond the target's
// range follow IEEE directed rounding (to infinity or to the largest finite value). Integer
// targets round per mode and saturate; NaN converts to 0. float -> float rounds to an integral value.
// Atlas A2 support (impl/basic_api/dav_c220/kernel_operator_vec_vconv_impl.h, Cast.md): only the
// pairs of CastModes() exist (others: static_assert, as there is no intrinsic for them), and
// each pair takes only its listed round modes (others: api-constraint at run time; e.g.
// float -> bfloat16_t has no CAST_NONE, float -> int32_t needs an explicit rounding).
// int32_t -> half goes through the deq-scale register (SetDeqScale), which is not modelled.
#pragma once
#include <cmath>
#include <type_traits>

#include "ascendc_cpu/dtype_support.h"
#include "ascendc_cpu/vec_common.h"

namespace ascendc_cpu::detail {

// Rounds x to a binary floating format with `mant_bits` significand bits (incl. the implicit
// one), minimum normal exponent `emin` and largest finite value `max_finite`.
double RoundToFloat(double x, int mant_bits, int emin, double max_finite, AscendC::RoundMode mode);
// Rounds x to an integer in [lo, hi]; CAST_ODD is not an integer mode (api-constraint).
int64_t RoundToInt(double x, int64_t lo, int64_t hi, AscendC::RoundMode mode, SrcLoc loc);

// float -> float Cast: rounds to an integral value by the mode (CAST_RINT nearest even, CAST_ROUND
// half away from zero, CAST_FLOOR, CAST_CEIL, CAST_TRUNC), as the A2 vconv_f322f32{r,a,f,c,z} do
// (the math library's cos uses CAST_FLOOR this way); NaN, infinities and -0 pass through.
inline float RoundToIntegral(float x, AscendC::RoundMode mode) {
  switch (mode) {
    case AscendC::RoundMode::CAST_FLOOR: return std::floor(x);
    case AscendC::RoundMode::CAST_CEIL: return std::ceil(x);
    case AscendC::RoundMode::CAST_ROUND: return std::round(x);
    case AscendC::RoundMode::CAST_TRUNC: return std::trunc(x);
    default: return std::nearbyint(x);  // CAST_RINT (the only other mode the pair takes)
  }
}

template <class T>
double ToDouble(T v) {
  return static_cast<double>(static_cast<std::conditional_t<std::is_integral_v<T>, T, float>>(v));
}

template <class D>
D FromDouble(double x, AscendC::RoundMode mode, SrcLoc loc) {
  if constexpr (std::is_same_v<D, float>) {
    return static_cast<float>(RoundToFloat(x, 24, -126, 3.4028234663852886e38, mode));
  } else if constexpr (std::is_same_v<D, half>) {
    return static_cast<half>(RoundToFloat(x, 11, -14, 65504.0, mode));
  } else if constexpr (std::is_same_v<D, bfloat16_t>) {
    return bfloat16_t(static_cast<float>(RoundToFloat(x, 8, -126, 3.3895313892515355e38, mode)));
  } else {
    static_assert(std::is_integral_v<D>, "Cast: unsupported destination type");
    return static_cast<D>(RoundToInt(x, static_cast<int64_t>(std::numeric_limits<D>::min()),
                                     static_cast<int64_t>(std::numeric_limits<D>::max()), mode, loc));
  }
}

}  // namespace ascendc_cpu::detail

namespace AscendC {

template <class D, class S>
void Cast(const LocalTensor<D>& dst, const LocalTensor<S>& src, const RoundMode& mode, uint32_t count,
          ascendc_cpu::SrcLoc loc = ascendc_cpu::SrcLoc::Here()) {
  using namespace ascendc_cpu::detail;
  constexpr unsigned modes = CastModes<D, S>();
  static_assert(modes != ~0u, "Cast: no such conversion on Atlas A2 (see CastModes in dtype_support.h)");
  if (((modes >> static_cast<unsigned>(mode)) & 1u) == 0) {
    Fail(ascendc_cpu::check::kApiConstraint, loc,
         modes == 0 ? std::string("Cast: int32_t -> half scales by the SetDeqScale register, which is not modelled")
                    : "Cast: round mode " + std::to_string(static_cast<int>(mode)) +
                          " is not supported for this type pair on Atlas A2 (the hardware leaves dst unconverted)");
  }
  const S* s = VecSrc(src, count, "Cast", loc);
  std::vector<D> out(count);
  for (uint32_t i = 0; i < count; ++i) {
    if constexpr (std::is_same_v<D, float> && std::is_same_v<S, float>) {
      out[i] = RoundToIntegral(s[i], mode);  // vconv_f322f32{r,f,c,a,z}: an integer, kept in float
    } else {
      out[i] = FromDouble<D>(ToDouble(s[i]), mode, loc);
    }
  }
  D* d = VecDst(dst, count, "Cast", loc);
  std::copy(out.begin(), out.end(), d);
  CountVectorOp(loc);
}

// Scalar conversion (documented ScalarCast; older toolkits call it Cast<T, U, mode>(value)).
template <class T, class U, RoundMode mode>
U ScalarCast(T value) {
  return ascendc_cpu::detail::FromDouble<U>(ascendc_cpu::detail::ToDouble(value), mode, ascendc_cpu::SrcLoc::Here());
}

inline bfloat16_t ToBfloat16(float value) { return bfloat16_t(value); }
inline float ToFloat(bfloat16_t value) { return static_cast<float>(value); }

}  // namespace AscendC
