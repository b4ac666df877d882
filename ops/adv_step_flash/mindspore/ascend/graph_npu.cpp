// Graph mode on Ascend: the KernelMod and OpFuncImpl of the primitive adv_step_flash_op.yaml
// defines (CustomOpBuilder(backend="Ascend", op_def=...), MindSpore 2.10 KBK). input_tokens,
// input_positions, seq_lens and slot_mapping are rw_write inputs (side_effect_mem): the kernel
// writes them in place through their device addresses; the output is a dummy int32 [1]. Built
// only with AOP_MS_ASCEND (the mindspore wheel's Ascend plugin plus CANN); compile- and
// link-checked here, not run on NPU.
#include "include/kernel/ascend/custom/kernel_mod_impl/custom_kernel_factory.h"
#include "include/kernel/ascend/custom/kernel_mod_impl/custom_register.h"

#include "ascend_ops/mindspore_dummy_output.hpp"
#include "ascend_ops/mindspore_graph_npu.hpp"
#include "host/adv_step_flash.h"

namespace aop::adv_step_flash::ms_graph_npu {

// Inputs in the yaml's order.
enum Input { kNumSeqs, kNumQueries, kBlockSize, kInputTokens, kSampled, kPositions, kSeqLens, kSlots, kTables };

struct Op {
  static constexpr const char* kName = "advance_step_flashattn";

  static Args args(const std::vector<mindspore::kernel::KernelTensor*>& in,
                   const std::vector<mindspore::kernel::KernelTensor*>& /*outputs: the dummy*/, int device) {
    auto view = [&](Input i, const char* name) { return ms_adapter::kernel_tensor_view(in.at(i), device, kName, name); };
    return Args{ms_adapter::kernel_int(in.at(kNumSeqs)),
                ms_adapter::kernel_int(in.at(kNumQueries)),
                ms_adapter::kernel_int(in.at(kBlockSize)),
                view(kInputTokens, "input_tokens"),
                view(kSampled, "sampled_token_ids"),
                view(kPositions, "input_positions"),
                view(kSeqLens, "seq_lens"),
                view(kSlots, "slot_mapping"),
                view(kTables, "block_tables")};
  }
  static size_t workspace_bytes(const Args& a) { return npu_workspace_bytes(a, current_platform()); }
  static void run(const Args& a, const NpuContext& ctx) { run_npu(a, ctx); }
};

using FuncImpl = ms_adapter::DummyOutputFuncImpl;

using Kernel = ms_adapter::NpuKernelMod<Op>;

}  // namespace aop::adv_step_flash::ms_graph_npu

using AdvStepFlashNpuFuncImpl = aop::adv_step_flash::ms_graph_npu::FuncImpl;
using AdvStepFlashNpuKernel = aop::adv_step_flash::ms_graph_npu::Kernel;
MS_CUSTOM_OPS_REGISTER(adv_step_flash_npu, AdvStepFlashNpuFuncImpl, AdvStepFlashNpuKernel);
