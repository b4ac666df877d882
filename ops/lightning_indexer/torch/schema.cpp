// lightning_indexer: the op's one PyTorch schema. Backends are impl blocks in their own files:
// cpu.cpp (CPU), meta.cpp (Meta: FakeTensor / torch.compile with SymInt sizes).
//
// The op allocates its outputs and mutates nothing: no alias annotations. sparse_values is
// None unless return_value is true.
#include <torch/library.h>

TORCH_LIBRARY_FRAGMENT(ascend_ops, m) {
  m.def(
      "lightning_indexer(Tensor query, Tensor key, Tensor weights, *, Tensor? actual_seq_lengths_query=None, "
      "Tensor? actual_seq_lengths_key=None, Tensor? block_table=None, str layout_query=\"BSND\", "
      "str layout_key=\"PA_BSND\", int sparse_count=2048, int sparse_mode=3, bool return_value=False) "
      "-> (Tensor sparse_indices, Tensor? sparse_values)",
      {at::Tag::pt2_compliant_tag});
}
