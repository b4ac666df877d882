"""indexer_k_quant_and_cache under torch.compile the way engines call it: the compile matrix of
ascend_ops.devkit.compile_matrix (eager / aot_eager / inductor x static / dynamic / mark_dynamic x
the cache as a separate tensor or a view of one bigger allocation by index, unbind or slice,
inside or outside the compiled region), each step exactly equal to eager. The written tensor the
matrix stacks is the fused uint8 cache, the split int8 k_cache, or the split scale cache (the other
split cache then a plain argument, written too). Also: the compiled graph copies no cache.
"""
from __future__ import annotations

import importlib.util
import os

import pytest

if importlib.util.find_spec("torch") is None:
    pytest.skip("torch is not installed: the PyTorch adapter cannot be tested", allow_module_level=True)

os.environ.setdefault("TORCH_DEVICE_BACKEND_AUTOLOAD", "0")
import ascend_ops.indexer_k_quant_and_cache  # noqa: E402,F401  (registers the torch op)
import torch  # noqa: E402

from ascend_ops.devkit import compile_matrix as cm  # noqa: E402

D, QBS, NB, BS = 128, 64, 6, 4
G = D // QBS
SLICED_SLOTS = (NB - 1) * BS  # slots valid in every layout (slice layouts drop block 0)
OP = torch.ops.ascend_ops.indexer_k_quant_and_cache


def call_fused(caches, k, slots):
    OP(k, caches[0], slots, quant_block_size=QBS, scale_fmt="ue8m0")


def call_split_codes(caches, k, slots, scales):
    OP(k, caches[0], slots, k_scale_cache=scales, quant_block_size=QBS)


def call_split_scales(caches, k, slots, codes):
    OP(k, codes, slots, k_scale_cache=caches[0], quant_block_size=QBS)


def steps(form, k_dtype=torch.bfloat16, slot_dtype=torch.int64):
    gen = torch.Generator().manual_seed(0)
    out = []
    for tokens in (3, 5):  # a second token count: dynamic graphs are reused, static recompile
        k = (torch.randn(tokens, D, generator=gen) * 4).to(k_dtype)
        slots = torch.randperm(SLICED_SLOTS, generator=gen)[:tokens].to(slot_dtype)
        slots[-1] = -1  # a padding token
        if form == "fused":
            fused = torch.randint(0, 256, (1, NB, BS, D + 4 * G), generator=gen, dtype=torch.uint8)
            out.append((fused, (k, slots)))
        elif form == "codes":
            fused = torch.randint(-128, 128, (1, NB, BS, 1, D), generator=gen, dtype=torch.int8)
            out.append((fused, (k, slots, torch.zeros(NB - 1, BS, 1, G, dtype=torch.float16))))
        else:
            fused = torch.randn(1, NB, BS, G, generator=gen).to(torch.float32)
            out.append((fused, (k, slots, torch.zeros(NB - 1, BS, D, dtype=torch.int8))))
    return out


FORMS = {"fused": call_fused, "codes": call_split_codes, "scales": call_split_scales}
# The fused cache over the whole matrix; the split forms' slice layouts under inductor here (their
# plain argument has NB - 1 blocks), their other layouts in test_split_forms_full_size.
CASES = [("fused", b, m, lay) for b, m, lay in cm.case_ids()] + \
        [(form, b, m, lay) for form in ("codes", "scales") for b, m, lay in cm.case_ids()
         if b == "inductor" and lay.how == "slice"]


@pytest.mark.parametrize("form,backend,mode,layout", CASES, ids=[f"{f}-{b}-{m}-{lay.name}" for f, b, m, lay in CASES])
def test_compiled_write_equals_eager(form, backend, mode, layout):
    cm.run_case(FORMS[form], steps(form), backend, mode, layout)


@pytest.mark.parametrize("form", ["codes", "scales"])
@pytest.mark.parametrize("backend,mode", [("eager", "dynamic"), ("aot_eager", "dynamic"), ("inductor", "static"),
                                          ("inductor", "dynamic"), ("inductor", "mark_dynamic")])
def test_split_forms_full_size(backend, mode, form):
    """The split forms with both caches of NB blocks: index / unbind / separate layouts."""
    def full(step_list):
        fixed = []
        for fused, args in step_list:
            other = args[2]
            grown = torch.cat([other[:1], other]) if other.shape[0] == NB - 1 else other
            fixed.append((fused, (args[0], args[1], grown)))
        return fixed
    for layout in cm.LAYOUTS:
        if layout.how != "slice":
            cm.run_case(FORMS[form], full(steps(form)), backend, mode, layout)


@pytest.mark.parametrize("layout", [lay for lay in cm.LAYOUTS if lay.inside], ids=lambda lay: lay.name)
def test_compiled_graph_copies_no_cache(layout):
    fused, (k, slots) = steps("fused")[1]

    def fn(pool, k, slots):
        call_fused(cm.views(pool, layout.how), k, slots)

    cm.assert_no_copies(fn, fused, k, slots, op="indexer_k_quant_and_cache")
