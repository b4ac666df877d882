// aop::KeyBuilder: serialises (op, shapes, dtypes, attributes, platform) into the bytes of a
// cache key. Every field is written with a tag and, where its length varies, its length, so
// two different sequences of fields never give the same bytes.
#pragma once
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "ascend_ops/config.hpp"
#include "ascend_ops/dtype.h"
#include "ascend_ops/hash.h"
#include "ascend_ops/platform.h"
#include "ascend_ops/tensor.hpp"

AOP_NAMESPACE_BEGIN

inline uint64_t hash_bytes(const void* data, size_t len, uint64_t seed = 0) noexcept {
  return aop_hash_bytes(data, len, seed);
}

class KeyBuilder {
 public:
  // Every key starts with the op name, so two ops never share an entry.
  explicit KeyBuilder(std::string_view op) { add_text('O', op); }

  KeyBuilder& add_int(int64_t v) { return add_pod('I', v); }
  KeyBuilder& add_bool(bool v) { return add_pod('B', static_cast<uint8_t>(v ? 1 : 0)); }
  KeyBuilder& add_float(double v) { return add_pod('F', v); }  // by bits: -0.0 != 0.0
  KeyBuilder& add_string(std::string_view s) { return add_text('S', s); }
  KeyBuilder& add_dtype(aop_dtype d) { return add_pod('D', static_cast<int32_t>(d)); }

  KeyBuilder& add_ints(const int64_t* v, size_t n) { return add_array('L', v, n); }
  KeyBuilder& add_ints(const std::vector<int64_t>& v) { return add_ints(v.data(), v.size()); }
  KeyBuilder& add_ints(std::initializer_list<int64_t> v) { return add_ints(v.begin(), v.size()); }
  KeyBuilder& add_shape(const int64_t* dims, size_t ndim) { return add_array('H', dims, ndim); }
  KeyBuilder& add_shape(const std::vector<int64_t>& dims) { return add_shape(dims.data(), dims.size()); }
  KeyBuilder& add_shape(std::initializer_list<int64_t> dims) {
    return add_shape(dims.begin(), dims.size());
  }

  // dtype, device type, shape and strides (not the data pointer nor the device index).
  KeyBuilder& add_tensor(const TensorView& t) {
    put_tag('T');
    add_dtype(t.dtype());
    add_pod('V', static_cast<int32_t>(t.device().type));
    add_shape(t.raw().shape, static_cast<size_t>(t.ndim()));
    return add_array('R', t.raw().strides, static_cast<size_t>(t.ndim()));
  }

  // Every figure a tiling may depend on, so a key never outlives a platform change.
  KeyBuilder& add_platform(const aop_platform& p) {
    put_tag('P');
    size_t soc_len = 0;
    while (soc_len < sizeof(p.soc) && p.soc[soc_len] != '\0') ++soc_len;
    add_text('S', std::string_view(p.soc, soc_len));
    const int64_t figures[] = {p.aiv_cores, p.aic_cores, p.ub_bytes, p.l1_bytes,
                               p.l0a_bytes, p.l0b_bytes, p.l0c_bytes};
    return add_array('L', figures, sizeof(figures) / sizeof(figures[0]));
  }

  const std::string& bytes() const noexcept { return bytes_; }
  const void* data() const noexcept { return bytes_.data(); }
  size_t size() const noexcept { return bytes_.size(); }
  uint64_t hash(uint64_t seed = 0) const noexcept { return hash_bytes(data(), size(), seed); }

 private:
  void put_tag(char tag) { bytes_.push_back(tag); }
  void put_raw(const void* p, size_t n) { bytes_.append(static_cast<const char*>(p), n); }

  template <class T>
  KeyBuilder& add_pod(char tag, const T& v) {
    put_tag(tag);
    put_raw(&v, sizeof(v));
    return *this;
  }
  KeyBuilder& add_text(char tag, std::string_view s) {
    add_pod(tag, static_cast<uint64_t>(s.size()));
    put_raw(s.data(), s.size());
    return *this;
  }
  KeyBuilder& add_array(char tag, const int64_t* v, size_t n) {
    add_pod(tag, static_cast<uint64_t>(n));
    put_raw(v, n * sizeof(int64_t));
    return *this;
  }

  std::string bytes_;
};

AOP_NAMESPACE_END
