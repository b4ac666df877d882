"""A PA_BSND key as caches are allocated: each block [block_size, N2, D] packed, the blocks
key.stride(0) >= block_size * N2 * D apart -- the K half of vLLM's [num_blocks, 2, block_size,
H, D] cache (kv[:, 0]) and a slice of a larger pool. cpu and emu read it where it lies: the same
indices and scores as from a contiguous copy (exactly), the reference rule, and cpu == emu
exactly on integer-valued inputs (every float32 sum exact, ties to the smaller index);
torch eager / Meta / torch.compile(dynamic=True) take the view; overlapping blocks, an unpacked
block and a strided non-paged key are refused."""
from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from ascend_ops.common.loader import load_native
from ascend_ops.devkit.testing import to_bf16_bits
from ascend_ops.lightning_indexer import lightning_indexer

from li_cases import Q_LAYOUTS, Shape, assert_topk, make, reference_rows

CPU_SHAPE = Shape((3, 2), (40, 9), 4, 16, 8, block_size=4, name="cpu-small")
EMU_SHAPE = Shape((2, 1), (70, 33), 8, 128, 16, block_size=16, name="emu-small")
DT = {"float16": None, "bfloat16": "bfloat16", "float32": None}
HAS_EMU = load_native("ascend_ops.lightning_indexer", "core").HAS_EMU


def as_kv_half(key):
    """key placed as the K half of a [num_blocks, 2, block_size, N2, D] cache (V half garbage)."""
    kv = np.full((key.shape[0], 2) + key.shape[1:], 7, dtype=key.dtype)
    kv[:, 0] = key
    return kv[:, 0]


def as_pool_slice(key, extra=3):
    """key as [:, :block_size] of a pool whose blocks hold block_size + extra rows."""
    pool = np.full((key.shape[0], key.shape[1] + extra) + key.shape[2:], 5, dtype=key.dtype)
    pool[:, :key.shape[1]] = key
    return pool[:, :key.shape[1]]


VIEWS = {"kv-half": as_kv_half, "pool-slice": as_pool_slice}


def integer_valued(args, dtype, rng):
    """query / key / weights with small integer values: every product and float32 sum exact."""
    for name, hi in (("query", 3), ("key", 3), ("weights", 2)):
        x = rng.integers(-hi, hi + 1, args[name].shape).astype(np.float32)
        args[name] = to_bf16_bits(x) if dtype == "bfloat16" else x.astype(dtype)
    return args


@pytest.mark.parametrize("view", list(VIEWS))
@pytest.mark.parametrize("layout_query", Q_LAYOUTS)
@pytest.mark.parametrize("dtype", list(DT))
def test_cpu_reads_the_view_where_it_lies(dtype, layout_query, view):
    args = make(CPU_SHAPE, layout_query, "PA_BSND", dtype, seed=21)
    strided = dict(args, key=VIEWS[view](args["key"]))
    assert not strided["key"].flags.c_contiguous and strided["key"].strides[0] > args["key"].strides[0]
    idx, val = lightning_indexer(**strided, dtype=DT[dtype], sparse_mode=3, return_value=True)
    want = lightning_indexer(**args, dtype=DT[dtype], sparse_mode=3, return_value=True)
    np.testing.assert_array_equal(idx, want[0])
    np.testing.assert_array_equal(val, want[1])
    assert_topk(idx, val, reference_rows(args, dtype, 3), CPU_SHAPE.k)


@pytest.mark.skipif(not HAS_EMU, reason="the emulator build is off (AOP_WITH_EMU)")
@pytest.mark.parametrize("view", list(VIEWS))
@pytest.mark.parametrize("layout_query,dtype", [("BSND", "bfloat16"), ("TND", "float16")])
def test_emu_reads_the_view_where_it_lies(layout_query, dtype, view):
    """The AscendC kernel addresses block i at i * key_block_stride (the tiling): the same
    result as from the contiguous copy, and cpu == emu exactly on integer-valued inputs."""
    args = integer_valued(make(EMU_SHAPE, layout_query, "PA_BSND", dtype, seed=2), dtype, np.random.default_rng(2))
    strided = dict(args, key=VIEWS[view](args["key"]))
    emu = lightning_indexer(**strided, dtype=DT[dtype], sparse_mode=3, return_value=True, backend="emu")
    emu_contiguous = lightning_indexer(**args, dtype=DT[dtype], sparse_mode=3, return_value=True, backend="emu")
    cpu = lightning_indexer(**strided, dtype=DT[dtype], sparse_mode=3, return_value=True, backend="cpu")
    for got, want in ((emu, emu_contiguous), (emu, cpu)):
        np.testing.assert_array_equal(got[0], want[0])
        np.testing.assert_array_equal(got[1], want[1])
    assert_topk(*emu, reference_rows(args, dtype, 3), EMU_SHAPE.k, exact=True)


