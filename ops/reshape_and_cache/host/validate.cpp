// Argument checks of reshape_and_cache: everything is checked before anything is written.
#include <string>

#include "ascend_ops/error.hpp"
#include "ascend_ops/tensor.hpp"
#include "host/reshape_and_cache.h"

namespace aop::reshape_and_cache {
namespace {

constexpr const char* kOp = "reshape_and_cache";

[[noreturn]] void fail(aop_status status, const std::string& what) {
  throw aop::Error(status, std::string(kOp) + ": " + what);
}

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

}  // namespace

void validate(const Args& a) {
  const TensorView key(a.key), value(a.value), key_cache(a.key_cache),
      value_cache(a.value_cache), slots(a.slot_mapping);

  const aop_dtype dtype = a.key.dtype;
  if (dtype != AOP_DTYPE_FLOAT16 && dtype != AOP_DTYPE_BFLOAT16 && dtype != AOP_DTYPE_FLOAT32 &&
      dtype != AOP_DTYPE_INT8) {
    fail(AOP_TYPE_ERROR, std::string("key should have dtype float16, bfloat16, float32 or int8 but has ") +
                             aop_dtype_name(dtype));
  }
  expect_dtype("value", a.value, dtype);
  expect_dtype("key_cache", a.key_cache, dtype);
  expect_dtype("value_cache", a.value_cache, dtype);
  if (a.slot_mapping.dtype != AOP_DTYPE_INT32 && a.slot_mapping.dtype != AOP_DTYPE_INT64) {
    fail(AOP_TYPE_ERROR, std::string("slot_mapping should have dtype int32 or int64 but has ") +
                             aop_dtype_name(a.slot_mapping.dtype));
  }

  expect_rank("key", key, 3, "[T, H, Dk]");
  expect_rank("value", value, 3, "[T, H, Dv]");
  expect_rank("key_cache", key_cache, 4, "[num_blocks, block_size, H, Dk]");
  expect_rank("value_cache", value_cache, 4, "[num_blocks, block_size, H, Dv]");
  expect_rank("slot_mapping", slots, 1, "[T']");

  const int64_t tokens = key.dim(0), heads = key.dim(1), dk = key.dim(2), dv = value.dim(2);
  expect_dim("value", value, 0, tokens, "[T, H, Dv]", "T (from key)");
  expect_dim("value", value, 1, heads, "[T, H, Dv]", "H (from key)");
  expect_dim("key_cache", key_cache, 2, heads, "[num_blocks, block_size, H, Dk]", "H (from key)");
  expect_dim("key_cache", key_cache, 3, dk, "[num_blocks, block_size, H, Dk]", "Dk (from key)");
  expect_dim("value_cache", value_cache, 0, key_cache.dim(0), "[num_blocks, block_size, H, Dv]",
             "num_blocks (from key_cache)");
  expect_dim("value_cache", value_cache, 1, key_cache.dim(1), "[num_blocks, block_size, H, Dv]",
             "block_size (from key_cache)");
  expect_dim("value_cache", value_cache, 2, heads, "[num_blocks, block_size, H, Dv]", "H (from key)");
  expect_dim("value_cache", value_cache, 3, dv, "[num_blocks, block_size, H, Dv]", "Dv (from value)");
  if (slots.dim(0) > tokens) {
    fail(AOP_VALUE_ERROR, "slot_mapping should be [T'] with T' <= T = " + std::to_string(tokens) +
                              " (from key) but has shape " + slots.shape_string());
  }

  expect_rows("key", key);
  expect_rows("value", value);
  expect_contiguous("key_cache", key_cache);
  expect_contiguous("value_cache", value_cache);
  expect_contiguous("slot_mapping", slots);

  expect_same_device("value", a.value, a.key);
  expect_same_device("key_cache", a.key_cache, a.key);
  expect_same_device("value_cache", a.value_cache, a.key);
  expect_same_device("slot_mapping", a.slot_mapping, a.key);

  expect_data("key", key);
  expect_data("value", value);
  expect_data("key_cache", key_cache);
  expect_data("value_cache", value_cache);
  expect_data("slot_mapping", slots);
}

void check_slots(const Args& a) {
  const TensorView key_cache(a.key_cache);
  const int64_t num_slots = key_cache.dim(0) * key_cache.dim(1);
  const int64_t count = a.slot_mapping.shape[0];
  const bool wide = a.slot_mapping.dtype == AOP_DTYPE_INT64;
  for (int64_t t = 0; t < count; ++t) {
    const int64_t slot = wide ? static_cast<const int64_t*>(a.slot_mapping.data)[t]
                              : static_cast<const int32_t*>(a.slot_mapping.data)[t];
    if (slot >= num_slots) {
      fail(AOP_INDEX_ERROR, "slot_mapping[" + std::to_string(t) + "] = " + std::to_string(slot) +
                                " is out of range: the cache has " + std::to_string(num_slots) +
                                " slots (num_blocks " + std::to_string(key_cache.dim(0)) +
                                " * block_size " + std::to_string(key_cache.dim(1)) + ")");
    }
  }
}

}  // namespace aop::reshape_and_cache
