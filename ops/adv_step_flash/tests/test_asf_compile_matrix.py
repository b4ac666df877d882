"""advance_step_flashattn under torch.compile the way engines call it: the compile matrix of
ascend_ops.devkit.compile_matrix (backends x shape modes x output layouts: separate tensors,
rows of one [4, num_seqs] metadata buffer by index / unbind / slice, taken inside or outside the
compiled region), each step exactly equal to eager; and no copy of an output in the compiled
graph.
"""
from __future__ import annotations

import importlib.util
import os

import pytest

if importlib.util.find_spec("torch") is None:
    pytest.skip("torch is not installed: the PyTorch adapter cannot be tested", allow_module_level=True)

os.environ.setdefault("TORCH_DEVICE_BACKEND_AUTOLOAD", "0")
import ascend_ops.adv_step_flash  # noqa: E402,F401  (registers the torch op: torch is imported below)
import torch  # noqa: E402

from ascend_ops.devkit import compile_matrix as cm  # noqa: E402

BLOCK_SIZE, WIDTH = 4, 5  # block table width: positions < 20


def call(outs, sampled, block_tables, num_queries):
    """outs: input_tokens, input_positions, seq_lens, slot_mapping (rows of one buffer or not)."""
    tokens, positions, seq_lens, slots = outs
    num_seqs = tokens.shape[0]
    torch.ops.ascend_ops.advance_step_flashattn(
        num_seqs, num_queries, BLOCK_SIZE, tokens, sampled, positions, seq_lens, slots,
        block_tables[:num_seqs])


def steps():
    gen = torch.Generator().manual_seed(0)
    out = []
    for num_seqs, num_queries in ((6, 4), (9, 7)):
        meta = torch.randint(-50, 50, (4, num_seqs), generator=gen, dtype=torch.int64)
        meta[2] = torch.randint(0, BLOCK_SIZE * WIDTH - 1, (num_seqs,), generator=gen)  # seq_lens
        sampled = torch.randint(0, 32000, (num_queries, 1), generator=gen, dtype=torch.int64)
        tables = torch.randperm(64, generator=gen)[: num_seqs * WIDTH].reshape(num_seqs, WIDTH)
        out.append((meta, (sampled, tables.to(torch.int64), num_queries)))
    return out


CASES = cm.case_ids()


@pytest.mark.parametrize("backend,mode,layout", CASES, ids=[f"{b}-{m}-{lay.name}" for b, m, lay in CASES])
def test_compiled_step_equals_eager(backend, mode, layout):
    cm.run_case(call, steps(), backend, mode, layout)


@pytest.mark.parametrize("layout", [lay for lay in cm.LAYOUTS if lay.inside], ids=lambda lay: lay.name)
def test_compiled_graph_copies_no_output(layout):
    meta, args = steps()[0]
    cm.assert_no_copies(lambda m, *a: call(cm.views(m, layout.how), *a), meta, *args,
                        op="advance_step_flashattn")
