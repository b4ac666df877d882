// advance_step_flashattn, described once: its arguments (ascend_ops/op_params.hpp), from which
// common derives the front doors, and its launch (ascend_ops/kernel_launch.hpp), mapped to this
// op's host interface (host/adv_step_flash.h) and kernel (kernel/adv_step_flash_launch.h).
#pragma once
#include <array>
#include <cstdint>
#include <utility>
#include <vector>

#include "ascend_ops/kernel_launch.hpp"
#include "ascend_ops/op_params.hpp"
#include "host/adv_step_flash.h"
#include "kernel/adv_step_flash_launch.h"

namespace aop::adv_step_flash {

struct Op {
  using Args = adv_step_flash::Args;
  using Prepared = adv_step_flash::Args;
  using Tiling = AdvStepFlashTiling;
  static constexpr const char* kName = "advance_step_flashattn";
  static constexpr const char* kPackage = "ascend-op-adv-step-flash";
  // The docstring of every front door (the generated Python functions add their own notes).
  static constexpr const char* kDoc = R"doc(Advance a multi-step decode batch's metadata by one step, in place.

For ``i < num_queries``, with ``pos = seq_lens[i]``::

    input_tokens[i]    = sampled_token_ids[i]
    input_positions[i] = pos
    seq_lens[i]        = pos + 1
    slot_mapping[i]    = block_tables[i, pos // block_size] * block_size + pos % block_size

For the padding rows ``num_queries <= i < num_seqs``: ``input_tokens[i] = 0``,
``input_positions[i] = 0``, ``slot_mapping[i] = -1``, ``seq_lens[i]`` unchanged. Integer
arithmetic only: exact for every position that fits the dtypes.

Parameters
----------
num_seqs, num_queries, block_size : int
    ``0 < num_queries <= num_seqs``, ``block_size > 0``.
input_tokens : [num_seqs] int64 or int32, contiguous; written.
sampled_token_ids : [num_queries, 1] or [num_queries] int64 or int32, contiguous.
input_positions : [num_seqs] int64 or int32, contiguous; written.
seq_lens : [num_seqs] int32 or int64, contiguous; read and written.
slot_mapping : [num_seqs] int64 or int32, contiguous; written.
block_tables : [num_seqs, max_blocks_per_seq] int32 or int64; rows may be strided (the row
    stride may exceed the width), each row contiguous.

Returns
-------
None (the four outputs are written in place).

Raises
------
TypeError
    A dtype is not int32 / int64.
ValueError
    A count, rank, shape, layout or device is wrong; a seq_len or block id is negative; a
    token, position, new seq_len or slot does not fit its output's dtype (an int32
    slot_mapping overflow).
IndexError
    ``seq_lens[i] // block_size >= max_blocks_per_seq``.

On any error all four outputs are left exactly as they were.
)doc";

  // vLLM's advance_step_flashattn: the four [num_seqs] outputs are written in place.
  static const std::array<desc::Param<Args>, 9>& params() {
    using desc::Access;
    using desc::Kind;
    static const std::array<desc::Param<Args>, 9> p{{
        {"num_seqs", Kind::kSymInt, Access::kRead, false, false, nullptr, &desc::set_field<&Args::num_seqs>},
        {"num_queries", Kind::kSymInt, Access::kRead, false, false, nullptr, &desc::set_field<&Args::num_queries>},
        {"block_size", Kind::kInt, Access::kRead, false, false, nullptr, &desc::set_field<&Args::block_size>},
        {"input_tokens", Kind::kTensor, Access::kWrite, false, false, nullptr, &desc::set_field<&Args::input_tokens>},
        {"sampled_token_ids", Kind::kTensor, Access::kRead, false, false, nullptr,
         &desc::set_field<&Args::sampled_token_ids>},
        {"input_positions", Kind::kTensor, Access::kWrite, false, false, nullptr,
         &desc::set_field<&Args::input_positions>},
        {"seq_lens", Kind::kTensor, Access::kWrite, false, false, nullptr, &desc::set_field<&Args::seq_lens>},
        {"slot_mapping", Kind::kTensor, Access::kWrite, false, false, nullptr, &desc::set_field<&Args::slot_mapping>},
        {"block_tables", Kind::kTensor, Access::kRead, false, false, nullptr, &desc::set_field<&Args::block_tables>},
    }};
    return p;
  }
  static std::array<desc::Output<Args>, 0> outputs() { return {}; }  // writes in place, returns nothing
  static void check_inputs(const Args& a) { validate(a); }
  static void check_attributes(const Args& a) { validate_ints(a.num_seqs, a.num_queries, a.block_size); }
  static void run_cpu(const Args& a) { adv_step_flash::run_cpu(a); }
  static void run_npu(const Args& a, const NpuContext& ctx) { adv_step_flash::run_npu(a, ctx); }

  static constexpr const char* kKernel = "adv_step_flash_kernel";
  // vector-only, with the SyncAll of the check phase
  static constexpr launch::KernelType kKernelType = launch::KernelType::kMixAiv1_0;

  static Prepared prepare(const Args& args) {
    validate(args);
    return args;
  }
  static void check_data(const Prepared& a) { adv_step_flash::check_data(a); }
  static Tiling tiling(const Prepared& a, const aop_platform& platform) { return adv_step_flash::tiling(a, platform); }
  static bool nothing_to_launch(const Prepared&, const Tiling&) { return false; }  // num_seqs > 0
  // one check slot per core (common's check protocol), nothing else
  static size_t workspace_bytes(const Tiling& t) { return launch::check_slots_bytes(t.block_dim, kAsfCheckWords); }
  static aop::Error kernel_error(const int64_t record[kAsfCheckWords]) { return adv_step_flash::kernel_error(record); }

  static std::array<launch::GmTensor, 6> gm_tensors(const Prepared& a) {
    using launch::GmRole;
    return {launch::gm(a.input_tokens, "input_tokens", GmRole::kOutput),
            launch::gm(a.sampled_token_ids, "sampled_token_ids", GmRole::kInput),
            launch::gm(a.input_positions, "input_positions", GmRole::kOutput),
            launch::gm(a.seq_lens, "seq_lens", GmRole::kOutput),
            launch::gm(a.slot_mapping, "slot_mapping", GmRole::kOutput),
            launch::gm(a.block_tables, "block_tables", GmRole::kInput)};
  }
  // The tiling as `_core.kernel_tiling` shows it.
  static std::vector<std::pair<const char*, int64_t>> tiling_fields(const Tiling& t) {
    return {
            {"num_seqs", t.num_seqs},
            {"num_queries", t.num_queries},
            {"block_size", t.block_size},
            {"max_blocks", t.max_blocks},
            {"table_row_stride", t.table_row_stride},
            {"token_bytes", t.token_bytes},
            {"sampled_bytes", t.sampled_bytes},
            {"position_bytes", t.position_bytes},
            {"seq_len_bytes", t.seq_len_bytes},
            {"slot_bytes", t.slot_bytes},
            {"table_bytes", t.table_bytes},
            {"block_dim", t.block_dim},
            {"seqs_per_core", t.seqs_per_core},
            {"cores_with_extra", t.cores_with_extra},
            {"chunk_seqs", t.chunk_seqs}};
  }
  static auto npu_launch() { return &adv_step_flash_launch; }
#ifdef AOP_WITH_EMU
  static auto emu_kernel() { return &adv_step_flash_kernel; }
#endif
};

}  // namespace aop::adv_step_flash
