// reshape_and_cache: the op's one PyTorch schema. Backends are impl blocks in their own files:
// cpu.cpp (CPU), meta.cpp (Meta: FakeTensor / torch.compile), npu.cpp (PrivateUse1, torch_npu).
//
// key_cache and value_cache carry alias annotations (a!) / (b!): they are written in place.
// Without them torch.compile's functionalization would treat the op as pure and drop it.
// value / value_cache are optional (None: a key-only cache); cache_mode 0 = ND, 1 = NZ;
// head_num splits a [T, H*D] key / value. The defaults keep every five-tensor call working.
#include <torch/library.h>

TORCH_LIBRARY_FRAGMENT(ascend_ops, m) {
  m.def(
      "reshape_and_cache(Tensor key, Tensor? value, Tensor(a!) key_cache, Tensor(b!)? value_cache, "
      "Tensor slot_mapping, int cache_mode=0, int? head_num=None) -> ()",
      {at::Tag::pt2_compliant_tag});
}
