// Graph mode: the aot kernel MindSpore's CPU runtime calls, and the compile-time check.
#include "graph.h"

#include <stdexcept>
#include <string>

#include "host/lightning_indexer.h"
#include "ascend_ops/mindspore_view.hpp"

namespace aop::lightning_indexer::ms_graph {
namespace {

constexpr const char* kOp = "lightning_indexer";
constexpr int kTensors = 6;
constexpr int kScalars = 6;
constexpr int kOutputs = 2;
constexpr const char* kTensorNames[kTensors] = {"query", "key", "weights", "actual_seq_lengths_query",
                                                "actual_seq_lengths_key", "block_table"};
constexpr const char* kScalarNames[kScalars] = {"layout_query", "layout_key", "sparse_count",
                                                "sparse_mode", "present", "return_value"};

[[noreturn]] void fail(aop_status status, const std::string& what) {
  throw aop::Error(status, std::string(kOp) + ": " + what);
}

Layout to_layout(int64_t code, const char* arg, bool is_key) {
  if (code == static_cast<int64_t>(Layout::kBSND)) return Layout::kBSND;
  if (code == static_cast<int64_t>(Layout::kTND)) return Layout::kTND;
  if (is_key && code == static_cast<int64_t>(Layout::kPA_BSND)) return Layout::kPA_BSND;
  fail(AOP_VALUE_ERROR, std::string(arg) + " should be " + (is_key ? "'PA_BSND', 'BSND' or 'TND'" : "'BSND' or 'TND'") +
                            " but has the unknown code " + std::to_string(code));
}

// A scalar input of the aot kernel: a 0-d (or [1]) int64 / int32 / bool.
int64_t scalar(void* data, int ndim, const int64_t* shape, const char* dtype, const char* name) {
  const bool one = ndim == 0 || (ndim == 1 && shape[0] == 1);
  if (one && dtype != nullptr && std::string(dtype) == "bool") return *static_cast<const bool*>(data) ? 1 : 0;
  const aop_dtype type = ms_adapter::aot_dtype(dtype, kOp, name);
  if (!one || (type != AOP_DTYPE_INT64 && type != AOP_DTYPE_INT32)) {
    fail(AOP_TYPE_ERROR, std::string(name) + " should be an int but the graph passes a " + std::to_string(ndim) +
                             "-d " + dtype);
  }
  return type == AOP_DTYPE_INT64 ? *static_cast<const int64_t*>(data) : *static_cast<const int32_t*>(data);
}

}  // namespace

Args graph_args(const aop_tensor* views, int64_t layout_query, int64_t layout_key, int64_t sparse_count,
                int64_t sparse_mode, int64_t present) {
  Args a;
  a.query = views[0];
  a.key = views[1];
  a.weights = views[2];
  if (present & 1) a.actual_seq_lengths_query = views[3];
  if (present & 2) a.actual_seq_lengths_key = views[4];
  if (present & 4) a.block_table = views[5];
  a.layout_query = to_layout(layout_query, "layout_query", false);
  a.layout_key = to_layout(layout_key, "layout_key", true);
  a.sparse_count = sparse_count;
  a.sparse_mode = sparse_mode;
  return a;
}

int64_t layout_code(const std::string& name, const std::string& arg, bool is_key) {
  int64_t code = 0;
  ms_adapter::call_host([&] { code = static_cast<int64_t>(parse_layout(name, arg.c_str(), is_key)); });
  return code;
}

std::vector<int64_t> output_shape(const std::vector<std::vector<int64_t>>& shapes,
                                  const std::vector<std::string>& dtypes, int64_t layout_query, int64_t layout_key,
                                  int64_t sparse_count, int64_t sparse_mode, int64_t present) {
  std::vector<int64_t> shape;
  ms_adapter::call_host([&] {
    if (shapes.size() != kTensors || dtypes.size() != kTensors) {
      fail(AOP_VALUE_ERROR, "expected 6 tensors (query, key, weights, actual_seq_lengths_query, "
                            "actual_seq_lengths_key, block_table), got " + std::to_string(shapes.size()));
    }
    aop_tensor views[kTensors];
    for (int i = 0; i < kTensors; ++i) {
      if (i >= 3 && !(present & (1 << (i - 3)))) continue;  // absent: a placeholder
      for (int64_t d : shapes[i]) {
        if (d < 0) return;  // dynamic shape: the aot kernel checks at run time
      }
      views[i] = ms_adapter::aot_tensor(nullptr, static_cast<int>(shapes[i].size()), shapes[i].data(),
                                        ms_adapter::aot_dtype(dtypes[i].c_str(), kOp, kTensorNames[i]),
                                        aop_device{AOP_DEVICE_META, 0}, kOp, kTensorNames[i]);
    }
    const Args args = graph_args(views, layout_query, layout_key, sparse_count, sparse_mode, present);
    validate(args, false);
    shape = aop::lightning_indexer::output_shape(args);
  });
  return shape;
}

}  // namespace aop::lightning_indexer::ms_graph

// MindSpore 2.10's CPU aot kernel (CustomAOTCpuKernelMod::Launch) catches a std::exception
// thrown by the kernel and raises RuntimeError "... Error message is <what()>"; a non-zero
// return only says "Return value ... is <n>". So a host error leaves as an exception whose
// message starts with the Python class PyNative would raise.
extern "C" int aop_lightning_indexer_aot(int nparam, void** params, int* ndims, int64_t** shapes, const char** dtypes,
                                         void* /*stream*/, void* /*extra*/) {
  using namespace aop::lightning_indexer;
  using namespace aop::lightning_indexer::ms_graph;
  try {
    if (nparam != kTensors + kScalars + kOutputs) {
      fail(AOP_VALUE_ERROR, "the aot kernel expects 12 inputs and 2 outputs, got " + std::to_string(nparam) +
                                " parameters");
    }
    int64_t s[kScalars];
    for (int i = 0; i < kScalars; ++i) {
      const int p = kTensors + i;
      s[i] = scalar(params[p], ndims[p], shapes[p], dtypes[p], kScalarNames[i]);
    }
    const int64_t present = s[4];
    aop_tensor views[kTensors];
    for (int i = 0; i < kTensors; ++i) {
      if (i >= 3 && !(present & (1 << (i - 3)))) continue;
      views[i] = aop::ms_adapter::aot_tensor(params[i], ndims[i], shapes[i],
                                             aop::ms_adapter::aot_dtype(dtypes[i], kOp, kTensorNames[i]),
                                             aop_device{AOP_DEVICE_CPU, 0}, kOp, kTensorNames[i]);
    }
    Args args = graph_args(views, s[0], s[1], s[2], s[3], present);
    const int out = kTensors + kScalars;
    args.sparse_indices = aop::ms_adapter::aot_tensor(params[out], ndims[out], shapes[out],
                                                      aop::ms_adapter::aot_dtype(dtypes[out], kOp, "sparse_indices"),
                                                      aop_device{AOP_DEVICE_CPU, 0}, kOp, "sparse_indices");
    if (s[5]) {
      args.sparse_values = aop::ms_adapter::aot_tensor(
          params[out + 1], ndims[out + 1], shapes[out + 1],
          aop::ms_adapter::aot_dtype(dtypes[out + 1], kOp, "sparse_values"), aop_device{AOP_DEVICE_CPU, 0}, kOp,
          "sparse_values");
    }
    run_cpu(args);
    return 0;
  } catch (const aop::Error& e) {
    throw std::runtime_error(std::string(e.status_name()) + ": " + e.what());
  }
}
