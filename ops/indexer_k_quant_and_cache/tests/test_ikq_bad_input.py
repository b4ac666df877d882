"""Every row of the contract's error table, on the cpu and emu backends: the exception class, a
message naming the op, the argument and what was expected, and every cache byte untouched."""
import numpy as np
import pytest

from ascend_ops.indexer_k_quant_and_cache import indexer_k_quant_and_cache

from ikq_cases import Case, make

OP = "indexer_k_quant_and_cache"
SPLIT = Case(6, 5, 128, 64, 3, 4)
FUSED = Case(6, 5, 128, 64, 3, 4, layout="fused")


def split_args(**over):
    k, cache, slots, scales, kwargs = make(SPLIT, "float16", np.int64, seed=3)
    a = dict(k=k, k_cache=cache, slot_mapping=slots, k_scale_cache=scales, **kwargs)
    a.update(over)
    return a


def fused_args(**over):
    k, cache, slots, _, kwargs = make(FUSED, "float16", np.int64, seed=3)
    a = dict(k=k, k_cache=cache, slot_mapping=slots, k_scale_cache=None, **kwargs)
    a.update(over)
    return a


def overlapping_blocks():
    """A fused cache [3, 4, 136] whose blocks are 100 bytes apart: smaller than a block."""
    base = np.zeros(4096, np.uint8)
    return np.lib.stride_tricks.as_strided(base, (3, 4, 136), (100, 136, 1))


def bf16_huge_k():
    k = np.zeros((6, 128), np.uint16)
    k[2, 70] = 0x4B18  # bfloat16 9961472 (> 127 * 65520): its float16 scale overflows
    return k


# (id, exception, words the message holds, arguments)
CASES = [
    ("k-dtype", TypeError, ["k should have dtype", "int8"], lambda: split_args(k=np.zeros((6, 128), np.int8))),
    ("k-float64", TypeError, ["k should have dtype", "float64"], lambda: split_args(k=np.zeros((6, 128)))),
    ("cache-dtype", TypeError, ["k_cache should have dtype", "float16"],
     lambda: split_args(k_cache=np.zeros((3, 4, 1, 128), np.float16))),
    ("slot-dtype", TypeError, ["slot_mapping should have dtype", "float32"],
     lambda: split_args(slot_mapping=np.zeros(5, np.float32))),
    ("scale-dtype", TypeError, ["k_scale_cache should have dtype", "int32"],
     lambda: split_args(k_scale_cache=np.zeros((3, 4, 1, 2), np.int32))),
    ("qbs-not-dividing", ValueError, ["quant_block_size", "divide D = 128", "48"],
     lambda: split_args(quant_block_size=48)),
    ("qbs-zero", ValueError, ["quant_block_size", "0"], lambda: split_args(quant_block_size=0)),
    ("qbs-negative", ValueError, ["quant_block_size", "-64"], lambda: split_args(quant_block_size=-64)),
    ("fused-last-dim", ValueError, ["k_cache", "D + 4G", "136", "[3, 4, 132]"],
     lambda: fused_args(k_cache=np.zeros((3, 4, 132), np.uint8))),
    ("fused-block-stride", ValueError, ["k_cache", "strides", ">=544"], lambda: fused_args(k_cache=overlapping_blocks())),
    ("fused-rank", ValueError, ["k_cache", "rank 3", "[3, 544]"], lambda: fused_args(k_cache=np.zeros((3, 544), np.uint8))),
    ("split-last-dim", ValueError, ["k_cache", "D (from k) = 128", "[3, 4, 1, 64]"],
     lambda: split_args(k_cache=np.zeros((3, 4, 1, 64), np.int8))),
    ("split-head-dim", ValueError, ["k_cache", "head dim = 1", "[3, 4, 2, 128]"],
     lambda: split_args(k_cache=np.zeros((3, 4, 2, 128), np.int8))),
    ("split-rank", ValueError, ["k_cache", "rank 4 or 3", "[12, 128]"],
     lambda: split_args(k_cache=np.zeros((12, 128), np.int8))),
    ("scale-groups", ValueError, ["k_scale_cache", "G = D / quant_block_size = 2", "[3, 4, 1, 4]"],
     lambda: split_args(k_scale_cache=np.zeros((3, 4, 1, 4), np.float16))),
    ("scale-blocks", ValueError, ["k_scale_cache", "num_blocks (from k_cache) = 3", "[2, 4, 1, 2]"],
     lambda: split_args(k_scale_cache=np.zeros((2, 4, 1, 2), np.float16))),
    ("scale-block-size", ValueError, ["k_scale_cache", "block_size (from k_cache) = 4", "[3, 8, 2]"],
     lambda: split_args(k_scale_cache=np.zeros((3, 8, 2), np.float16))),
    ("scale-fmt-unknown", ValueError, ["scale_fmt", "'ue8m1'"], lambda: fused_args(scale_fmt="ue8m1")),
    ("scale-fmt-empty", ValueError, ["scale_fmt", "None or 'ue8m0'", "''"], lambda: fused_args(scale_fmt="")),
    ("scale-fmt-split", ValueError, ["scale_fmt", "split", "'ue8m0'"], lambda: split_args(scale_fmt="ue8m0")),
    ("scales-with-fused", ValueError, ["k_scale_cache should be None", "fused"],
     lambda: fused_args(k_scale_cache=np.zeros((3, 4, 1, 2), np.float16))),
    ("no-scales-split", ValueError, ["k_scale_cache should be given", "split"], lambda: split_args(k_scale_cache=None)),
    ("k-rank", ValueError, ["k should be [T, D]", "[6, 1, 128]"], lambda: split_args(k=np.zeros((6, 1, 128), np.float16))),
    ("too-many-slots", ValueError, ["slot_mapping", "T' <= T = 6", "[7]"],
     lambda: split_args(slot_mapping=np.zeros(7, np.int64))),
    ("slot-rank", ValueError, ["slot_mapping", "rank 1", "[5, 1]"],
     lambda: split_args(slot_mapping=np.zeros((5, 1), np.int64))),
    ("k-inner-stride", ValueError, ["k should have contiguous rows", "strides"],
     lambda: split_args(k=np.zeros((6, 256), np.float16)[:, ::2])),
    ("float16-scale-overflow", ValueError, ["k_scale_cache is float16", "k[2]", "group 1", "float32 k_scale_cache"],
     lambda: split_args(k=bf16_huge_k(), dtype="bfloat16")),
    ("slot-out-of-range", IndexError, ["slot_mapping[3] = 12", "12 slots"],
     lambda: split_args(slot_mapping=np.array([0, 1, -1, 12, 2], np.int64))),
    ("slot-far-int32", IndexError, ["slot_mapping[0] = 2147483647"],
     lambda: split_args(slot_mapping=np.array([2**31 - 1, 1, -1, 3, 2], np.int32))),
    ("fused-slot-out-of-range", IndexError, ["slot_mapping[4] = 99"],
     lambda: fused_args(slot_mapping=np.array([0, 1, -1, 3, 99], np.int64))),
]


