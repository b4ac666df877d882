// Argument checks of indexer_k_quant_and_cache: everything is checked before anything is written.
#include <string>

#include "ascend_ops/error.hpp"
#include "ascend_ops/tensor.hpp"
#include "host/indexer_k_quant_and_cache.h"

namespace aop::indexer_k_quant_and_cache {
namespace {

constexpr const char* kOp = "indexer_k_quant_and_cache";
constexpr const char* kFusedLayout = "[num_blocks, block_size, D + 4G] (fused, uint8)";
constexpr const char* kSplitLayout = "[num_blocks, block_size, 1, D] or [num_blocks, block_size, D] (split)";
constexpr const char* kScaleLayout = "[num_blocks, block_size, 1, G] or [num_blocks, block_size, G]";

[[noreturn]] void fail(aop_status status, const std::string& what) {
  throw aop::Error(status, std::string(kOp) + ": " + what);
}

std::string str(int64_t v) { return std::to_string(v); }

void expect_dim(const char* name, const TensorView& t, int dim, int64_t want, const char* layout, const char* what) {
  if (t.dim(dim) != want) {
    fail(AOP_VALUE_ERROR, std::string(name) + " should be " + layout + " with " + what + " = " + str(want) +
                              " but has shape " + t.shape_string());
  }
}

void expect_same_device(const char* name, const aop_tensor& t, const aop_tensor& k) {
  if (t.device.type != k.device.type || t.device.index != k.device.index) {
    fail(AOP_VALUE_ERROR, std::string(name) + " should be on the device of k (" + device_string(k.device) +
                              ") but is on " + device_string(t.device));
  }
}

void expect_data(const char* name, const TensorView& t) {
  if (t.device().type != AOP_DEVICE_META && t.numel() > 0 && t.data() == nullptr) {
    fail(AOP_VALUE_ERROR, std::string(name) + " has no data");
  }
}

// A paged cache [num_blocks, block_size, (1,) W]: one block's rows contiguous, blocks at least a
// block apart (a view of a larger allocation may put them further). Returns the block stride.
int64_t block_stride(const char* name, const TensorView& c, int64_t width) {
  const int r = c.ndim();
  const int64_t bs = c.dim(1);
  const bool row_ok = width <= 1 || c.stride(r - 1) == 1;
  const bool mid_ok = r == 3 || c.dim(2) <= 1 || c.stride(2) == width;
  const bool slots_ok = bs <= 1 || c.stride(1) == width;
  const int64_t stride = c.dim(0) > 1 ? c.stride(0) : bs * width;
  if (!row_ok || !mid_ok || !slots_ok || stride < bs * width) {
    fail(AOP_VALUE_ERROR, std::string(name) + " should have contiguous blocks (strides [>=" + str(bs * width) +
                              ", " + str(width) + (r == 4 ? ", " + str(width) : std::string()) +
                              ", 1]) but has strides " + c.strides_string());
  }
  return stride;
}

// [num_blocks, block_size, 1, W] or [num_blocks, block_size, W].
void expect_split_shape(const char* name, const TensorView& c, int64_t width, const char* width_name,
                        const char* layout) {
  if (c.ndim() != 3 && c.ndim() != 4) {
    fail(AOP_VALUE_ERROR, std::string(name) + " should be " + layout + " (rank 4 or 3) but has shape " +
                              c.shape_string());
  }
  if (c.ndim() == 4) expect_dim(name, c, 2, 1, layout, "the head dim");
  expect_dim(name, c, -1, width, layout, width_name);
}

}  // namespace

void set_scale_fmt(Args& a, bool given, const std::string& value) {
  if (given && value != "ue8m0") {
    fail(AOP_VALUE_ERROR, "scale_fmt should be None or 'ue8m0' but is '" + value + "'");
  }
  a.ue8m0 = given;
}

Dims validate(const Args& a) {
  const aop_dtype kd = a.k.dtype;
  if (kd != AOP_DTYPE_FLOAT16 && kd != AOP_DTYPE_BFLOAT16 && kd != AOP_DTYPE_FLOAT32) {
    fail(AOP_TYPE_ERROR, std::string("k should have dtype float16, bfloat16 or float32 but has ") + aop_dtype_name(kd));
  }
  const aop_dtype cd = a.k_cache.dtype;
  if (cd != AOP_DTYPE_UINT8 && cd != AOP_DTYPE_INT8) {
    fail(AOP_TYPE_ERROR, std::string("k_cache should have dtype uint8 (fused, fp8 E4M3FN codes and float32 scales) "
                                     "or int8 (split, with k_scale_cache) but has ") + aop_dtype_name(cd) +
                             " (a float8_e4m3fn split cache is not supported yet)");
  }
  const aop_dtype sd = a.slot_mapping.dtype;
  if (sd != AOP_DTYPE_INT32 && sd != AOP_DTYPE_INT64) {
    fail(AOP_TYPE_ERROR, std::string("slot_mapping should have dtype int32 or int64 but has ") + aop_dtype_name(sd));
  }
  Dims d{};
  d.format = cd == AOP_DTYPE_UINT8 ? Format::kFused : Format::kSplit;
  const bool fused = d.format == Format::kFused;
  if (fused && a.k_scale_cache) {
    fail(AOP_VALUE_ERROR, "k_scale_cache should be None with a fused (uint8) k_cache, which holds the scales, "
                          "but is given");
  }
  if (!fused && !a.k_scale_cache) {
    fail(AOP_VALUE_ERROR, "k_scale_cache should be given with a split (int8) k_cache but is None");
  }
  if (!fused) {
    const aop_dtype scd = a.k_scale_cache->dtype;
    if (scd != AOP_DTYPE_FLOAT16 && scd != AOP_DTYPE_FLOAT32) {
      fail(AOP_TYPE_ERROR, std::string("k_scale_cache should have dtype float16 or float32 (int8 k_cache) but has ") +
                               aop_dtype_name(scd));
    }
    if (a.ue8m0) {
      fail(AOP_VALUE_ERROR, "scale_fmt should be None with a split (int8) k_cache ('ue8m0' is for the fused "
                            "layout) but is 'ue8m0'");
    }
  }

  const TensorView k(a.k), cache(a.k_cache), slots(a.slot_mapping);
  if (k.ndim() != 2) fail(AOP_VALUE_ERROR, "k should be [T, D] (rank 2) but has shape " + k.shape_string());
  d.tokens = k.dim(0);
  d.head_dim = k.dim(1);
  if (d.head_dim <= 0) fail(AOP_VALUE_ERROR, "k should be [T, D] with D > 0 but has shape " + k.shape_string());
  const int64_t qbs = a.quant_block_size;
  if (qbs <= 0 || d.head_dim % qbs != 0) {
    fail(AOP_VALUE_ERROR, "quant_block_size should be > 0 and divide D = " + str(d.head_dim) + " (from k) but is " +
                              str(qbs));
  }
  d.quant_block = qbs;
  d.groups = d.head_dim / qbs;
  if (slots.ndim() != 1) {
    fail(AOP_VALUE_ERROR, "slot_mapping should be [T'] (rank 1) but has shape " + slots.shape_string());
  }
  d.written = slots.dim(0);
  if (d.written > d.tokens) {
    fail(AOP_VALUE_ERROR, "slot_mapping should be [T'] with T' <= T = " + str(d.tokens) + " (from k) but has shape " +
                              slots.shape_string());
  }

  if (fused) {
    if (cache.ndim() != 3) {
      fail(AOP_VALUE_ERROR, std::string("k_cache should be ") + kFusedLayout + " (rank 3) but has shape " +
                                cache.shape_string());
    }
    expect_dim("k_cache", cache, 2, d.head_dim + 4 * d.groups, kFusedLayout, "D + 4G (from k and quant_block_size)");
    d.cache_block_stride = block_stride("k_cache", cache, d.head_dim + 4 * d.groups);
  } else {
    expect_split_shape("k_cache", cache, d.head_dim, "D (from k)", kSplitLayout);
    const TensorView scale(*a.k_scale_cache);
    expect_split_shape("k_scale_cache", scale, d.groups, "G = D / quant_block_size", kScaleLayout);
    expect_dim("k_scale_cache", scale, 0, cache.dim(0), kScaleLayout, "num_blocks (from k_cache)");
    expect_dim("k_scale_cache", scale, 1, cache.dim(1), kScaleLayout, "block_size (from k_cache)");
    d.cache_block_stride = block_stride("k_cache", cache, d.head_dim);
    d.scale_block_stride = block_stride("k_scale_cache", scale, d.groups);
  }
  d.num_blocks = cache.dim(0);
  d.block_size = cache.dim(1);

  if (d.head_dim > 1 && k.stride(1) != 1) {
    fail(AOP_VALUE_ERROR, "k should have contiguous rows (strides [>=" + str(d.head_dim) + ", 1]) but has strides " +
                              k.strides_string());
  }
  d.k_row_stride = d.tokens > 1 ? k.stride(0) : d.head_dim;
  if (d.k_row_stride < d.head_dim) {
    fail(AOP_VALUE_ERROR, "k should have non-overlapping rows (strides [>=" + str(d.head_dim) +
                              ", 1]) but has strides " + k.strides_string());
  }
  if (slots.dim(0) > 1 && slots.stride(0) != 1) {
    fail(AOP_VALUE_ERROR, "slot_mapping should be contiguous but has strides " + slots.strides_string());
  }

  expect_same_device("k_cache", a.k_cache, a.k);
  expect_same_device("slot_mapping", a.slot_mapping, a.k);
  if (a.k_scale_cache) expect_same_device("k_scale_cache", *a.k_scale_cache, a.k);
  expect_data("k", k);
  expect_data("k_cache", cache);
  expect_data("slot_mapping", slots);
  if (a.k_scale_cache) expect_data("k_scale_cache", TensorView(*a.k_scale_cache));
  return d;
}

void check_npu_limits(const Args& a, const Dims& d) {
  if (d.format == Format::kFused) {
    fail(AOP_VALUE_ERROR, "the npu and emu backends take the split int8 layout only: Atlas A2 / A3 have no fp8 "
                          "conversion, so the fused fp8 layout (uint8 k_cache) runs on the cpu backend");
  }
  if (d.quant_block % 32 != 0) {
    fail(AOP_VALUE_ERROR, "the npu and emu backends need quant_block_size to be a multiple of 32 but it is " +
                              str(d.quant_block));
  }
  if (d.head_dim > kIkqMaxHeadDim) {
    fail(AOP_VALUE_ERROR, "the npu and emu backends need D <= " + str(kIkqMaxHeadDim) + " but k has D = " +
                              str(d.head_dim));
  }
  (void)a;
}

}  // namespace aop::indexer_k_quant_and_cache
