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

}  // namespace

void validate_signature(const std::vector<std::vector<int64_t>>& shapes, const std::vector<std::string>& dtypes) {
  ms_adapter::call_host([&] {
    if (shapes.size() != kInputs || dtypes.size() != kInputs) {
      throw aop::Error(AOP_VALUE_ERROR, std::string(kOp) + ": expected 5 arguments (key, value, key_cache, "
                                                           "value_cache, slot_mapping), got " +
                                            std::to_string(shapes.size()));
    }
    aop_tensor views[kInputs];
    for (int i = 0; i < kInputs; ++i) {
      for (int64_t d : shapes[i]) {
        if (d < 0) return;  // dynamic shape: the aot kernel checks at run time
      }
      views[i] = ms_adapter::aot_tensor(nullptr, static_cast<int>(shapes[i].size()), shapes[i].data(),
                                        ms_adapter::aot_dtype(dtypes[i].c_str(), kOp, kArgNames[i]),
                                        aop_device{AOP_DEVICE_META, 0}, kOp, kArgNames[i]);
    }
    validate(Args{views[0], views[1], views[2], views[3], views[4]});
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
  using ms_graph::kArgNames;
  using ms_graph::kInputs;
  using ms_graph::kOp;
  try {
    if (nparam != kInputs + 1) {
      throw aop::Error(AOP_VALUE_ERROR, std::string(kOp) + ": the aot kernel expects 5 inputs and 1 output, got " +
                                            std::to_string(nparam) + " parameters");
    }
    aop_tensor views[kInputs];
    for (int i = 0; i < kInputs; ++i) {
      views[i] = aop::ms_adapter::aot_tensor(params[i], ndims[i], shapes[i],
                                             aop::ms_adapter::aot_dtype(dtypes[i], kOp, kArgNames[i]),
                                             aop_device{AOP_DEVICE_CPU, 0}, kOp, kArgNames[i]);
    }
    run_cpu(Args{views[0], views[1], views[2], views[3], views[4]});
    static_cast<int32_t*>(params[kInputs])[0] = 0;
    return 0;
  } catch (const aop::Error& e) {
    throw std::runtime_error(std::string(e.status_name()) + ": " + e.what());
  }
}
