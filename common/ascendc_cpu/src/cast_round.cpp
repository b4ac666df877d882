#include <cfloat>
#include <cmath>

#include "ascendc_cpu/cast.h"

namespace ascendc_cpu::detail {
namespace {

using AscendC::RoundMode;

// Rounds t (a value in units of the target's last place) to an integer per mode.
double RoundUnits(double t, RoundMode mode) {
  switch (mode) {
    case RoundMode::CAST_FLOOR: return std::floor(t);
    case RoundMode::CAST_CEIL: return std::ceil(t);
    case RoundMode::CAST_TRUNC: return std::trunc(t);
    case RoundMode::CAST_ROUND: return std::round(t);  // ties away from zero
    case RoundMode::CAST_ODD: {
      const double f = std::floor(t);
      if (f == t) return t;
      return std::fmod(f, 2.0) != 0.0 ? f : f + 1.0;
    }
    case RoundMode::CAST_NONE:
    case RoundMode::CAST_RINT:
    default: {
      const double f = std::floor(t), diff = t - f;
      if (diff < 0.5) return f;
      if (diff > 0.5) return f + 1.0;
      return std::fmod(f, 2.0) == 0.0 ? f : f + 1.0;  // ties to even
    }
  }
}

}  // namespace

double RoundToFloat(double x, int mant_bits, int emin, double max_finite, RoundMode mode) {
  if (std::isnan(x) || std::isinf(x) || x == 0.0) return x;
  int exp2 = 0;
  std::frexp(std::fabs(x), &exp2);          // |x| = m * 2^exp2, m in [0.5, 1)
  const int e = std::max(exp2 - 1, emin);   // exponent of the leading bit (subnormals: emin)
  const double ulp = std::ldexp(1.0, e - (mant_bits - 1));
  const double r = RoundUnits(x / ulp, mode) * ulp;
  if (std::fabs(r) <= max_finite) return r;
  // Beyond the largest finite value: modes that round away from the value's sign direction
  // stop at max_finite, the others reach infinity (IEEE 754 directed rounding).
  const bool neg = x < 0;
  const bool to_max = mode == RoundMode::CAST_TRUNC || mode == RoundMode::CAST_ODD ||
                      (mode == RoundMode::CAST_FLOOR && !neg) || (mode == RoundMode::CAST_CEIL && neg);
  const double big = to_max ? max_finite : INFINITY;
  return neg ? -big : big;
}

int64_t RoundToInt(double x, int64_t lo, int64_t hi, RoundMode mode, SrcLoc loc) {
  if (mode == RoundMode::CAST_ODD) Fail(check::kApiConstraint, loc, "Cast: CAST_ODD applies to float -> half only");
  if (std::isnan(x)) return 0;
  const double r = RoundUnits(x, mode);
  if (r <= static_cast<double>(lo)) return lo;
  if (r >= static_cast<double>(hi)) return hi;
  return static_cast<int64_t>(r);
}

}  // namespace ascendc_cpu::detail
