"""reshape_and_cache under torch.compile the way engines call it: the compile matrix of
ascend_ops.devkit.compile_matrix (backends x shape modes x cache layouts: separate tensors,
views of one [2, num_blocks, block_size, H, D] tensor by index / unbind / slice, taken inside or
outside the compiled region), each step exactly equal to eager. Also: the compiled graph holds
no copy of the cache (the fix for torch 2.13's lost writes must not cost a cache copy per call).
"""
from __future__ import annotations

import importlib.util
import os

import pytest

if importlib.util.find_spec("torch") is None:
    pytest.skip("torch is not installed: the PyTorch adapter cannot be tested", allow_module_level=True)

os.environ.setdefault("TORCH_DEVICE_BACKEND_AUTOLOAD", "0")
import ascend_ops.reshape_and_cache  # noqa: E402,F401  (registers the torch op: torch is imported below)
import torch  # noqa: E402

from ascend_ops.devkit import compile_matrix as cm  # noqa: E402

H, D, NB, BS = 2, 16, 6, 4
SLICED_SLOTS = (NB - 1) * BS  # slots valid in every layout (slice layouts drop block 0)


def call(caches, key, value, slots):
    torch.ops.ascend_ops.reshape_and_cache(key, value, caches[0], caches[1], slots)


def steps(dtype=torch.float32, slot_dtype=torch.int64):
    gen = torch.Generator().manual_seed(0)
    out = []
    for tokens in (3, 5):  # a second token count: dynamic graphs are reused, static recompile
        kv = torch.randn(2, NB, BS, H, D, generator=gen).to(dtype)
        key = torch.randn(tokens, H, D, generator=gen).to(dtype)
        value = torch.randn(tokens, H, D, generator=gen).to(dtype)
        slots = torch.randperm(SLICED_SLOTS, generator=gen)[:tokens].to(slot_dtype)
        slots[-1] = -1  # a padding token
        out.append((kv, (key, value, slots)))
    return out


CASES = cm.case_ids()


@pytest.mark.parametrize("backend,mode,layout", CASES, ids=[f"{b}-{m}-{lay.name}" for b, m, lay in CASES])
def test_compiled_write_equals_eager(backend, mode, layout):
    cm.run_case(call, steps(), backend, mode, layout)


def call_key_only(caches, key, value, slots):
    """A key-only cache (value and value_cache None): only caches[0] is written."""
    torch.ops.ascend_ops.reshape_and_cache(key, None, caches[0], None, slots)


def call_nz(caches, key, value, slots):
    """NZ caches: each [NB, BS, H, D] view read as [NB, H*D/F, BS, F] (F = 16 for float16)."""
    nz = [c.view(c.shape[0], H * D // 16, BS, 16) for c in caches]
    torch.ops.ascend_ops.reshape_and_cache(key, value, nz[0], nz[1], slots, cache_mode=1)


@pytest.mark.parametrize("mode", ["static", "dynamic"])
@pytest.mark.parametrize("layout", cm.LAYOUTS, ids=lambda lay: lay.name)
def test_compiled_key_only_write_equals_eager(mode, layout):
    cm.run_case(call_key_only, steps(), "inductor", mode, layout)


@pytest.mark.parametrize("layout", [cm.LAYOUTS[0], cm.LAYOUTS[2], cm.LAYOUTS[6]], ids=lambda lay: lay.name)
def test_compiled_nz_write_equals_eager(layout):
    cm.run_case(call_nz, steps(torch.float16), "inductor", "dynamic", layout)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.int8])
def test_dynamic_inductor_views_every_dtype(dtype):
    cm.run_case(call, steps(dtype, torch.int32), "inductor", "dynamic", cm.LAYOUTS[2])


@pytest.mark.parametrize("layout", [lay for lay in cm.LAYOUTS if lay.inside], ids=lambda lay: lay.name)
def test_compiled_graph_copies_no_cache(layout):
    kv, args = steps()[0]
    cm.assert_no_copies(lambda kv, *a: call(cm.views(kv, layout.how), *a), kv, *args,
                        op="reshape_and_cache")


