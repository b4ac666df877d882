// advance_step_flashattn on Meta tensors: the fake of the op for FakeTensor and torch.compile.
//
// The op returns nothing, so the only work is to refuse what can be refused without data. The
// ints are checked whenever they are concrete (num_seqs and num_queries are SymInts, symbolic
// under torch.compile(dynamic=True), and are then left to the real kernel); when every size
// and stride is static the host's validate() runs too (no data is read); when one is symbolic
// (torch.compile(dynamic=True)) the tensors are not checked here — reading a symbolic size
// would specialise the graph — and the real kernel validates them at run time. Data checks
// (block index in the table, negative ids, overflow) need values: never here.
#include <torch/library.h>

#include "host/adv_step_flash.h"
#include "tensor_view.h"

namespace {

void advance_step_flashattn_meta(c10::SymInt num_seqs, c10::SymInt num_queries, int64_t block_size,
                                 at::Tensor& input_tokens,             // [num_seqs]
                                 const at::Tensor& sampled_token_ids,  // [num_queries(, 1)]
                                 at::Tensor& input_positions,          // [num_seqs]
                                 at::Tensor& seq_lens,                 // [num_seqs]
                                 at::Tensor& slot_mapping,             // [num_seqs]
                                 const at::Tensor& block_tables) {     // [num_seqs, max_blocks_per_seq]
  const std::optional<int64_t> seqs = num_seqs.maybe_as_int();
  const std::optional<int64_t> queries = num_queries.maybe_as_int();
  if (!seqs || !queries) return;  // symbolic: reading them would specialise the graph
  const std::optional<aop::adv_step_flash::Args> args =
      aop::torch_adapter::make_static_args(*seqs, *queries, block_size, input_tokens, sampled_token_ids,
                                           input_positions, seq_lens, slot_mapping, block_tables);
  aop::torch_adapter::call_host([&] {
    if (args) {
      aop::adv_step_flash::validate(*args);
    } else {
      aop::adv_step_flash::validate_ints(*seqs, *queries, block_size);
    }
  });
}

}  // namespace

TORCH_LIBRARY_IMPL(ascend_ops, Meta, m) { m.impl("advance_step_flashattn", &advance_step_flashattn_meta); }
