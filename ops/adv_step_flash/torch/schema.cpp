// advance_step_flashattn: the op's one PyTorch schema. Backends are impl blocks in their own
// files: cpu.cpp (CPU), meta.cpp (Meta: FakeTensor / torch.compile), inplace.cpp
// (ADInplaceOrView: version counters), npu.cpp (PrivateUse1, torch_npu).
//
// The four written tensors carry alias annotations (a!) .. (d!): without them torch.compile's
// functionalization would treat the op as pure and drop it. num_seqs and num_queries are
// SymInt: they follow the batch, so torch.compile(dynamic=True) / mark_dynamic keep them
// symbolic (with `int` every new batch size would specialise and recompile). Python callers pass
// plain ints as before.
#include <torch/library.h>

TORCH_LIBRARY_FRAGMENT(ascend_ops, m) {
  m.def(
      "advance_step_flashattn(SymInt num_seqs, SymInt num_queries, int block_size, Tensor(a!) input_tokens, "
      "Tensor sampled_token_ids, Tensor(b!) input_positions, Tensor(c!) seq_lens, Tensor(d!) slot_mapping, "
      "Tensor block_tables) -> ()",
      {at::Tag::pt2_compliant_tag});
}
