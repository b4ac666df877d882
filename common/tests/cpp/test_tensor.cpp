// aop::TensorView: dims, sizes, contiguity, shape strings.
#include <string>
#include <vector>

#include "aop_test.h"
#include "ascend_ops/tensor.hpp"

namespace {
aop_tensor make(std::vector<int64_t> shape, std::vector<int64_t> strides, aop_dtype dtype) {
  aop_tensor t{};
  t.ndim = static_cast<int32_t>(shape.size());
  for (size_t i = 0; i < shape.size(); ++i) {
    t.shape[i] = shape[i];
    t.strides[i] = strides[i];
  }
  t.dtype = dtype;
  return t;
}
}  // namespace

TEST(contiguous_factory_and_sizes) {
  float buf[24];
  const aop::TensorView t = aop::TensorView::contiguous(buf, {2, 3, 4}, AOP_DTYPE_FLOAT32);
  CHECK_EQ(t.ndim(), 3);
  CHECK_EQ(t.stride(0), 12);
  CHECK_EQ(t.stride(1), 4);
  CHECK_EQ(t.stride(2), 1);
  CHECK_EQ(t.numel(), 24);
  CHECK_EQ(t.nbytes(), 96u);
  CHECK(t.is_contiguous());
  CHECK_EQ(t.shape_string(), "[2, 3, 4]");
  CHECK(t.data_as<float>() == buf);
  CHECK_THROWS(t.data_as<int32_t>(), aop::Error);
  CHECK(t.sizes() == std::vector<int64_t>({2, 3, 4}));
}

TEST(negative_dims_and_range) {
  const aop::TensorView t(make({5, 7}, {7, 1}, AOP_DTYPE_FLOAT16));
  CHECK_EQ(t.dim(-1), 7);
  CHECK_EQ(t.dim(-2), 5);
  CHECK_EQ(t.dim(0), 5);
  CHECK_EQ(t.dim(1), 7);
  CHECK_THROWS_AS(t.dim(2), aop::Error, [](const aop::Error& e) {
    CHECK_EQ(e.status(), AOP_INDEX_ERROR);
    CHECK(contains(e.what(), "dimension 2 is out of range for a 2-D tensor of shape [5, 7]"));
  });
  CHECK_THROWS(t.dim(-3), aop::Error);
  CHECK_EQ(t.nbytes(), 70u);
}

TEST(scalar_and_empty) {
  const aop::TensorView scalar(make({}, {}, AOP_DTYPE_INT64));
  CHECK_EQ(scalar.numel(), 1);
  CHECK_EQ(scalar.nbytes(), 8u);
  CHECK_EQ(scalar.shape_string(), "[]");
  CHECK(scalar.is_contiguous());
  const aop::TensorView empty(make({3, 0, 5}, {99, 7, 3}, AOP_DTYPE_INT8));
  CHECK_EQ(empty.numel(), 0);
  CHECK_EQ(empty.nbytes(), 0u);
  CHECK(empty.is_contiguous());  // no element to misplace
}

TEST(non_contiguous_layouts) {
  // A transpose of a [3, 4] tensor.
  const aop::TensorView transposed(make({4, 3}, {1, 4}, AOP_DTYPE_FLOAT32));
  CHECK(!transposed.is_contiguous());
  CHECK(!transposed.last_dims_contiguous(1));
  // Rows of 8 padded to 16: each row is packed, the whole is not.
  const aop::TensorView padded(make({4, 8}, {16, 1}, AOP_DTYPE_FLOAT32));
  CHECK(!padded.is_contiguous());
  CHECK(padded.last_dims_contiguous(1));
  CHECK(!padded.last_dims_contiguous(2));
  CHECK(padded.last_dims_contiguous(0));
  CHECK(!padded.last_dims_contiguous(3));
  // A KV-cache slice [blocks, block_size, heads, dim] taken on blocks: inner 3 dims packed.
  const aop::TensorView kv(make({10, 16, 4, 64}, {2 * 16 * 4 * 64, 256, 64, 1}, AOP_DTYPE_BFLOAT16));
  CHECK(kv.last_dims_contiguous(3));
  CHECK(!kv.is_contiguous());
  // Size-1 dims may carry any stride.
  const aop::TensorView ones(make({1, 6, 1}, {123, 1, 55}, AOP_DTYPE_FLOAT32));
  CHECK(ones.is_contiguous());
}

TEST(rejects_bad_rank) {
  aop_tensor t{};
  t.ndim = AOP_MAX_DIMS + 1;
  CHECK_THROWS_AS(aop::TensorView{t}, aop::Error,
                  [](const aop::Error& e) { CHECK_EQ(e.status(), AOP_VALUE_ERROR); });
  CHECK_THROWS(aop::TensorView::contiguous(nullptr, std::vector<int64_t>(9, 1), AOP_DTYPE_INT8),
               aop::Error);
}
