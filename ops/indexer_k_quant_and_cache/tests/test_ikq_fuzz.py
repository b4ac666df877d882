"""Property-based fuzzing of indexer_k_quant_and_cache through every front door built here (numpy
cpu / emu, torch cpu): valid cases (split or fused, any k dtype, strided k rows, caches inside
guarded allocations, padding, T' < T) must match the reference byte for byte and write nothing
else; cases with planted faults (a dtype, a shape, quant_block_size, scale_fmt, an out-of-range
slot, an overflowing float16 scale) must raise the documented exception and change no byte."""
from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from ascend_ops.devkit import fuzzing
from ascend_ops.indexer_k_quant_and_cache import indexer_k_quant_and_cache, reference

from ikq_cases import K_DTYPES

OP = "indexer_k_quant_and_cache"
DOORS = fuzzing.front_doors("ascend_ops.indexer_k_quant_and_cache")
FAULTS = {
    "k dtype int8": TypeError,
    "cache dtype float16": TypeError,
    "slot dtype int16": TypeError,
    "qbs not dividing D": ValueError,
    "cache last dim": ValueError,
    "scale_fmt unknown": ValueError,
    "slot out of range": IndexError,
    "float16 scale overflow": ValueError,
    "scale cache with fused / missing with split": ValueError,
}


@st.composite
def cases(draw):
    door = draw(st.sampled_from(DOORS))
    layout = "split" if door == "numpy-emu" else draw(st.sampled_from(["split", "fused"]))
    k_dtype = draw(st.sampled_from(K_DTYPES))
    d = draw(st.sampled_from([32, 64, 128, 256]))
    qbs = draw(st.sampled_from([q for q in (32, 64, 128, 256) if d % q == 0] +
                               ([] if door == "numpy-emu" else [q for q in (8, 16) if d % q == 0])))
    tokens = draw(st.integers(0, 40))
    written = draw(st.integers(0, tokens))
    block_size = draw(st.sampled_from([1, 4, 16]))
    num_blocks = draw(st.integers(max(1, -(-written // block_size)), 6 + written // block_size))
    faults = draw(st.lists(st.sampled_from(sorted(FAULTS)), max_size=1))
    return dict(door=door, layout=layout, k_dtype=k_dtype, d=d, qbs=qbs, tokens=tokens, written=written,
                block_size=block_size, num_blocks=num_blocks, k_pad=draw(st.sampled_from([0, 0, 8])),
                scale_dtype=draw(st.sampled_from(["float16", "float32"])), rank4=draw(st.booleans()),
                ue8m0=draw(st.booleans()), slot_dtype=draw(st.sampled_from([np.int32, np.int64])),
                seed=draw(st.integers(0, 2**31 - 1)), faults=faults)


def build(c):
    rng = np.random.default_rng(c["seed"])
    t, d, qbs, nb, bs = c["tokens"], c["d"], c["qbs"], c["num_blocks"], c["block_size"]
    faults = list(c["faults"])
    values = rng.standard_normal((t, d)) * rng.uniform(0.001, 100, (t, 1))
    k_dtype = c["k_dtype"]
    if "float16 scale overflow" in faults:
        if c["layout"] != "split" or c["scale_dtype"] != "float16" or k_dtype == "float16" or c["written"] == 0:
            faults.remove("float16 scale overflow")
        else:
            values[0, 0] = 1e7
    np_k = {"float16": np.float16, "bfloat16": np.uint16, "float32": np.float32}[k_dtype]
    kv = values.astype(np.float32)
    if k_dtype == "bfloat16":
        kv = ((kv.view(np.uint32) + 0x7FFF + ((kv.view(np.uint32) >> 16) & 1)) >> 16).astype(np.uint16)
    k = fuzzing.guarded((t, d), np_k, rng, row_pad=c["k_pad"], values=kv.astype(np_k))
    g = d // qbs
    if c["layout"] == "fused":
        cache = fuzzing.guarded((nb, bs, d + 4 * g), np.uint8, rng)
        scales = None
    else:
        tail = (1,) if c["rank4"] else ()
        cache = fuzzing.guarded((nb, bs) + tail + (d,), np.int8, rng)
        scales = fuzzing.guarded((nb, bs) + tail + (g,), np.dtype(c["scale_dtype"]), rng)
    slots = rng.permutation(nb * bs)[: c["written"]].astype(c["slot_dtype"])
    slots[rng.random(len(slots)) < 0.2] = -1
    if "float16 scale overflow" in faults:
        slots[0] = 0 if slots[0] < 0 else slots[0]
    kwargs = dict(quant_block_size=qbs, scale_fmt="ue8m0" if (c["ue8m0"] and c["layout"] == "fused") else None)
    planted = []
    for f in faults:
        if f == "k dtype int8":
            k = np.zeros((t, d), np.int8)
        elif f == "cache dtype float16":
            cache = np.zeros(cache.shape, np.float16)
        elif f == "slot dtype int16":
            slots = slots.astype(np.int16)
        elif f == "qbs not dividing D":
            kwargs["quant_block_size"] = qbs * 3 if d % (qbs * 3) else qbs + 1
        elif f == "cache last dim":
            cache = np.zeros(cache.shape[:-1] + (cache.shape[-1] + 1,), cache.dtype)
        elif f == "scale_fmt unknown":
            kwargs["scale_fmt"] = "e8m0"
        elif f == "slot out of range":
            if len(slots) == 0:
                continue
            slots[rng.integers(len(slots))] = nb * bs + int(rng.integers(0, 1000))
        elif f == "scale cache with fused / missing with split":
            scales = None if scales is not None else np.zeros((nb, bs, g), np.float32)
        planted.append(fuzzing.Fault(f, FAULTS[f]))
    return k, cache, slots, scales, kwargs, planted


@fuzzing.fuzz_settings()
@given(cases())
def test_fuzz(c):
    k, cache, slots, scales, kwargs, faults = build(c)
    door = c["door"]
    bf16 = c["k_dtype"] == "bfloat16"
    buffers = fuzzing.owners(k, cache, slots, scales)
    if door == "numpy-emu" and cache.dtype == np.uint8:
        faults = faults + [fuzzing.Fault("fused on emu", ValueError)]
    if door == "numpy-emu" and kwargs["quant_block_size"] % 32:
        faults = faults + [fuzzing.Fault("qbs not a multiple of 32 on emu", ValueError)]

    if door.startswith("torch"):
        def call():
            t = [fuzzing.to_torch(a, bfloat16=bf16) for a in (k, cache, slots, scales)]
            import torch
            return torch.ops.ascend_ops.indexer_k_quant_and_cache(t[0], t[1], t[2], k_scale_cache=t[3], **kwargs)
    else:
        def call():
            return indexer_k_quant_and_cache(k, cache, slots, k_scale_cache=scales, backend=door.split("-")[1],
                                             dtype="bfloat16" if bf16 else None, **kwargs)

    expected = None
    if not faults:
        want_cache, want_scales = reference.indexer_k_quant_and_cache(k, cache, slots, scales, **kwargs)
        writes = [(cache, want_cache)] + ([] if scales is None else [(scales, want_scales)])
        expected = fuzzing.expected_bytes(buffers, writes)

    def check(_):
        fuzzing.assert_bytes(buffers, expected, f"{OP} via {door}: ")

    fuzzing.check_call(OP, call, buffers=buffers, faults=faults, check=check, door=door)
