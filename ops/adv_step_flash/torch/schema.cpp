// advance_step_flashattn: the op's one PyTorch schema. Backends are impl blocks in their own
// files: cpu.cpp (CPU), meta.cpp (Meta: FakeTensor / torch.compile), inplace.cpp
// (ADInplaceOrView: version counters), npu.cpp (PrivateUse1, torch_npu).
//
// The four written tensors carry alias annotations (a!) .. (d!): without them torch.compile's
// functionalization would treat the op as pure and drop it.
#include <torch/library.h>

TORCH_LIBRARY_FRAGMENT(ascend_ops, m) {
  m.def(
      "advance_step_flashattn(int num_seqs, int num_queries, int block_size, Tensor(a!) input_tokens, "
      "Tensor sampled_token_ids, Tensor(b!) input_positions, Tensor(c!) seq_lens, Tensor(d!) slot_mapping, "
      "Tensor block_tables) -> ()",
      {at::Tag::pt2_compliant_tag});
}