@pytest.mark.skipif(not HAS_EMU, reason="the emulator build is off (AOP_WITH_EMU)")
def test_emu_tiling_carries_the_block_stride():
    core = load_native("ascend_ops.lightning_indexer", "core")
    args = make(EMU_SHAPE, "BSND", "PA_BSND", "float16", seed=2)
    strided = dict(args, key=as_kv_half(args["key"]))
    t = core.kernel_tiling(**strided, sparse_mode=3, return_value=False, soc="Ascend910B2", dtype="")
    c = core.kernel_tiling(**args, sparse_mode=3, return_value=False, soc="Ascend910B2", dtype="")
    block = EMU_SHAPE.block_size * 128
    assert c["key_block_stride"] == block and t["key_block_stride"] == 2 * block
    assert {k: v for k, v in t.items() if k != "key_block_stride"} == {k: v for k, v in c.items()
                                                                        if k != "key_block_stride"}


def _overlapping(key):
    s = key.strides
    return np.lib.stride_tricks.as_strided(key, key.shape, (s[1] * (key.shape[1] - 1),) + s[1:], writeable=False)


REFUSED = {
    "overlapping": _overlapping,
    "rows-not-packed": lambda k: np.pad(k, ((0, 0), (0, 0), (0, 0), (0, 4)))[..., :16],
    "block-major-transposed": lambda k: np.ascontiguousarray(k.transpose(1, 0, 2, 3)).transpose(1, 0, 2, 3),
}


@pytest.mark.parametrize("bad", list(REFUSED))
def test_refused_paged_keys(bad):
    args = make(CPU_SHAPE, "BSND", "PA_BSND", "float32", seed=3)
    args["key"] = key = REFUSED[bad](args["key"])
    strides = ", ".join(str(s // key.itemsize) for s in key.strides)
    want = (r"^lightning_indexer: key should have each cache block \[block_size, N2, D\] contiguous and blocks "
            r"that do not overlap \(stride\(0\) >= block_size \* N2 \* D = 64\) but has shape \[15, 4, 1, 16\] "
            rf"and strides \[{strides}\]$")
    with pytest.raises(ValueError, match=want):
        lightning_indexer(**args)


@pytest.mark.parametrize("layout_key", ["BSND", "TND"])
def test_other_key_layouts_stay_contiguous(layout_key):
    args = make(CPU_SHAPE, "BSND", layout_key, "float32", seed=3)
    key = args["key"]
    args["key"] = np.repeat(key, 2, axis=-1)[..., ::2]
    with pytest.raises(ValueError, match=r"^lightning_indexer: key should be contiguous"):
        lightning_indexer(**args)


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="torch is not installed")
@pytest.mark.parametrize("dynamic", [False, True])
def test_torch_eager_meta_and_compile_take_the_view(dynamic):
    import torch

    from ascend_ops.lightning_indexer import torch_ops  # noqa: F401  (registers the op)

    op = torch.ops.ascend_ops.lightning_indexer.default
    args = make(CPU_SHAPE, "TND", "PA_BSND", "float16", seed=9)
    t = {k: torch.from_numpy(v.copy()) if isinstance(v, np.ndarray) else v for k, v in args.items()}
    kv = torch.zeros((t["key"].shape[0], 2) + tuple(t["key"].shape[1:]), dtype=t["key"].dtype)
    kv[:, 0] = t["key"]
    view = kv[:, 0]
    want = op(**t, sparse_mode=3, return_value=True)
    got = op(**dict(t, key=view), sparse_mode=3, return_value=True)
    assert torch.equal(got[0], want[0]) and torch.equal(got[1], want[1])
    meta = {k: v.to("meta") if isinstance(v, torch.Tensor) else v for k, v in t.items()}
    meta["key"] = kv.to("meta")[:, 0]
    assert meta["key"].stride() == view.stride()
    assert op(**meta, sparse_mode=3, return_value=True)[0].shape == want[0].shape

    def fn(query, kv_cache, weights, lengths_q, lengths_k, block_table):
        return op(query, kv_cache[:, 0], weights, actual_seq_lengths_query=lengths_q, actual_seq_lengths_key=lengths_k,
                  block_table=block_table, layout_query="TND", layout_key="PA_BSND", sparse_count=CPU_SHAPE.k,
                  sparse_mode=3)[0]

    torch._dynamo.reset()
    compiled = torch.compile(fn, fullgraph=True, dynamic=dynamic)
    got_c = compiled(t["query"], kv, t["weights"], t["actual_seq_lengths_query"], t["actual_seq_lengths_key"],
                     t["block_table"])
    assert torch.equal(got_c, want[0])
