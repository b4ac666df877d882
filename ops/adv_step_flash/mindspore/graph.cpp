// Graph mode: the aot kernel MindSpore's CPU runtime calls, and the compile-time check.
#include "graph.h"

#include <stdexcept>
#include <string>

#include "host/adv_step_flash.h"
#include "ascend_ops/mindspore_view.hpp"

namespace aop::adv_step_flash::ms_graph {
namespace {

constexpr const char* kOp = "advance_step_flashattn";
constexpr int kInts = 3;     // num_seqs, num_queries, block_size
constexpr int kTensors = 6;  // input_tokens .. block_tables
constexpr const char* kIntNames[kInts] = {"num_seqs", "num_queries", "block_size"};
constexpr const char* kTensorNames[kTensors] = {"input_tokens", "sampled_token_ids", "input_positions",
                                                "seq_lens",     "slot_mapping",      "block_tables"};

Args make(const int64_t* ints, const aop_tensor* views) {
  return Args{ints[0], ints[1], ints[2], views[0], views[1], views[2], views[3], views[4], views[5]};
}

// A scalar input of the aot kernel: a 0-d (or [1]) int64 / int32.
int64_t scalar(void* data, int ndim, const int64_t* shape, const char* dtype, const char* name) {
  const bool one = ndim == 0 || (ndim == 1 && shape[0] == 1);
  const aop_dtype type = ms_adapter::aot_dtype(dtype, kOp, name);
  if (!one || (type != AOP_DTYPE_INT64 && type != AOP_DTYPE_INT32)) {
    throw aop::Error(AOP_TYPE_ERROR, std::string(kOp) + ": " + name + " should be an int but the graph passes a " +
                                         std::to_string(ndim) + "-d " + dtype);
  }
  return type == AOP_DTYPE_INT64 ? *static_cast<const int64_t*>(data) : *static_cast<const int32_t*>(data);
}

}  // namespace

void validate_signature(const std::vector<int64_t>& ints, const std::vector<std::vector<int64_t>>& shapes,
                        const std::vector<std::string>& dtypes) {
  ms_adapter::call_host([&] {
    if (ints.size() != kInts || shapes.size() != kTensors || dtypes.size() != kTensors) {
      throw aop::Error(AOP_VALUE_ERROR, std::string(kOp) + ": expected 3 ints and 6 tensors, got " +
                                            std::to_string(ints.size()) + " and " + std::to_string(shapes.size()));
    }
    aop_tensor views[kTensors];
    for (int i = 0; i < kTensors; ++i) {
      for (int64_t d : shapes[i]) {
        if (d < 0) return;  // dynamic shape: the aot kernel checks at run time
      }
      views[i] = ms_adapter::aot_tensor(nullptr, static_cast<int>(shapes[i].size()), shapes[i].data(),
                                        ms_adapter::aot_dtype(dtypes[i].c_str(), kOp, kTensorNames[i]),
                                        aop_device{AOP_DEVICE_META, 0}, kOp, kTensorNames[i]);
    }
    validate(make(ints.data(), views));
  });
}

}  // namespace aop::adv_step_flash::ms_graph

// MindSpore 2.10's CPU aot kernel (CustomAOTCpuKernelMod::Launch) catches a std::exception
// thrown by the kernel and raises RuntimeError "... Error message is <what()>"; a non-zero
// return only says "Return value ... is <n>". So a host error leaves as an exception whose
// message starts with the Python class PyNative would raise.
extern "C" int aop_adv_step_flash_aot(int nparam, void** params, int* ndims, int64_t** shapes, const char** dtypes,
                                      void* /*stream*/, void* /*extra*/) {
  using namespace aop::adv_step_flash;
  using namespace aop::adv_step_flash::ms_graph;
  try {
    if (nparam != kInts + kTensors + 1) {
      throw aop::Error(AOP_VALUE_ERROR, std::string(kOp) + ": the aot kernel expects 9 inputs and 1 output, got " +
                                            std::to_string(nparam) + " parameters");
    }
    int64_t ints[kInts];
    for (int i = 0; i < kInts; ++i) ints[i] = scalar(params[i], ndims[i], shapes[i], dtypes[i], kIntNames[i]);
    aop_tensor views[kTensors];
    for (int i = 0; i < kTensors; ++i) {
      const int p = kInts + i;
      views[i] = aop::ms_adapter::aot_tensor(params[p], ndims[p], shapes[p],
                                             aop::ms_adapter::aot_dtype(dtypes[p], kOp, kTensorNames[i]),
                                             aop_device{AOP_DEVICE_CPU, 0}, kOp, kTensorNames[i]);
    }
    run_cpu(make(ints, views));
    static_cast<int32_t*>(params[kInts + kTensors])[0] = 0;
    return 0;
  } catch (const aop::Error& e) {
    throw std::runtime_error(std::string(e.status_name()) + ": " + e.what());
  }
}