# --- kv_cache_dtype "int8" / "fp8": the quantising write under the same matrix ---------------
K_SCALE = torch.tensor([0.02, 0.03], dtype=torch.float32)  # per head
V_SCALE = torch.full((H, D), 0.025, dtype=torch.bfloat16)  # per channel, bfloat16
V_OFFSET = torch.tensor([3.0], dtype=torch.float16)        # per tensor


def call_int8(caches, key, value, slots):
    torch.ops.ascend_ops.reshape_and_cache(key, value, caches[0], caches[1], slots, kv_cache_dtype="int8",
                                           k_scale=K_SCALE, v_scale=V_SCALE, v_offset=V_OFFSET)


def call_fp8(caches, key, value, slots):
    torch.ops.ascend_ops.reshape_and_cache(key, value, caches[0], caches[1], slots, kv_cache_dtype="fp8_e5m2",
                                           k_scale=K_SCALE, v_scale=V_SCALE)


def quant_steps(dtype, cache_dtype):
    """steps() with 8-bit caches of random bytes (what they hold before the write)."""
    out = []
    for kv, args in steps(dtype):
        out.append((torch.randint(-128 if cache_dtype == torch.int8 else 0, 128 if cache_dtype == torch.int8 else 256,
                                  kv.shape, generator=torch.Generator().manual_seed(1), dtype=cache_dtype), args))
    return out


@pytest.mark.parametrize("backend,mode,layout", CASES, ids=[f"{b}-{m}-{lay.name}" for b, m, lay in CASES])
def test_compiled_int8_write_equals_eager(backend, mode, layout):
    cm.run_case(call_int8, quant_steps(torch.bfloat16, torch.int8), backend, mode, layout)


@pytest.mark.parametrize("layout", [cm.LAYOUTS[0], cm.LAYOUTS[2], cm.LAYOUTS[6]], ids=lambda lay: lay.name)
def test_compiled_fp8_write_equals_eager(layout):
    cm.run_case(call_fp8, quant_steps(torch.float16, torch.uint8), "inductor", "dynamic", layout)


# --- caches as users allocate them: strided halves, vLLM's HND permutation, head-major --------
def strided_steps(dtype=torch.float32):
    """steps() whose fused tensor is [2, NB, BS, H, D] viewed from a [NB, 2, BS, H, D] allocation:
    every cache a strided view (block stride 2 * BS * H * D) in every layout but "separate"."""
    return [(kv.reshape(NB, 2, BS, H, D).clone().transpose(0, 1), args) for kv, args in steps(dtype)]


def call_head_major(caches, key, value, slots):
    """Head-major caches, cache_mode 2: each [nb, BS, H, D] block range read as [nb, H, BS, D]."""
    hm = [c.view(c.shape[0], H, BS, D) for c in caches]
    torch.ops.ascend_ops.reshape_and_cache(key, value, hm[0], hm[1], slots, cache_mode=2)


def call_hnd_permuted(caches, key, value, slots):
    """vLLM's HND allocation permuted to the logical [nb, BS, H, D] shape (cache_mode 0)."""
    hnd = [c.view(c.shape[0], H, BS, D).transpose(1, 2) for c in caches]
    torch.ops.ascend_ops.reshape_and_cache(key, value, hnd[0], hnd[1], slots)


VIEW_LAYOUTS = [cm.LAYOUTS[0], cm.LAYOUTS[2], cm.LAYOUTS[3], cm.LAYOUTS[4], cm.LAYOUTS[6]]
VIEW_CALLS = {"nd": call, "head_major": call_head_major, "hnd_permuted": call_hnd_permuted}


@pytest.mark.parametrize("layout", VIEW_LAYOUTS, ids=lambda lay: lay.name)
@pytest.mark.parametrize("form", list(VIEW_CALLS))
def test_compiled_strided_and_head_major_caches_equal_eager(form, layout):
    cm.run_case(VIEW_CALLS[form], strided_steps(), "inductor", "dynamic", layout)


@pytest.mark.parametrize("layout", [cm.LAYOUTS[2], cm.LAYOUTS[6]], ids=lambda lay: lay.name)
def test_compiled_int8_into_strided_caches_equals_eager(layout):
    steps_ = [(kv.reshape(NB, 2, BS, H, D).clone().transpose(0, 1), args)
              for kv, args in quant_steps(torch.bfloat16, torch.int8)]
    cm.run_case(call_int8, steps_, "inductor", "dynamic", layout)
