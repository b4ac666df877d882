// dtype traits: aop::dtype_of<T>(), names and sizes of aop_dtype.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "ascend_ops/config.hpp"
#include "ascend_ops/dtype.h"
#include "ascend_ops/error.hpp"

AOP_NAMESPACE_BEGIN

// 16-bit float storage types: the bits only, no arithmetic (kernels bring their own).
struct Float16 {
  uint16_t bits;
};
struct BFloat16 {
  uint16_t bits;
};

// Specialise DtypeTraits<T> for another element type (a kernel's own half type) if needed.
template <class T>
struct DtypeTraits;  // undefined: a type with no aop_dtype does not compile

#define AOP_DTYPE_TRAIT(T, D)             \
  template <>                             \
  struct DtypeTraits<T> {                 \
    static constexpr aop_dtype value = D; \
  };
AOP_DTYPE_TRAIT(Float16, AOP_DTYPE_FLOAT16)
AOP_DTYPE_TRAIT(BFloat16, AOP_DTYPE_BFLOAT16)
AOP_DTYPE_TRAIT(float, AOP_DTYPE_FLOAT32)
AOP_DTYPE_TRAIT(double, AOP_DTYPE_FLOAT64)
AOP_DTYPE_TRAIT(int8_t, AOP_DTYPE_INT8)
AOP_DTYPE_TRAIT(int16_t, AOP_DTYPE_INT16)
AOP_DTYPE_TRAIT(int32_t, AOP_DTYPE_INT32)
AOP_DTYPE_TRAIT(int64_t, AOP_DTYPE_INT64)
AOP_DTYPE_TRAIT(uint8_t, AOP_DTYPE_UINT8)
AOP_DTYPE_TRAIT(bool, AOP_DTYPE_BOOL)
#undef AOP_DTYPE_TRAIT

template <class T>
constexpr aop_dtype dtype_of() noexcept {
  return DtypeTraits<T>::value;
}

inline const char* dtype_name(aop_dtype dtype) noexcept { return aop_dtype_name(dtype); }

// Bytes per element; throws TypeError for a value outside aop_dtype.
inline size_t dtype_size(aop_dtype dtype) {
  const size_t size = aop_dtype_size(dtype);
  check(size != 0, AOP_TYPE_ERROR, "unknown dtype value ", static_cast<int>(dtype));
  return size;
}

// "x should have dtype float16, got float32" as a TypeError.
inline void check_dtype(aop_dtype actual, aop_dtype expected, const char* what) {
  check(actual == expected, AOP_TYPE_ERROR, what, " should have dtype ", dtype_name(expected),
        ", got ", dtype_name(actual));
}

AOP_NAMESPACE_END
