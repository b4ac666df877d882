// The quantising modes' argument checks: kv_cache_dtype, the cache dtypes it writes, the scales
// and offsets (shapes here, values in check_scales before anything is written).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "host/cache_layout.h"
#include "host/checks.h"
#include "host/reshape_and_cache.h"
#include "host/validate_quant.h"

namespace aop::reshape_and_cache {
namespace {

using checks::fail;

// The one rule of which cache dtypes a mode writes. fp8 caches are their bytes (uint8) until
// common has float8_e4m3fn / float8_e5m2: then each fp8 mode adds its dtype here.
std::vector<aop_dtype> cache_dtypes(int32_t mode, aop_dtype key) {
  switch (mode) {
    case kKvInt8: return {AOP_DTYPE_INT8};
    case kKvFp8E4m3: return {AOP_DTYPE_UINT8};
    case kKvFp8E5m2: return {AOP_DTYPE_UINT8};
    default: return {key};
  }
}

std::string mode_note(int32_t mode) { return std::string("kv_cache_dtype '") + kv_cache_dtype_name(mode) + "'"; }

struct ScaleArg {
  const char* name;
  const std::optional<aop_tensor>* tensor;
  bool is_offset;
  int64_t head_size;  // D of the cache it scales
};

void expect_scale(const Args& a, const ScaleArg& s, int64_t heads) {
  const aop_tensor& t = **s.tensor;
  const std::string name(s.name);
  if (t.dtype != AOP_DTYPE_FLOAT32 && t.dtype != AOP_DTYPE_FLOAT16 && t.dtype != AOP_DTYPE_BFLOAT16) {
    fail(AOP_TYPE_ERROR, name + " should have dtype float32, float16 or bfloat16 but has " + aop_dtype_name(t.dtype));
  }
  const TensorView v(t);
  const int64_t d = s.head_size;
  const bool ok = v.ndim() == 0 || (v.ndim() == 1 && (v.dim(0) == 1 || v.dim(0) == heads || v.dim(0) == heads * d)) ||
                  (v.ndim() == 2 && v.dim(0) == heads && v.dim(1) == d);
  if (!ok) {
    const std::string h = std::to_string(heads), dd = std::to_string(d);
    fail(AOP_VALUE_ERROR, name + " should be [] or [1] (per tensor), [" + h + "] (per head, H) or [" + h + ", " + dd +
                              "] / [" + std::to_string(heads * d) + "] (per channel, H*D) but has shape " +
                              v.shape_string());
  }
  checks::expect_contiguous(s.name, v);
  checks::expect_same_device(s.name, t, a.key);
  checks::expect_data(s.name, v);
}

}  // namespace

// float32 of element i of a float32 / float16 / bfloat16 scale (exact).
float scale_element(const aop_tensor& t, int64_t i) {
  if (t.dtype == AOP_DTYPE_FLOAT32) return static_cast<const float*>(t.data)[i];
  const uint16_t h = static_cast<const uint16_t*>(t.data)[i];
  uint32_t bits;
  if (t.dtype == AOP_DTYPE_BFLOAT16) {
    bits = static_cast<uint32_t>(h) << 16;
  } else {
    const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16, em = h & 0x7fffu;
    if (em >= 0x7c00u) {
      bits = sign | 0x7f800000u | ((em & 0x3ffu) << 13);
    } else if (em >= 0x400u) {
      bits = sign | ((em << 13) + 0x38000000u);  // a normal: rebias 15 -> 127
    } else {
      const float f = static_cast<float>(em) * 0x1p-24f;  // a subnormal (or zero): exact, a normal float32
      std::memcpy(&bits, &f, 4);
      bits |= sign;
    }
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

KvCacheDtype parse_kv_cache_dtype(const std::string& name) {
  if (name == "auto") return kKvAuto;
  if (name == "int8") return kKvInt8;
  if (name == "fp8" || name == "fp8_e4m3") return kKvFp8E4m3;
  if (name == "fp8_e5m2") return kKvFp8E5m2;
  fail(AOP_TYPE_ERROR, "kv_cache_dtype should be 'auto', 'int8', 'fp8', 'fp8_e4m3' or 'fp8_e5m2' but is '" + name + "'");
}

const char* kv_cache_dtype_name(int32_t mode) {
  switch (mode) {
    case kKvAuto: return "auto";
    case kKvInt8: return "int8";
    case kKvFp8E4m3: return "fp8_e4m3";
    case kKvFp8E5m2: return "fp8_e5m2";
    default: return "unknown";
  }
}

void expect_quantisable_key(const Args& a) {
  const aop_dtype k = a.key.dtype;
  if (k != AOP_DTYPE_FLOAT16 && k != AOP_DTYPE_BFLOAT16 && k != AOP_DTYPE_FLOAT32) {
    fail(AOP_TYPE_ERROR, "key should have dtype float16, bfloat16 or float32 with " + mode_note(a.kv_cache_dtype) +
                             " but has " + aop_dtype_name(k));
  }
}

void expect_cache_dtype(const char* name, const aop_tensor& cache, int32_t mode, aop_dtype key, const char* source) {
  const std::vector<aop_dtype> ok = cache_dtypes(mode, key);
  for (aop_dtype d : ok) {
    if (cache.dtype == d) return;
  }
  std::string want;
  for (size_t i = 0; i < ok.size(); ++i) want += std::string(i == 0 ? "" : " or ") + aop_dtype_name(ok[i]);
  const std::string why = quantized(mode) ? mode_note(mode) : std::string("the dtype of ") + source;
  fail(AOP_TYPE_ERROR, std::string(name) + " should have dtype " + want + " (" + why + ") but has " +
                           aop_dtype_name(cache.dtype));
}

void expect_scales(const Args& a, int64_t heads, int64_t dk, int64_t dv) {
  const int32_t mode = a.kv_cache_dtype;
  const ScaleArg all[] = {{"k_scale", &a.k_scale, false, dk}, {"v_scale", &a.v_scale, false, dv},
                          {"k_offset", &a.k_offset, true, dk}, {"v_offset", &a.v_offset, true, dv}};
  for (const ScaleArg& s : all) {
    const bool given = s.tensor->has_value();
    const bool value_side = s.name[0] == 'v';
    if (!quantized(mode)) {
      if (given) {
        fail(AOP_VALUE_ERROR, std::string(s.name) + " should be None with kv_cache_dtype 'auto' (a bit copy) but is given");
      }
      continue;
    }
    if (value_side && !a.has_value) {
      if (given) fail(AOP_VALUE_ERROR, std::string(s.name) + " should be None for a key-only cache (value is None)");
      continue;
    }
    if (s.is_offset && mode != kKvInt8 && given) {
      fail(AOP_VALUE_ERROR, std::string(s.name) + " should be None with " + mode_note(mode) +
                                " (offsets are int8 only) but is given");
    }
    if (!s.is_offset && !given) {
      fail(AOP_VALUE_ERROR, std::string(s.name) + " is required with " + mode_note(mode) + " but is None");
    }
    if (given) expect_scale(a, s, heads);
  }
}

namespace {

// The kernel writes a chunked layout with 32-byte bursts (one DataCopyPad per UB chunk) and reads
// a quantising write's per-channel tables from UB at the group's first element.
void expect_kernel_layouts(const Args& a) {
  const TensorView key(a.key);
  for (int which = 0; which < (a.has_value ? 2 : 1); ++which) {
    const bool value = which == 1;
    const aop_tensor& cache = value ? a.value_cache : a.key_cache;
    const char* name = value ? "value_cache" : "key_cache";
    const int64_t d = value ? TensorView(a.value).dim(2) : key.dim(2);
    if (TensorView(cache).numel() == 0) continue;
    const RacCacheLayout l = cache_layout(cache, a.cache_mode, value, key.dim(1), d);
    const int64_t elem = static_cast<int64_t>(aop_dtype_size(cache.dtype));
    if (l.chunk_elems < l.group_elems && l.chunk_elems * elem != 32) {
      fail(AOP_VALUE_ERROR, std::string("the npu / emu kernel writes a cache's chunks as 32-byte bursts, but ") + name +
                                " keeps each head in chunks of " + std::to_string(l.chunk_elems * elem) +
                                " bytes (cache_mode " + std::to_string(a.cache_mode) +
                                (a.cache_mode == kCachePaged ? ", vLLM's CUDA paged layout" : "") +
                                "); the cpu backend writes it");
    }
    if (l.chunk_elems < l.group_elems && (l.chunk_stride - l.chunk_elems) * elem > int64_t{0xffffffff}) {
      fail(AOP_VALUE_ERROR, std::string("the npu / emu kernel needs the chunk stride of ") + name +
                                " to fit a DataCopyPad stride (< 4 GiB) but it is " +
                                std::to_string(l.chunk_stride * elem) + " bytes");
    }
    if (quantized(a.kv_cache_dtype) && l.group_elems != key.dim(1) * d && l.group_elems % 8 != 0) {
      fail(AOP_VALUE_ERROR, std::string("the npu / emu int8 write into a cache whose heads are apart (") + name +
                                ") needs the head size to be a multiple of 8 (32-byte scale tables in UB) but it is " +
                                std::to_string(d));
    }
  }
}

}  // namespace

Args validated_for_kernel(const Args& args) {
  Args a = validated(args);
  if (a.kv_cache_dtype == kKvFp8E4m3 || a.kv_cache_dtype == kKvFp8E5m2) {
    fail(AOP_VALUE_ERROR, mode_note(a.kv_cache_dtype) + " runs on the cpu backend only: the npu kernel "
                          "(Atlas A2 / A3, no fp8 conversion) and the emu backend that runs it do int8 and 'auto'");
  }
  expect_kernel_layouts(a);
  if (quantized(a.kv_cache_dtype)) {
    const TensorView key(a.key);
    const int64_t row = std::max(key.dim(1) * key.dim(2), a.has_value ? TensorView(a.value).dim(1) * TensorView(a.value).dim(2) : 0);
    if (row > kRacQuantMaxRowElems) {
      fail(AOP_VALUE_ERROR, "the npu / emu int8 write keeps per-channel scales of a row in UB: H*D should be <= " +
                                std::to_string(kRacQuantMaxRowElems) + " but key or value has " + std::to_string(row) +
                                " elements per token (the cpu backend has no such limit)");
    }
  }
  return a;
}

void check_scales(const Args& a) {
  if (!quantized(a.kv_cache_dtype)) return;
  const std::optional<aop_tensor>* all[] = {&a.k_scale, &a.v_scale, &a.k_offset, &a.v_offset};
  for (int32_t which = 0; which < 4; ++which) {
    if (!all[which]->has_value()) continue;
    const aop_tensor& t = **all[which];
    const int64_t n = TensorView(t).numel();
    for (int64_t i = 0; i < n; ++i) {
      const float x = scale_element(t, i);
      const bool bad = which < 2 ? !(std::isfinite(x) && x > 0.0f) : !std::isfinite(x);
      if (bad) {
        const int64_t bits = t.dtype == AOP_DTYPE_FLOAT32 ? static_cast<const uint32_t*>(t.data)[i]
                                                          : static_cast<const uint16_t*>(t.data)[i];
        const int64_t record[kRacCheckWords] = {kRacBadScale, i, bits, which, t.dtype, 0, 0, 0};
        throw kernel_error(record);
      }
    }
  }
}

// The message of a bad scale / offset, from the kernel's record or check_scales.
std::string bad_scale_message(const int64_t record[kRacCheckWords]) {
  static const char* const kNames[] = {"k_scale", "v_scale", "k_offset", "v_offset"};
  const int64_t which = record[3];
  aop_tensor one{};  // the element's own bits, as a one-element tensor of its dtype
  one.dtype = static_cast<aop_dtype>(record[4]);
  uint32_t bits32 = static_cast<uint32_t>(record[2]);
  uint16_t bits16 = static_cast<uint16_t>(record[2]);
  one.data = one.dtype == AOP_DTYPE_FLOAT32 ? static_cast<void*>(&bits32) : static_cast<void*>(&bits16);
  const float x = scale_element(one, 0);
  std::ostringstream os;
  os.precision(9);
  os << x;
  const char* name = which >= 0 && which < 4 ? kNames[which] : "a scale";
  const char* want = which < 2 ? "finite and > 0" : "finite";
  return std::string(name) + "[" + std::to_string(record[1]) + "] (flat index) should be " + want + " but is " +
         os.str();
}

}  // namespace aop::reshape_and_cache