def outputs(a):
    return [x for x in (a["k_cache"], a["k_scale_cache"]) if x is not None]


@pytest.mark.parametrize("backend", ["cpu", "emu"])
@pytest.mark.parametrize("case_id,exc,words,build", CASES, ids=[c[0] for c in CASES])
def test_bad_input_raises_and_writes_nothing(backend, case_id, exc, words, build):
    a = build()
    if backend == "emu" and a["k_cache"].dtype == np.uint8 and exc is IndexError:
        exc, words = ValueError, ["npu and emu backends take the split int8 layout only"]  # refused first
    before = [np.array(o, copy=True) for o in outputs(a)]
    with pytest.raises(exc) as info:
        indexer_k_quant_and_cache(**a, backend=backend)
    message = str(info.value)
    assert message.startswith(OP + ": "), message
    for w in words:
        assert w in message, (w, message)
    for o, b in zip(outputs(a), before):
        assert o.tobytes() == b.tobytes()


@pytest.mark.parametrize("build,words", [
    (lambda: fused_args(), ["split int8 layout only", "fp8"]),
    (lambda: split_args(quant_block_size=16, k_scale_cache=np.zeros((3, 4, 1, 8), np.float16)),
     ["multiple of 32", "16"]),
], ids=["fused", "qbs-16"])
def test_emu_refuses_what_the_kernel_does_not_take(build, words):
    a = build()
    before = [np.array(o, copy=True) for o in outputs(a)]
    with pytest.raises(ValueError) as info:
        indexer_k_quant_and_cache(**a, backend="emu")
    for w in words:
        assert w in str(info.value)
    for o, b in zip(outputs(a), before):
        assert o.tobytes() == b.tobytes()
    indexer_k_quant_and_cache(**a, backend="cpu")  # the cpu backend takes it


def test_float16_k_never_overflows_a_float16_scale():
    """float16 k: amax <= 65504, so amax / 127 < 516: no check, no error."""
    from ascend_ops.indexer_k_quant_and_cache import reference

    k = np.full((6, 128), -65504, np.float16)
    for backend in ("cpu", "emu"):
        a = split_args(k=k)
        want_cache, want_scales = reference.indexer_k_quant_and_cache(
            k, a["k_cache"], a["slot_mapping"], a["k_scale_cache"], quant_block_size=64)
        indexer_k_quant_and_cache(**a, backend=backend)
        np.testing.assert_array_equal(a["k_cache"], want_cache)
        np.testing.assert_array_equal(a["k_scale_cache"], want_scales)
        assert want_scales.max() == np.float16(65504 / 127)
