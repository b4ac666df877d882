// aop::TensorView: read-only helpers over an aop_tensor (shape, strides in elements, dtype).
#pragma once
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "ascend_ops/config.hpp"
#include "ascend_ops/dtype.hpp"
#include "ascend_ops/error.hpp"
#include "ascend_ops/tensor.h"

AOP_NAMESPACE_BEGIN

class TensorView {
 public:
  TensorView() noexcept : t_() {}
  explicit TensorView(const aop_tensor& t) : t_(t) {
    check(t.ndim >= 0 && t.ndim <= AOP_MAX_DIMS, AOP_VALUE_ERROR, "a tensor should have 0 to ",
          AOP_MAX_DIMS, " dimensions, got ", t.ndim);
  }

  // A contiguous (row-major) view of `data` with `shape`.
  static TensorView contiguous(void* data, const std::vector<int64_t>& shape, aop_dtype dtype,
                               aop_device device = aop_device{AOP_DEVICE_CPU, 0}) {
    check(shape.size() <= AOP_MAX_DIMS, AOP_VALUE_ERROR, "a tensor should have at most ",
          AOP_MAX_DIMS, " dimensions, got ", shape.size());
    aop_tensor t{};
    t.data = data;
    t.ndim = static_cast<int32_t>(shape.size());
    t.dtype = dtype;
    t.device = device;
    int64_t stride = 1;
    for (int i = t.ndim - 1; i >= 0; --i) {
      check(shape[i] >= 0, AOP_VALUE_ERROR, "a tensor size should be >= 0, got ", shape[i]);
      t.shape[i] = shape[i];
      t.strides[i] = stride;
      stride *= shape[i] > 1 ? shape[i] : 1;
    }
    return TensorView(t);
  }

  const aop_tensor& raw() const noexcept { return t_; }
  void* data() const noexcept { return t_.data; }
  template <class T>
  T* data_as() const {
    check_dtype(t_.dtype, dtype_of<T>(), "the tensor");
    return static_cast<T*>(t_.data);
  }
  aop_dtype dtype() const noexcept { return t_.dtype; }
  aop_device device() const noexcept { return t_.device; }
  int ndim() const noexcept { return t_.ndim; }

  // dim(-1) is the last dimension; IndexError outside [-ndim, ndim).
  int64_t dim(int i) const { return t_.shape[wrap(i)]; }
  int64_t stride(int i) const { return t_.strides[wrap(i)]; }
  std::vector<int64_t> sizes() const { return std::vector<int64_t>(t_.shape, t_.shape + t_.ndim); }

  int64_t numel() const noexcept {
    int64_t n = 1;
    for (int i = 0; i < t_.ndim; ++i) n *= t_.shape[i];
    return n;
  }
  size_t nbytes() const { return static_cast<size_t>(numel()) * dtype_size(t_.dtype); }

  // Bytes from the first element to one past the last one the (non-negative) strides reach:
  // the memory a strided view spans. 0 when empty.
  size_t span_bytes() const noexcept {
    if (numel() == 0) return 0;
    int64_t last = 0;
    for (int i = 0; i < t_.ndim; ++i) last += (t_.shape[i] - 1) * t_.strides[i];
    return static_cast<size_t>(last + 1) * dtype_size(t_.dtype);
  }

  // Row-major with no gaps (sizes 0 and 1 place no constraint on their stride).
  bool is_contiguous() const noexcept { return last_dims_contiguous(t_.ndim); }

  // The last `k` dimensions are packed row-major (stride 1 innermost, each next stride the
  // product of the inner sizes); outer dimensions may have any stride. k <= 0 is true.
  bool last_dims_contiguous(int k) const noexcept {
    if (k > t_.ndim) return false;
    if (numel() == 0) return true;
    int64_t expected = 1;
    for (int i = t_.ndim - 1; i >= t_.ndim - k; --i) {
      if (t_.shape[i] != 1 && t_.strides[i] != expected) return false;
      expected *= t_.shape[i];
    }
    return true;
  }

  // "[2, 3, 4]"; "[]" for a scalar.
  std::string shape_string() const {
    std::string s = "[";
    for (int i = 0; i < t_.ndim; ++i) {
      if (i > 0) s += ", ";
      s += std::to_string(t_.shape[i]);
    }
    return s + "]";
  }

  // "[1024, 128, 1]"; in elements.
  std::string strides_string() const {
    std::string s = "[";
    for (int i = 0; i < t_.ndim; ++i) {
      if (i > 0) s += ", ";
      s += std::to_string(t_.strides[i]);
    }
    return s + "]";
  }

 private:
  // dim() / stride() run on every call of every op: the message is built only on failure (as an
  // argument of check() it was built each time, a std::string per call: most of a small call).
  int wrap(int i) const {
    const int j = i < 0 ? i + t_.ndim : i;
    if (j < 0 || j >= t_.ndim) {
      check(false, AOP_INDEX_ERROR, "dimension ", i, " is out of range for a ", t_.ndim, "-D tensor of shape ",
            shape_string());
    }
    return j;
  }

  aop_tensor t_;
};

// "cpu", "npu:1", "meta".
inline std::string device_string(aop_device d) {
  switch (d.type) {
    case AOP_DEVICE_CPU: return "cpu";
    case AOP_DEVICE_NPU: return "npu:" + std::to_string(d.index);
    case AOP_DEVICE_META: return "meta";
  }
  return "device type " + std::to_string(static_cast<int>(d.type));
}

AOP_NAMESPACE_END
