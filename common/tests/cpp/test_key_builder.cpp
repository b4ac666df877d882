// aop::KeyBuilder: equal inputs give equal keys; any difference in op, shape, dtype,
// attribute, string, tensor layout or platform gives a different key; field boundaries can't
// be shifted to forge the same bytes.
#include <set>
#include <string>
#include <vector>

#include "aop_test.h"
#include "ascend_ops/hash.hpp"
#include "ascend_ops/platform.hpp"

namespace {
aop::KeyBuilder base() {
  aop::KeyBuilder k("my_op");
  k.add_shape({16, 8, 128}).add_dtype(AOP_DTYPE_FLOAT16).add_int(64).add_string("auto");
  return k;
}
}  // namespace

TEST(same_inputs_same_key) {
  CHECK(base().bytes() == base().bytes());
  CHECK_EQ(base().hash(), base().hash());
  CHECK_EQ(base().hash(), aop_hash_bytes(base().data(), base().size(), 0));
  CHECK(base().hash(1) != base().hash(0));
}

TEST(each_difference_changes_the_key) {
  std::vector<std::string> keys = {
      base().bytes(),
      aop::KeyBuilder("rms_norm").add_shape({16, 8, 128}).add_dtype(AOP_DTYPE_FLOAT16).add_int(64).add_string("auto").bytes(),
      aop::KeyBuilder("my_op").add_shape({16, 8, 129}).add_dtype(AOP_DTYPE_FLOAT16).add_int(64).add_string("auto").bytes(),
      aop::KeyBuilder("my_op").add_shape({16, 1024}).add_dtype(AOP_DTYPE_FLOAT16).add_int(64).add_string("auto").bytes(),
      aop::KeyBuilder("my_op").add_shape({16, 8, 128}).add_dtype(AOP_DTYPE_BFLOAT16).add_int(64).add_string("auto").bytes(),
      aop::KeyBuilder("my_op").add_shape({16, 8, 128}).add_dtype(AOP_DTYPE_FLOAT16).add_int(65).add_string("auto").bytes(),
      aop::KeyBuilder("my_op").add_shape({16, 8, 128}).add_dtype(AOP_DTYPE_FLOAT16).add_int(64).add_string("fp8").bytes(),
      aop::KeyBuilder("my_op").add_shape({16, 8, 128}).add_dtype(AOP_DTYPE_FLOAT16).add_int(64).bytes(),
  };
  const std::set<std::string> distinct(keys.begin(), keys.end());
  CHECK_EQ(distinct.size(), keys.size());
  std::set<uint64_t> hashes;
  for (const std::string& k : keys) hashes.insert(aop_hash_bytes(k.data(), k.size(), 0));
  CHECK_EQ(hashes.size(), keys.size());
}

TEST(field_boundaries_are_unambiguous) {
  CHECK(aop::KeyBuilder("op").add_string("ab").add_string("c").bytes() !=
        aop::KeyBuilder("op").add_string("a").add_string("bc").bytes());
  CHECK(aop::KeyBuilder("op").add_shape({1, 2}).add_shape({3}).bytes() !=
        aop::KeyBuilder("op").add_shape({1}).add_shape({2, 3}).bytes());
  CHECK(aop::KeyBuilder("op").add_shape({}).add_shape({4}).bytes() !=
        aop::KeyBuilder("op").add_shape({4}).add_shape({}).bytes());
  CHECK(aop::KeyBuilder("opx").bytes() != aop::KeyBuilder("op").add_string("x").bytes());
  CHECK(aop::KeyBuilder("op").add_int(1).bytes() != aop::KeyBuilder("op").add_bool(true).bytes());
  CHECK(aop::KeyBuilder("op").add_int(4).bytes() != aop::KeyBuilder("op").add_shape({4}).bytes());
  CHECK(aop::KeyBuilder("op").add_shape({4}).bytes() != aop::KeyBuilder("op").add_ints({4}).bytes());
  CHECK(aop::KeyBuilder("op").add_float(0.0).bytes() != aop::KeyBuilder("op").add_float(-0.0).bytes());
  CHECK(aop::KeyBuilder("op").add_float(1e-6).bytes() != aop::KeyBuilder("op").add_float(1e-6 * 1.0000001).bytes());
  CHECK(aop::KeyBuilder("op").add_bool(false).bytes() != aop::KeyBuilder("op").add_bool(true).bytes());
}

TEST(tensor_layout_is_part_of_the_key) {
  float buf[32];
  const aop::TensorView a = aop::TensorView::contiguous(buf, {4, 8}, AOP_DTYPE_FLOAT32);
  const aop::TensorView moved = aop::TensorView::contiguous(buf + 1, {4, 8}, AOP_DTYPE_FLOAT32);
  aop_tensor padded_raw = a.raw();
  padded_raw.strides[0] = 16;
  const aop::TensorView padded(padded_raw);
  aop_tensor npu_raw = a.raw();
  npu_raw.device = aop_device{AOP_DEVICE_NPU, 0};
  const aop::TensorView npu(npu_raw);
  const aop::TensorView half = aop::TensorView::contiguous(buf, {4, 8}, AOP_DTYPE_FLOAT16);
  auto key = [](const aop::TensorView& t) { return aop::KeyBuilder("op").add_tensor(t).bytes(); };
  CHECK(key(a) == key(moved));  // the data pointer is not part of it
  CHECK(key(a) != key(padded));
  CHECK(key(a) != key(npu));
  CHECK(key(a) != key(half));
}

TEST(platform_is_part_of_the_key) {
  std::set<std::string> keys;
  for (const aop::Platform& p : aop::platform_presets()) {
    keys.insert(aop::KeyBuilder("op").add_platform(p).bytes());
  }
  CHECK_EQ(keys.size(), aop::platform_presets().size());
  aop::Platform custom = aop::platform_preset("Ascend910B2");
  const std::string before = aop::KeyBuilder("op").add_platform(custom).bytes();
  custom.ub_bytes -= 1024;  // same name, different figures
  CHECK(aop::KeyBuilder("op").add_platform(custom).bytes() != before);
}
