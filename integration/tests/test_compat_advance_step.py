"""vLLM's ``advance_step_flashattn`` through ascend_ops.compat.vllm: vLLM's argument order and
dtypes (csrc/prepare_inputs/advance_step.cu checks int64 input_tokens / sampled_token_ids
[num_queries, 1] / input_positions / slot_mapping and int32 seq_lens / block_tables), its
CUDA-graph padding (num_queries < num_seqs) and multi-step decode sizes, against a golden
written from vLLM's documented semantics."""
from __future__ import annotations

import importlib.util
import os

import numpy as np
import pytest

os.environ.setdefault("TORCH_DEVICE_BACKEND_AUTOLOAD", "0")
if importlib.util.find_spec("torch") is None:
    pytest.skip("torch is not installed", allow_module_level=True)

import torch  # noqa: E402

from ascend_ops.compat import vllm  # noqa: E402

OUTPUTS = ("input_tokens", "input_positions", "seq_lens", "slot_mapping")


def golden(num_seqs, num_queries, block_size, t):
    """vLLM's step: rows < num_queries take the sampled token, position = old seq_len, seq_len
    + 1, slot = block_tables[i][pos // block_size] * block_size + pos % block_size; padding rows
    get token 0, position 0, slot -1 (seq_len kept)."""
    out = {k: t[k].clone() for k in OUTPUTS}
    for i in range(num_seqs):
        if i < num_queries:
            pos = int(t["seq_lens"][i])
            out["input_tokens"][i] = t["sampled_token_ids"][i, 0]
            out["input_positions"][i] = pos
            out["seq_lens"][i] = pos + 1
            out["slot_mapping"][i] = int(t["block_tables"][i, pos // block_size]) * block_size + pos % block_size
        else:
            out["input_tokens"][i], out["input_positions"][i], out["slot_mapping"][i] = 0, 0, -1
    return out


def inputs(num_seqs, num_queries, block_size, max_blocks, seed):
    rng = np.random.default_rng(seed)
    lens = rng.integers(1, max_blocks * block_size, num_seqs)  # room for the next token in the table
    return dict(input_tokens=torch.full((num_seqs,), 7, dtype=torch.int64),
                sampled_token_ids=torch.from_numpy(rng.integers(0, 152064, (num_queries, 1))).to(torch.int64),
                input_positions=torch.full((num_seqs,), 7, dtype=torch.int64),
                seq_lens=torch.from_numpy(lens).to(torch.int32),
                slot_mapping=torch.full((num_seqs,), 7, dtype=torch.int64),
                block_tables=torch.from_numpy(rng.permutation(num_seqs * max_blocks).reshape(num_seqs, max_blocks))
                .to(torch.int32))


# (num_seqs, num_queries): single decode, CUDA-graph padded batches (vLLM pads a batch to the
# next captured size), a full batch of 256
SIZES = [(1, 1), (8, 5), (32, 32), (256, 200)]


@pytest.mark.parametrize("block_size", [16, 32, 128])
@pytest.mark.parametrize("num_seqs,num_queries", SIZES)
def test_vllm_argument_order_and_dtypes(num_seqs, num_queries, block_size):
    t = inputs(num_seqs, num_queries, block_size, max_blocks=8, seed=num_seqs + block_size)
    want = golden(num_seqs, num_queries, block_size, t)
    assert vllm.advance_step_flashattn(num_seqs, num_queries, block_size, t["input_tokens"], t["sampled_token_ids"],
                                       t["input_positions"], t["seq_lens"], t["slot_mapping"],
                                       t["block_tables"]) is None
    for name in OUTPUTS:
        assert torch.equal(t[name], want[name]), name


def test_vllm_keywords_and_several_steps():
    """vLLM's multi-step runner calls it once per step with keywords; three steps in a row."""
    num_seqs, num_queries, block_size = 8, 6, 16
    t = inputs(num_seqs, num_queries, block_size, max_blocks=4, seed=1)
    t["seq_lens"][:] = torch.tensor([15, 16, 17, 31, 1, 40, 3, 3], dtype=torch.int32)  # block boundaries
    for step in range(3):
        want = golden(num_seqs, num_queries, block_size, t)
        vllm.advance_step_flashattn(num_seqs=num_seqs, num_queries=num_queries, block_size=block_size, **t)
        for name in OUTPUTS:
            assert torch.equal(t[name], want[name]), (step, name)
        t["sampled_token_ids"] = t["sampled_token_ids"] + 1


def test_compiles_without_graph_breaks():
    from torch._dynamo.utils import counters

    num_seqs, num_queries, block_size = 8, 5, 16
    t = inputs(num_seqs, num_queries, block_size, max_blocks=4, seed=2)
    want = golden(num_seqs, num_queries, block_size, t)
    torch._dynamo.reset()
    counters.clear()
    torch.compile(vllm.advance_step_flashattn, fullgraph=True)(num_seqs, num_queries, block_size, *t.values())
    assert not counters["graph_break"]
    for name in OUTPUTS:
        assert torch.equal(t[name], want[name]), name


def test_a_bad_call_leaves_the_outputs_untouched():
    """A block index beyond the table: IndexError naming the op, nothing written."""
    t = inputs(4, 4, 16, max_blocks=2, seed=3)
    t["seq_lens"][2] = 32  # block 2 of a 2-block table
    before = {k: t[k].clone() for k in OUTPUTS}
    with pytest.raises(IndexError, match=r"^advance_step_flashattn: block index 2"):
        vllm.advance_step_flashattn(4, 4, 16, *t.values())
    for name in OUTPUTS:
        assert torch.equal(t[name], before[name]), name
