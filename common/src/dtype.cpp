// Element sizes and names of aop_dtype.
#include "ascend_ops/dtype.h"

namespace {
struct DtypeInfo {
  size_t size;
  const char* name;
};

// Indexed by aop_dtype; the static_assert below keeps it in step with the enum.
constexpr DtypeInfo kDtypes[] = {
    {2, "float16"}, {2, "bfloat16"}, {4, "float32"}, {1, "int8"},  {4, "int32"},
    {8, "int64"},   {1, "uint8"},    {1, "bool"},    {2, "int16"}, {8, "float64"},
};
static_assert(sizeof(kDtypes) / sizeof(kDtypes[0]) == AOP_DTYPE_COUNT,
              "kDtypes must list every aop_dtype");

bool known(aop_dtype dtype) {
  return static_cast<int>(dtype) >= 0 && static_cast<int>(dtype) < AOP_DTYPE_COUNT;
}
}  // namespace

extern "C" size_t aop_dtype_size(aop_dtype dtype) noexcept {
  return known(dtype) ? kDtypes[dtype].size : 0;
}

extern "C" const char* aop_dtype_name(aop_dtype dtype) noexcept {
  return known(dtype) ? kDtypes[dtype].name : "unknown";
}
