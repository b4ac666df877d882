// The benchmark baseline of advance_step_flashattn (bench/run.py): an op with the same schema
// shape (three ints, six tensors, four of them written) whose CPU kernel does nothing. Timing
// it measures torch's dispatch of such a call; the real op's time minus this is the op's own
// host work. Not part of the public API (leading underscore); registered with the op because
// a benchmark-only extension would need its own build.
#include <torch/library.h>

namespace {

void adv_step_flash_noop(int64_t, int64_t, int64_t, at::Tensor&, const at::Tensor&, at::Tensor&, at::Tensor&,
                         at::Tensor&, const at::Tensor&) {}

}  // namespace

TORCH_LIBRARY_FRAGMENT(ascend_ops, m) {
  m.def(
      "_adv_step_flash_noop(int num_seqs, int num_queries, int block_size, Tensor(a!) input_tokens, "
      "Tensor sampled_token_ids, Tensor(b!) input_positions, Tensor(c!) seq_lens, Tensor(d!) slot_mapping, "
      "Tensor block_tables) -> ()");
}

TORCH_LIBRARY_IMPL(ascend_ops, CPU, m) { m.impl("_adv_step_flash_noop", &adv_step_flash_noop); }
