// Graph mode on Ascend: the KernelMod and OpFuncImpl of the primitive reshape_and_cache_op.yaml
// defines (CustomOpBuilder(backend="Ascend", op_def=...), MindSpore 2.10 KBK). The caches are
// rw_write inputs (side_effect_mem): the kernel writes them in place through their device
// addresses; the output is a dummy int32 [1]. Built only with AOP_MS_ASCEND (the mindspore wheel's
// Ascend plugin plus CANN); compile- and link-checked here, not run on NPU.
#include "include/kernel/ascend/custom/kernel_mod_impl/custom_kernel_factory.h"
#include "include/kernel/ascend/custom/kernel_mod_impl/custom_register.h"

#include "ascend_ops/mindspore_dummy_output.hpp"
#include "ascend_ops/mindspore_graph_npu.hpp"
#include "host/reshape_and_cache.h"

namespace aop::reshape_and_cache::ms_graph_npu {

// Inputs in the yaml's order.
enum Input { kKey, kValue, kKeyCache, kValueCache, kSlotMapping, kCacheMode, kHeadNum };

struct Op {
  static constexpr const char* kName = "reshape_and_cache";

  static Args args(const std::vector<mindspore::kernel::KernelTensor*>& in,
                   const std::vector<mindspore::kernel::KernelTensor*>& /*outputs: the dummy*/, int device) {
    auto view = [&](Input i, const char* name) { return ms_adapter::kernel_tensor_view(in.at(i), device, kName, name); };
    Args a{view(kKey, "key"), view(kValue, "value"), view(kKeyCache, "key_cache"), view(kValueCache, "value_cache"),
           view(kSlotMapping, "slot_mapping")};
    const int64_t cache_mode = ms_adapter::kernel_int(in.at(kCacheMode));
    a.cache_mode = cache_mode == static_cast<int32_t>(cache_mode) ? static_cast<int32_t>(cache_mode) : -1;
    a.head_num = ms_adapter::kernel_int(in.at(kHeadNum));
    return a;
  }
  static size_t workspace_bytes(const Args& a) { return npu_workspace_bytes(a, current_platform()); }
  static void run(const Args& a, const NpuContext& ctx) { run_npu(a, ctx); }
};

using FuncImpl = ms_adapter::DummyOutputFuncImpl;

using Kernel = ms_adapter::NpuKernelMod<Op>;

}  // namespace aop::reshape_and_cache::ms_graph_npu

using ReshapeAndCacheNpuFuncImpl = aop::reshape_and_cache::ms_graph_npu::FuncImpl;
using ReshapeAndCacheNpuKernel = aop::reshape_and_cache::ms_graph_npu::Kernel;
MS_CUSTOM_OPS_REGISTER(reshape_and_cache_npu, ReshapeAndCacheNpuFuncImpl, ReshapeAndCacheNpuKernel);
