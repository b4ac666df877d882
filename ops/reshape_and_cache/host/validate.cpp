// Argument checks of reshape_and_cache: everything is checked before anything is written.
#include <string>

#include "ascend_ops/error.hpp"
#include "ascend_ops/tensor.hpp"
#include "host/cache_layout.h"
#include "host/checks.h"
#include "host/reshape_and_cache.h"
#include "host/validate_quant.h"

namespace aop::reshape_and_cache {
namespace checks {

void expect_contiguous(const char* name, const TensorView& t) {
  if (!t.is_contiguous()) {
    fail(AOP_VALUE_ERROR, std::string(name) + " should be contiguous but has shape " +
                              t.shape_string() + " and strides " + t.strides_string());
  }
}

void expect_same_device(const char* name, const aop_tensor& t, const aop_tensor& key) {
  if (t.device.type != key.device.type || t.device.index != key.device.index) {
    fail(AOP_VALUE_ERROR, std::string(name) + " should be on the device of key (" +
                              device_string(key.device) + ") but is on " + device_string(t.device));
  }
}

void expect_data(const char* name, const TensorView& t) {
  if (t.device().type != AOP_DEVICE_META && t.numel() > 0 && t.data() == nullptr) {
    fail(AOP_VALUE_ERROR, std::string(name) + " has no data");
  }
}

}  // namespace checks
namespace {

using checks::expect_contiguous;
using checks::expect_data;
using checks::expect_same_device;
using checks::fail;
using checks::kOp;

void expect_dtype(const char* name, const aop_tensor& t, aop_dtype want) {
  if (t.dtype != want) {
    fail(AOP_TYPE_ERROR, std::string(name) + " should have dtype " + aop_dtype_name(want) +
                             " (the dtype of key) but has " + aop_dtype_name(t.dtype));
  }
}

void expect_rank(const char* name, const TensorView& t, int rank, const char* layout) {
  if (t.ndim() != rank) {
    fail(AOP_VALUE_ERROR, std::string(name) + " should be " + layout + " (rank " +
                              std::to_string(rank) + ") but has shape " + t.shape_string());
  }
}

void expect_dim(const char* name, const TensorView& t, int dim, int64_t want,
                const char* layout, const char* what) {
  if (t.dim(dim) != want) {
    fail(AOP_VALUE_ERROR, std::string(name) + " should be " + layout + " with " + what + " = " +
                              std::to_string(want) + " but has shape " + t.shape_string());
  }
}

// key / value: the head and feature dims contiguous; token rows may be strided.
void expect_rows(const char* name, const TensorView& t) {
  if (t.numel() == 0) return;  // an empty tensor has no layout to get wrong
  const int64_t h = t.dim(1), d = t.dim(2);
  const bool inner_ok = (d <= 1 || t.stride(2) == 1) && (h <= 1 || t.stride(1) == d);
  const bool rows_ok = t.dim(0) <= 1 || t.stride(0) >= h * d;
  if (!inner_ok || !rows_ok) {
    fail(AOP_VALUE_ERROR, std::string(name) + " should have contiguous [H, D] rows (strides [>=" +
                              std::to_string(h * d) + ", " + std::to_string(d) + ", 1]) but has strides " +
                              t.strides_string());
  }
}

// key / value given as [T, H*D] with head_num: the [T, H, D] view of the same memory.
aop_tensor split_heads(const char* name, const aop_tensor& t, int64_t head_num, const char* layout) {
  const TensorView v(t);
  if (head_num == 0) {
    fail(AOP_VALUE_ERROR, std::string(name) + " should be " + layout + " (rank 3), or [T, H*D] (rank 2) with "
                              "head_num given, but has shape " + v.shape_string() + " and no head_num");
  }
  const int64_t hidden = v.dim(1);
  if (hidden % head_num != 0) {
    fail(AOP_VALUE_ERROR, "head_num = " + std::to_string(head_num) + " should divide the hidden size of " + name +
                              " [T, H*D] but " + name + " has shape " + v.shape_string() + " (" +
                              std::to_string(hidden) + " % " + std::to_string(head_num) + " = " +
                              std::to_string(hidden % head_num) + ")");
  }
  if (hidden > 1 && v.stride(1) != 1) {
    fail(AOP_VALUE_ERROR, std::string(name) + " should have contiguous [H*D] rows (strides [>=" +
                              std::to_string(hidden) + ", 1]) but has strides " + v.strides_string());
  }
  aop_tensor out = t;
  const int64_t d = hidden / head_num;
  out.ndim = 3;
  out.shape[1] = head_num;
  out.shape[2] = d;
  out.strides[0] = t.strides[0];
  out.strides[1] = d;
  out.strides[2] = 1;
  return out;
}

// key / value given as [B, S, H*D] with head_num (ms_custom_ops' form): the [B*S, H*D] view of the
// same memory (B and S must merge into one token stride).
aop_tensor merge_batch(const char* name, const aop_tensor& t) {
  const TensorView v(t);
  int64_t token_stride = v.stride(1);
  if (v.dim(1) <= 1) {
    token_stride = v.stride(0);
  } else if (v.dim(0) > 1 && v.stride(0) != v.dim(1) * v.stride(1)) {
    fail(AOP_VALUE_ERROR, std::string(name) + " [B, S, H*D] should have B and S that merge into one token stride "
                              "(stride(0) = S * stride(1)) but has shape " + v.shape_string() + " and strides " +
                              v.strides_string());
  }
  aop_tensor out = t;
  out.ndim = 2;
  out.shape[0] = v.dim(0) * v.dim(1);
  out.shape[1] = v.dim(2);
  out.strides[0] = token_stride;
  out.strides[1] = v.stride(2);
  return out;
}

// `cache_row`: the H*D of one slot of the matching cache (0: unknown). A rank-3 input with head_num
// is [B, S, H*D] when its last dim is the cache's H*D and it is not [T, H = head_num, D] of that row.
aop_tensor canonical_rows(const char* name, const aop_tensor& t, int64_t head_num, const char* layout,
                          int64_t cache_row) {
  const TensorView v(t);
  if (v.ndim() == 2) return split_heads(name, t, head_num, layout);
  expect_rank(name, v, 3, layout);
  if (head_num != 0 && cache_row != 0 && v.dim(2) == cache_row &&
      (v.dim(1) != head_num || v.dim(1) * v.dim(2) != cache_row)) {
    return split_heads(name, merge_batch(name, t), head_num, layout);
  }
  if (head_num != 0 && v.dim(1) != head_num) {
    fail(AOP_VALUE_ERROR, std::string(name) + " should be " + layout + " with H = head_num = " +
                              std::to_string(head_num) + " (or [B, S, H*D] with the cache's H*D = " +
                              std::to_string(cache_row) + ") but has shape " + v.shape_string());
  }
  return t;
}

// NZ: head sizes whole fractals, the cache [num_blocks, H*D/F, block_size, F].
void expect_nz_cache(const char* name, const TensorView& cache, int64_t heads, int64_t d, const char* d_name,
                     int64_t fractal, aop_dtype dtype, const char* layout) {
  if (d % fractal != 0) {
    fail(AOP_VALUE_ERROR, std::string("cache_mode 1 (NZ) needs the head size ") + d_name + " = " +
                              std::to_string(d) + " to be a multiple of the fractal width " +
                              std::to_string(fractal) + " (" + aop_dtype_name(dtype) + ")");
  }
  expect_rank(name, cache, 4, layout);
  expect_dim(name, cache, 1, heads * d / fractal, layout, (std::string("H*") + d_name + "/F").c_str());
  expect_dim(name, cache, 3, fractal, layout, "F");
}

}  // namespace

int64_t cache_num_blocks(const Args& a) { return a.key_cache.shape[0]; }

int64_t cache_block_size(const Args& a) {
  switch (a.cache_mode) {
    case kCacheNZ:
    case kCacheHeadMajor: return a.key_cache.shape[2];
    case kCachePaged: return a.key_cache.shape[3];
    default: return a.key_cache.shape[1];
  }
}

Args validated(const Args& in) {
  if (in.cache_mode < kCacheND || in.cache_mode > kCachePaged) {
    fail(AOP_VALUE_ERROR, "cache_mode should be 0 (ND) or 1 (NZ, FRACTAL_NZ), 2 (head-major ND) or 3 (vLLM "
                          "paged) but is " + std::to_string(in.cache_mode));
  }
  if (in.head_num < 0) {
    fail(AOP_VALUE_ERROR, "head_num should be > 0 (or not given) but is " + std::to_string(in.head_num));
  }
  if (in.has_value && !in.has_value_cache) {
    fail(AOP_VALUE_ERROR, "value_cache should be given when value is (or both None: a key-only cache) "
                          "but value_cache is None");
  }
  if (!in.has_value && in.has_value_cache) {
    fail(AOP_VALUE_ERROR, "value should be given when value_cache is (or both None: a key-only cache) "
                          "but value is None");
  }
  const bool kv = in.has_value;
  const bool nz = in.cache_mode == kCacheNZ;

  const aop_dtype dtype = in.key.dtype;
  const bool quant = quantized(in.kv_cache_dtype);
  if (quant) {
    expect_quantisable_key(in);
  } else if (dtype != AOP_DTYPE_FLOAT16 && dtype != AOP_DTYPE_BFLOAT16 && dtype != AOP_DTYPE_FLOAT32 &&
             dtype != AOP_DTYPE_INT8) {
    fail(AOP_TYPE_ERROR, std::string("key should have dtype float16, bfloat16, float32 or int8 but has ") +
                             aop_dtype_name(dtype));
  }
  if (nz && dtype == AOP_DTYPE_FLOAT32 && !quant) {  // a quantised cache is 1-byte whatever key is
    fail(AOP_TYPE_ERROR, "cache_mode 1 (NZ) supports key dtypes float16, bfloat16 and int8 but key has float32");
  }
  // "auto" checks dtypes per pair (key with key_cache, value with value_cache: an int8 key beside a
  // float16 value); a quantising mode reads key and value as one input dtype.
  const aop_dtype value_dtype = kv ? in.value.dtype : dtype;
  if (kv && quant) expect_dtype("value", in.value, dtype);
  if (kv && !quant) {
    if (value_dtype != AOP_DTYPE_FLOAT16 && value_dtype != AOP_DTYPE_BFLOAT16 && value_dtype != AOP_DTYPE_FLOAT32 &&
        value_dtype != AOP_DTYPE_INT8) {
      fail(AOP_TYPE_ERROR, std::string("value should have dtype float16, bfloat16, float32 or int8 but has ") +
                               aop_dtype_name(value_dtype));
    }
    if (nz && value_dtype == AOP_DTYPE_FLOAT32) {
      fail(AOP_TYPE_ERROR, "cache_mode 1 (NZ) supports value dtypes float16, bfloat16 and int8 but value has float32");
    }
  }
  expect_cache_dtype("key_cache", in.key_cache, in.kv_cache_dtype, dtype);
  const aop_dtype vc = in.value_cache.dtype;
  if (kv && !quant && vc != value_dtype &&
      (vc == AOP_DTYPE_FLOAT16 || vc == AOP_DTYPE_BFLOAT16 || vc == AOP_DTYPE_FLOAT32 || vc == AOP_DTYPE_INT8)) {
    fail(AOP_TYPE_ERROR, std::string("value should have dtype ") + aop_dtype_name(vc) +
                             " (the dtype of value_cache: dtypes are checked per pair) but has " +
                             aop_dtype_name(value_dtype));
  }
  if (kv) expect_cache_dtype("value_cache", in.value_cache, in.kv_cache_dtype, value_dtype, "value");
  if (in.slot_mapping.dtype != AOP_DTYPE_INT32 && in.slot_mapping.dtype != AOP_DTYPE_INT64) {
    fail(AOP_TYPE_ERROR, std::string("slot_mapping should have dtype int32 or int64 but has ") +
                             aop_dtype_name(in.slot_mapping.dtype));
  }

  Args a = in;
  if (TensorView(in.key).ndim() != 2 && TensorView(in.key).ndim() != 3) {
    expect_rank("key", TensorView(in.key), 3, "[T, H, Dk]");
  }
  a.key = canonical_rows("key", in.key, in.head_num, "[T, H, Dk]", cache_row_elems(in.key_cache, in.cache_mode, false));
  if (kv) {
    // A [T, H*Dv] value splits by head_num, or by key's H when only value is flat; a
    // [T, H, Dv] value is checked against key's H below (and against head_num if given).
    const bool flat_value = TensorView(in.value).ndim() == 2;
    const int64_t value_heads = in.head_num != 0 ? in.head_num : flat_value ? TensorView(a.key).dim(1) : 0;
    if (TensorView(in.value).ndim() != 2 && TensorView(in.value).ndim() != 3) {
      expect_rank("value", TensorView(in.value), 3, "[T, H, Dv]");
    }
    a.value = canonical_rows("value", in.value, value_heads, "[T, H, Dv]",
                             cache_row_elems(in.value_cache, in.cache_mode, true));
  }
  const TensorView key(a.key), value(a.value), key_cache(a.key_cache), value_cache(a.value_cache),
      slots(a.slot_mapping);
  expect_rank("slot_mapping", slots, 1, "[T']");

  const int64_t tokens = key.dim(0), heads = key.dim(1), dk = key.dim(2);
  if (kv) {
    expect_dim("value", value, 0, tokens, "[T, H, Dv]", "T (from key)");
    expect_dim("value", value, 1, heads, "[T, H, Dv]", "H (from key)");
  }
  if (in.cache_mode == kCacheHeadMajor || in.cache_mode == kCachePaged) {
    expect_extra_mode_shape(a, false, heads, dk);
    if (kv) expect_extra_mode_shape(a, true, heads, value.dim(2));
  } else if (!nz) {
    constexpr const char* kKeyLayout = "[num_blocks, block_size, H, Dk]";
    constexpr const char* kValueLayout = "[num_blocks, block_size, H, Dv]";
    expect_rank("key_cache", key_cache, 4, kKeyLayout);
    expect_dim("key_cache", key_cache, 2, heads, kKeyLayout, "H (from key)");
    expect_dim("key_cache", key_cache, 3, dk, kKeyLayout, "Dk (from key)");
    if (kv) {
      expect_rank("value_cache", value_cache, 4, kValueLayout);
      expect_dim("value_cache", value_cache, 0, key_cache.dim(0), kValueLayout, "num_blocks (from key_cache)");
      expect_dim("value_cache", value_cache, 1, key_cache.dim(1), kValueLayout, "block_size (from key_cache)");
      expect_dim("value_cache", value_cache, 2, heads, kValueLayout, "H (from key)");
      expect_dim("value_cache", value_cache, 3, value.dim(2), kValueLayout, "Dv (from value)");
    }
  } else {
    constexpr const char* kKeyLayout = "[num_blocks, H*Dk/F, block_size, F] (cache_mode 1, NZ)";
    constexpr const char* kValueLayout = "[num_blocks, H*Dv/F, block_size, F] (cache_mode 1, NZ)";
    const aop_dtype cache_dtype = in.key_cache.dtype;
    const int64_t fractal = nz_fractal(static_cast<int64_t>(aop_dtype_size(cache_dtype)));
    expect_nz_cache("key_cache", key_cache, heads, dk, "Dk", fractal, cache_dtype, kKeyLayout);
    if (kv) {
      const aop_dtype value_cache_dtype = in.value_cache.dtype;
      const int64_t value_fractal = nz_fractal(static_cast<int64_t>(aop_dtype_size(value_cache_dtype)));
      expect_nz_cache("value_cache", value_cache, heads, value.dim(2), "Dv", value_fractal, value_cache_dtype,
                      kValueLayout);
      expect_dim("value_cache", value_cache, 0, key_cache.dim(0), kValueLayout, "num_blocks (from key_cache)");
      expect_dim("value_cache", value_cache, 2, key_cache.dim(2), kValueLayout, "block_size (from key_cache)");
    }
  }
  if (slots.dim(0) > tokens) {
    fail(AOP_VALUE_ERROR, "slot_mapping should be [T'] with T' <= T = " + std::to_string(tokens) +
                              " (from key) but has shape " + slots.shape_string());
  }

  expect_rows("key", key);
  if (kv) expect_rows("value", value);
  expect_cache_strides("key_cache", a.key_cache, a.cache_mode, false);
  if (kv) expect_cache_strides("value_cache", a.value_cache, a.cache_mode, true);
  expect_contiguous("slot_mapping", slots);

  if (kv) expect_same_device("value", a.value, a.key);
  expect_same_device("key_cache", a.key_cache, a.key);
  if (kv) expect_same_device("value_cache", a.value_cache, a.key);
  expect_same_device("slot_mapping", a.slot_mapping, a.key);

  expect_data("key", key);
  if (kv) expect_data("value", value);
  expect_data("key_cache", key_cache);
  if (kv) expect_data("value_cache", value_cache);
  expect_data("slot_mapping", slots);
  expect_scales(a, heads, dk, kv ? value.dim(2) : 0);
  expect_no_overlap(a);
  return a;
}

void check_slots(const Args& a) {
  const int64_t num_blocks = cache_num_blocks(a), block_size = cache_block_size(a);
  const int64_t num_slots = num_blocks * block_size;
  const int64_t count = a.slot_mapping.shape[0];
  const bool wide = a.slot_mapping.dtype == AOP_DTYPE_INT64;
  for (int64_t t = 0; t < count; ++t) {
    const int64_t slot = wide ? static_cast<const int64_t*>(a.slot_mapping.data)[t]
                              : static_cast<const int32_t*>(a.slot_mapping.data)[t];
    if (slot >= num_slots) {
      const int64_t record[kRacCheckWords] = {kRacSlotOutOfRange, t, slot, 0, num_blocks, block_size, 0, 0};
      throw kernel_error(record);
    }
  }
}

aop::Error kernel_error(const int64_t record[kRacCheckWords]) {
  const std::string op(kOp);
  if (record[0] == kRacSlotOutOfRange) {
    const int64_t t = record[1], slot = record[2], num_blocks = record[4], block_size = record[5];
    return aop::Error(AOP_INDEX_ERROR, op + ": slot_mapping[" + std::to_string(t) + "] = " + std::to_string(slot) +
                                           " is out of range: the cache has " + std::to_string(num_blocks * block_size) +
                                           " slots (num_blocks " + std::to_string(num_blocks) + " * block_size " +
                                           std::to_string(block_size) + ")");
  }
  if (record[0] == kRacBadScale) return aop::Error(AOP_VALUE_ERROR, op + ": " + bad_scale_message(record));
  return aop::Error(AOP_RUNTIME_ERROR, op + ": internal: unknown kernel error code " + std::to_string(record[0]));
}

}  // namespace aop::reshape_and_cache
