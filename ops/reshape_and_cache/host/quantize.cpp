// The quantising row transform, written with GCC/Clang vector extensions (no intrinsics) and
// compiled for the SSE2 / NEON baseline, AVX2 and AVX-512, chosen at run time (never
// -march=native). Every build computes the same codes: float32 division and addition round to
// nearest even in IEEE arithmetic on every ISA, and the rest is exact (conversions, clamps,
// integer bit work, products by powers of two). The one a*b + c (fp8 subnormals) has an exact
// product, so FMA contraction cannot change a result either.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "ascend_ops/cpu_isa.hpp"
#include "host/quantize.h"
#include "host/reshape_and_cache.h"
#include "host/validate_quant.h"

// The vector helpers are always inlined into the function of their ISA: no vector crosses a call
// boundary, so GCC's note that such a return "changes the ABI" does not apply.
#pragma GCC diagnostic ignored "-Wpsabi"

namespace aop::reshape_and_cache {
namespace {

template <int N>
struct Vec {
  typedef float F __attribute__((vector_size(4 * N)));
  typedef int32_t I __attribute__((vector_size(4 * N)));
  typedef uint32_t U __attribute__((vector_size(4 * N)));
  typedef uint16_t U16 __attribute__((vector_size(2 * N)));
  typedef uint8_t U8 __attribute__((vector_size(N)));
};

template <class To, class From>
__attribute__((always_inline)) inline To bit_cast(const From& f) {
  To t;
  std::memcpy(&t, &f, sizeof t);
  return t;
}

// N source elements as float32, exactly.
template <int N>
__attribute__((always_inline)) inline typename Vec<N>::F load(aop_dtype in, const void* p) {
  using V = Vec<N>;
  if (in == AOP_DTYPE_FLOAT32) {
    typename V::F f;
    std::memcpy(&f, p, sizeof f);
    return f;
  }
  typename V::U16 h;
  std::memcpy(&h, p, sizeof h);
  const typename V::U u = __builtin_convertvector(h, typename V::U);
  if (in == AOP_DTYPE_BFLOAT16) return bit_cast<typename V::F>(u << 16);
  // float16: normals by moving exponent and mantissa into float32's place and rebiasing
  // (+ (127 - 15) << 23); subnormals (and zero) as their integer mantissa times 2^-24, a normal
  // float32: no float32 subnormal is formed, so flush-to-zero modes cannot change a value;
  // inf / NaN get the all-ones exponent.
  const typename V::U sign = (u & 0x8000u) << 16, em = u & 0x7fffu;
  const typename V::U normal = (em << 13) + 0x38000000u;
  const typename V::F sub = __builtin_convertvector(em, typename V::F) * 0x1p-24f;
  const typename V::U is_sub = bit_cast<typename V::U>(em < 0x400u);
  const typename V::U finite = (bit_cast<typename V::U>(sub) & is_sub) | (normal & ~is_sub);
  const typename V::U special = (em << 13) | 0x7f800000u;
  const typename V::U is_special = bit_cast<typename V::U>(em >= 0x7c00u);
  return bit_cast<typename V::F>(sign | (finite & ~is_special) | (special & is_special));
}

// int8: clamp(round_half_even(fl32(fl32(x / s) + o)), -128, 127). The clamp comes first (round
// is monotone and the bounds are integers, so the order does not matter); a NaN clamps to -128.
template <int N>
__attribute__((always_inline)) inline typename Vec<N>::U8 encode_int8(typename Vec<N>::F y) {
  using V = Vec<N>;
  const typename V::F lo = typename V::F{} - 128.0f, hi = typename V::F{} + 127.0f;
  typename V::F c = y > hi ? hi : y;
  c = c >= lo ? c : lo;
  // |c| <= 128 < 2^22: adding 1.5 * 2^23 leaves no fraction bits, so the sum is c rounded to
  // an integer, half to even, and subtracting it back is exact.
  const typename V::F r = (c + 0x1.8p23f) - 0x1.8p23f;
  const typename V::I i = __builtin_convertvector(r, typename V::I);
  return __builtin_convertvector(i, typename V::U8);
}

// fp8 with M mantissa bits and exponent bias B, max finite MAX: the round-to-nearest-even code of
// clamp(y, -MAX, MAX), subnormals included, -0.0 as the negative-zero byte, NaN as 0x7f | sign.
template <int N, int M, int B>
__attribute__((always_inline)) inline typename Vec<N>::U8 encode_fp8(typename Vec<N>::F y, float max) {
  using V = Vec<N>;
  const typename V::U bits = bit_cast<typename V::U>(y);
  const typename V::U sign = (bits >> 24) & 0x80u;
  const typename V::U abs_bits = bits & 0x7fffffffu;
  const typename V::U is_nan = bit_cast<typename V::U>(abs_bits > 0x7f800000u);
  typename V::F a = bit_cast<typename V::F>(abs_bits);
  const typename V::F vmax = typename V::F{} + max;
  a = a > vmax ? vmax : a;  // saturate (inf included)
  // Subnormal codes: a / 2^(1 - B - M) rounded to an integer, half to even (<= 2^M, exact); a
  // is capped at the smallest normal first so the (unused) normal lanes stay in range.
  constexpr float kMinNormal = 1.0f / static_cast<float>(1ull << (B - 1));  // 2^(1 - B)
  constexpr float kSubUnit = static_cast<float>(1ull << (B - 1 + M));      // 2^(B - 1 + M)
  const typename V::F vmin_normal = typename V::F{} + kMinNormal;
  const typename V::F small = a < vmin_normal ? a : vmin_normal;
  const typename V::F q = (small * kSubUnit + 0x1.8p23f) - 0x1.8p23f;
  const typename V::U sub = __builtin_convertvector(__builtin_convertvector(q, typename V::I), typename V::U);
  // Normal codes: round float32's mantissa to M bits, half to even (a carry moves into the
  // exponent), then rebias 127 -> B.
  const typename V::U ab = bit_cast<typename V::U>(a);
  constexpr int kDrop = 23 - M;
  const typename V::U rounded = (ab + ((1u << (kDrop - 1)) - 1u) + ((ab >> kDrop) & 1u)) >> kDrop;
  const typename V::U normal = rounded - (static_cast<uint32_t>(127 - B) << M);
  const typename V::U is_sub = bit_cast<typename V::U>(a < vmin_normal);
  typename V::U code = (sub & is_sub) | (normal & ~is_sub);
  code = (code & ~is_nan) | (0x7fu & is_nan);
  return __builtin_convertvector(code | sign, typename V::U8);
}

template <int N>
__attribute__((always_inline)) inline void quantize_impl(const QuantPlan& p, const void* src, uint8_t* dst,
                                                         int64_t n) {
  using V = Vec<N>;
  const int64_t in_bytes = p.in == AOP_DTYPE_FLOAT32 ? 4 : 2;
  const char* s = static_cast<const char*>(src);
  const bool has_offset = !p.offset.empty();
  auto block = [&](const void* from, const float* scale, const float* offset, uint8_t* to) {
    typename V::F x = load<N>(p.in, from), sc, y;
    std::memcpy(&sc, scale, sizeof sc);
    y = x / sc;
    typename V::U8 code;
    if (p.mode == kKvInt8) {
      if (offset != nullptr) {
        typename V::F o;
        std::memcpy(&o, offset, sizeof o);
        y = y + o;
      }
      code = encode_int8<N>(y);
    } else if (p.mode == kKvFp8E4m3) {
      code = encode_fp8<N, 3, 7>(y, 448.0f);
    } else {
      code = encode_fp8<N, 2, 15>(y, 57344.0f);
    }
    std::memcpy(to, &code, N);
  };
  int64_t j = 0;
  for (; j + N <= n; j += N) {
    block(s + j * in_bytes, p.scale.data() + j, has_offset ? p.offset.data() + j : nullptr, dst + j);
  }
  if (j < n) {  // the tail, padded to a whole vector (scale 1 keeps the padding finite)
    const int64_t left = n - j;
    alignas(64) char from[4 * N] = {};
    alignas(64) float scale[N], offset[N];
    alignas(64) uint8_t to[N];
    for (int i = 0; i < N; ++i) {
      scale[i] = i < left ? p.scale[static_cast<size_t>(j + i)] : 1.0f;
      offset[i] = i < left && has_offset ? p.offset[static_cast<size_t>(j + i)] : 0.0f;
    }
    std::memcpy(from, s + j * in_bytes, static_cast<size_t>(left * in_bytes));
    block(from, scale, has_offset ? offset : nullptr, to);
    std::memcpy(dst + j, to, static_cast<size_t>(left));
  }
}

using QuantizeFn = void (*)(const QuantPlan&, const void*, uint8_t*, int64_t);

void quantize_baseline(const QuantPlan& p, const void* src, uint8_t* dst, int64_t n) { quantize_impl<4>(p, src, dst, n); }
#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("avx2"))) void quantize_avx2(const QuantPlan& p, const void* src, uint8_t* dst, int64_t n) {
  quantize_impl<8>(p, src, dst, n);
}
__attribute__((target("avx512f,avx512vl,avx512dq,avx512bw,avx2"))) void quantize_avx512(const QuantPlan& p,
                                                                                         const void* src,
                                                                                         uint8_t* dst, int64_t n) {
  quantize_impl<16>(p, src, dst, n);
}
#endif

struct Choice {
  QuantizeFn fn;
  const char* isa;
};

const Choice& chosen() {
  static const Choice choice = [] {
#if defined(__x86_64__) && defined(__GNUC__)
    __builtin_cpu_init();
    const int cap = cpu_isa_cap();
    if (cap >= 2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
        __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512bw")) {
      return Choice{quantize_avx512, "avx512"};
    }
    if (cap >= 1 && __builtin_cpu_supports("avx2")) return Choice{quantize_avx2, "avx2"};
#endif
    return Choice{quantize_baseline, "baseline"};
  }();
  return choice;
}

// The scale / offset of every element of a row: per tensor (1 value), per channel (H*D) or per
// head (H, each repeated D times).
std::vector<float> per_channel(const aop_tensor& t, int64_t heads, int64_t d) {
  const int64_t n = heads * d, count = TensorView(t).numel();
  std::vector<float> out(static_cast<size_t>(n));
  if (count == n) {
    for (int64_t j = 0; j < n; ++j) out[static_cast<size_t>(j)] = scale_element(t, j);
  } else {
    for (int64_t i = 0; i < count; ++i) {
      const float v = scale_element(t, i);
      const int64_t width = count == 1 ? n : d;
      std::fill(out.begin() + i * width, out.begin() + (i + 1) * width, v);
    }
  }
  return out;
}

}  // namespace

QuantPlan quant_plan(int32_t mode, aop_dtype in, const aop_tensor& scale, const aop_tensor* offset, int64_t heads,
                     int64_t head_size) {
  QuantPlan p;
  p.mode = mode;
  p.in = in;
  p.scale = per_channel(scale, heads, head_size);
  if (offset != nullptr) p.offset = per_channel(*offset, heads, head_size);
  return p;
}

void quantize_row(const QuantPlan& plan, const void* src, uint8_t* dst, int64_t n) { chosen().fn(plan, src, dst, n); }

const char* quantize_isa() { return chosen().isa; }

}  // namespace aop::reshape_and_cache
