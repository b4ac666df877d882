// An op's description (ascend_ops/op_params.hpp): the torch schema derived from it, and the
// setters that write a front door's values into the op's Args.
#include <array>
#include <optional>
#include <string>

#include "aop_test.h"
#include "ascend_ops/op_params.hpp"

namespace {

using aop::desc::Access;
using aop::desc::Kind;
using aop::desc::Value;

struct Args {
  aop_tensor x;
  aop_tensor cache;
  bool has_cache = false;
  std::optional<aop_tensor> lengths;
  int64_t count = -1;
  bool flag = false;
  std::string layout;
  double scale = -1.0;
  float scale32 = -1.0f;
  aop_tensor out;
};

using Param = aop::desc::Param<Args>;
using Output = aop::desc::Output<Args>;

const std::array<Param, 7> kParams{{
    {"x", Kind::kTensor, Access::kRead, false, false, nullptr, &aop::desc::set_field<&Args::x>},
    {"cache", Kind::kTensor, Access::kWrite, true, false, nullptr,
     &aop::desc::set_flagged<&Args::cache, &Args::has_cache>},
    {"n", Kind::kSymInt, Access::kRead, false, false, nullptr, &aop::desc::set_field<&Args::count>},
    {"lengths", Kind::kTensor, Access::kRead, true, true, "None", &aop::desc::set_field<&Args::lengths>},
    {"layout", Kind::kString, Access::kRead, false, true, "\"BSND\"", &aop::desc::set_field<&Args::layout>},
    {"flag", Kind::kBool, Access::kRead, false, true, "False", &aop::desc::set_field<&Args::flag>},
    {"scale", Kind::kFloat, Access::kRead, false, true, "1.0", &aop::desc::set_field<&Args::scale>},
}};

aop_tensor view_of(void* data) {
  aop_tensor t{};
  t.data = data;
  t.ndim = 1;
  t.shape[0] = 4;
  t.strides[0] = 1;
  return t;
}

}  // namespace

TEST(schema_of_in_place_optional_and_keyword_arguments) {
  const std::array<Output, 0> none{};
  CHECK_EQ(aop::desc::schema("op", kParams, none),
           std::string("op(Tensor x, Tensor(a!)? cache, SymInt n, *, Tensor? lengths=None, str layout=\"BSND\", "
                       "bool flag=False, float scale=1.0) -> ()"));
}

TEST(schema_names_the_outputs) {
  const std::array<Output, 2> outputs{{{"idx", AOP_DTYPE_INT32, nullptr, &aop::desc::set_field<&Args::out>},
                                       {"val", AOP_DTYPE_FLOAT32, "flag", &aop::desc::ignore<Args>}}};
  const std::string s = aop::desc::schema("op", kParams, outputs);
  const std::string tail = ") -> (Tensor idx, Tensor? val)";
  CHECK(s.size() > tail.size() && s.substr(s.size() - tail.size()) == tail);
}

TEST(an_output_takes_a_fixed_dtype_or_that_of_a_tensor_argument) {
  const Output fixed{"idx", AOP_DTYPE_INT32, nullptr, &aop::desc::set_field<&Args::out>};
  CHECK(fixed.dtype_of == nullptr);  // existing descriptions: a fixed dtype, as before
  CHECK_EQ(aop::desc::output_dtype_param(fixed, kParams), -1);
  const Output like_x{"out", AOP_DTYPE_COUNT, nullptr, &aop::desc::set_field<&Args::out>, nullptr, "x"};
  CHECK_EQ(aop::desc::output_dtype_param(like_x, kParams), 0);
}

TEST(dtype_of_must_name_a_required_tensor_argument) {
  for (const char* name : {"no_such", "lengths", "n"}) {  // unknown, an optional tensor, an int
    const Output bad{"out", AOP_DTYPE_COUNT, nullptr, &aop::desc::ignore<Args>, nullptr, name};
    CHECK_THROWS_AS(aop::desc::output_dtype_param(bad, kParams), aop::Error, [&](const aop::Error& e) {
      CHECK_EQ(e.status(), AOP_RUNTIME_ERROR);
      CHECK(contains(e.what(), name));
    });
  }
}

TEST(setters_write_the_fields) {
  Args a;
  int data[4] = {};
  kParams[0].set(a, Value::of(view_of(data)));
  CHECK(a.x.data == data);
  kParams[1].set(a, Value::of(view_of(data)));
  CHECK(a.has_cache && a.cache.data == data);
  kParams[1].set(a, Value::none());  // an absent optional: no view, the flag down
  CHECK(!a.has_cache && a.cache.data == nullptr);
  kParams[2].set(a, Value::of_int(7));
  CHECK_EQ(a.count, int64_t{7});
  kParams[3].set(a, Value::none());
  CHECK(!a.lengths.has_value());
  kParams[3].set(a, Value::of(view_of(data)));
  CHECK(a.lengths.has_value() && a.lengths->data == data);
  kParams[4].set(a, Value::of_string("TND"));
  CHECK_EQ(a.layout, std::string("TND"));
  kParams[5].set(a, Value::of_bool(true));
  CHECK(a.flag);
  kParams[6].set(a, Value::of_float(0.1));
  CHECK(a.scale == 0.1);  // the very double given
}

TEST(a_float_value_keeps_its_double_and_fills_float_fields) {
  const Value v = Value::of_float(0.1);
  CHECK(v.tag == Value::Tag::kFloat && v.f == 0.1 && !v.is_none());
  Args a;
  aop::desc::set_field<&Args::scale32>(a, v);
  CHECK(a.scale32 == 0.1f);
  aop::desc::set_field<&Args::scale>(a, Value::of_float(-1e300));
  CHECK(a.scale == -1e300);
  aop::desc::set_field<&Args::scale>(a, Value::none());  // float? None
  CHECK(a.scale == 0.0);
}

TEST(schema_of_an_optional_float) {
  const std::array<Param, 1> p{{{"s", Kind::kFloat, Access::kRead, true, false, "None", &aop::desc::set_field<&Args::scale>}}};
  const std::array<Output, 0> none{};
  CHECK_EQ(aop::desc::schema("op", p, none), std::string("op(float? s=None) -> ()"));
}

TEST(an_absent_int_is_zero) {
  Args a;
  kParams[2].set(a, Value::none());  // int? None: "not given"
  CHECK_EQ(a.count, int64_t{0});
}

TEST(written_marks_in_place_tensors_only) {
  CHECK(!kParams[0].written());
  CHECK(kParams[1].written());
  CHECK(!kParams[2].written() && !kParams[2].is_tensor());
  CHECK(!kParams[6].written() && !kParams[6].is_tensor());
}

TEST(param_index_finds_an_argument_by_name) {
  CHECK_EQ(aop::desc::param_index(kParams, "flag"), 5);
  CHECK_EQ(aop::desc::param_index(kParams, "x"), 0);
  CHECK_EQ(aop::desc::param_index(kParams, "no_such"), -1);
}
