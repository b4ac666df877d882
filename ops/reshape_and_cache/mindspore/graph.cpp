// Graph mode: the aot kernel MindSpore's CPU runtime calls, and the compile-time check.
#include "graph.h"

#include <stdexcept>
#include <string>

#include "host/reshape_and_cache.h"
#include "ascend_ops/mindspore_view.hpp"

namespace aop::reshape_and_cache::ms_graph {
namespace {

constexpr const char* kOp = "reshape_and_cache";
constexpr int kInputs = 5;
constexpr const char* kArgNames[kInputs] = {"key", "value", "key_cache", "value_cache", "slot_mapping"};

// The inputs of a graph call, by count: (key, value, key_cache, value_cache, slot_mapping
// [, attrs]) or key-only (key, key_cache, slot_mapping [, attrs]); attrs is an int64 [2]
// tensor (cache_mode, head_num). For each tensor input, its index in kArgNames.
struct Form {
  bool has_value = true;
  bool has_attrs = false;
  int tensors = 5;
  int arg(int i) const { return has_value ? i : (i == 0 ? 0 : i == 1 ? 2 : 4); }
};

Form form_of(int inputs) {
  switch (inputs) {
    case 5: return Form{true, false, 5};
    case 6: return Form{true, true, 5};
    case 3: return Form{false, false, 3};
    case 4: return Form{false, true, 3};
    default:
      throw aop::Error(AOP_VALUE_ERROR, std::string(kOp) + ": expected (key, value, key_cache, value_cache, "
                                                           "slot_mapping[, attrs]) or (key, key_cache, "
                                                           "slot_mapping[, attrs]), got " +
                                            std::to_string(inputs) + " inputs");
  }
}

Args make(const Form& f, const aop_tensor* views, int64_t cache_mode, int64_t head_num) {
  Args a{};
  aop_tensor* slots[kInputs] = {&a.key, &a.value, &a.key_cache, &a.value_cache, &a.slot_mapping};
  for (int i = 0; i < f.tensors; ++i) *slots[f.arg(i)] = views[i];
  a.has_value = a.has_value_cache = f.has_value;
  a.cache_mode = cache_mode == static_cast<int32_t>(cache_mode) ? static_cast<int32_t>(cache_mode) : -1;
  a.head_num = head_num;
  return a;
}

}  // namespace

void validate_signature(const std::vector<std::vector<int64_t>>& shapes, const std::vector<std::string>& dtypes,
                        int64_t cache_mode, int64_t head_num) {
  ms_adapter::call_host([&] {
    if (shapes.size() != dtypes.size()) {
      throw aop::Error(AOP_VALUE_ERROR, std::string(kOp) + ": got " + std::to_string(shapes.size()) +
                                            " shapes but " + std::to_string(dtypes.size()) + " dtypes");
    }
    const Form f = form_of(static_cast<int>(shapes.size()));
    aop_tensor views[kInputs];
    for (int i = 0; i < f.tensors; ++i) {
      for (int64_t d : shapes[i]) {
        if (d < 0) return;  // dynamic shape: the aot kernel checks at run time
      }
      const char* name = kArgNames[f.arg(i)];
      views[i] = ms_adapter::aot_tensor(nullptr, static_cast<int>(shapes[i].size()), shapes[i].data(),
                                        ms_adapter::aot_dtype(dtypes[i].c_str(), kOp, name),
                                        aop_device{AOP_DEVICE_META, 0}, kOp, name);
    }
    validate(make(f, views, cache_mode, head_num));
  });
}

}  // namespace aop::reshape_and_cache::ms_graph

// MindSpore 2.10's CPU aot kernel (CustomAOTCpuKernelMod::Launch) catches a std::exception
// thrown by the kernel and raises RuntimeError "For 'Custom' on CPU, operator failed when
// executing user defined file <so>! Error message is <what()>"; a non-zero return only says
// "Return value ... is <n>". So a host error leaves as an exception whose message starts with
// the Python class PyNative would raise (extern "C" does not make the function noexcept).
extern "C" int aop_reshape_and_cache_aot(int nparam, void** params, int* ndims, int64_t** shapes,
                                         const char** dtypes, void* /*stream*/, void* /*extra*/) {
  using namespace aop::reshape_and_cache;
  using namespace aop::reshape_and_cache::ms_graph;
  try {
    const Form f = form_of(nparam - 1);  // the last parameter is the int32 [1] output
    aop_tensor views[kInputs];
    for (int i = 0; i < f.tensors; ++i) {
      const char* name = kArgNames[f.arg(i)];
      views[i] = aop::ms_adapter::aot_tensor(params[i], ndims[i], shapes[i],
                                             aop::ms_adapter::aot_dtype(dtypes[i], kOp, name),
                                             aop_device{AOP_DEVICE_CPU, 0}, kOp, name);
    }
    int64_t cache_mode = 0, head_num = 0;
    if (f.has_attrs) {
      const int i = f.tensors;
      if (ndims[i] != 1 || shapes[i][0] != 2 || std::string(dtypes[i]) != "int64") {
        throw aop::Error(AOP_VALUE_ERROR, std::string(kOp) + ": the attrs input should be int64 [2] "
                                                             "(cache_mode, head_num)");
      }
      cache_mode = static_cast<const int64_t*>(params[i])[0];
      head_num = static_cast<const int64_t*>(params[i])[1];
    }
    run_cpu(make(f, views, cache_mode, head_num));
    static_cast<int32_t*>(params[nparam - 1])[0] = 0;
    return 0;
  } catch (const aop::Error& e) {
    throw std::runtime_error(std::string(e.status_name()) + ": " + e.what());
  }
}
