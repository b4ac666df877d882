"""Caches as users allocate them: strided views (K and V halves of one allocation, vLLM's HND
permutation, a block stride larger than the block), head-major caches (cache_mode 2), NZ halves
and vLLM's paged layout (cache_mode 3). Golden: the reference applied view by view; the whole
allocation compared byte for byte, so a byte written outside a view (a gap, the other half) fails."""
import numpy as np
import pytest

from ascend_ops.devkit.testing import random_array
from ascend_ops.reshape_and_cache import reshape_and_cache

from rac_views import expected, layouts

NB, BS, H, D = 5, 8, 3, 32
TOKENS = 23
DTYPES = ("float16", "bfloat16", "float32", "int8")


def case(dtype, layout, slot_dtype=np.int64, seed=0, d=D):
    rng = np.random.default_rng(seed)
    mode, shape, views = layouts(NB, BS, H, d, dtype)[layout]
    base = random_array(shape, dtype, rng)
    key = random_array((TOKENS, H, d), dtype, rng)
    value = random_array((TOKENS, H, d), dtype, rng)
    slots = rng.permutation(NB * BS)[:TOKENS].astype(slot_dtype)
    slots[3] = -1
    return mode, base, views, key, value, slots


def kw(dtype):
    return {"dtype": "bfloat16"} if dtype == "bfloat16" else {}


def layout_ids(dtype):
    return list(layouts(NB, BS, H, D, dtype))


ALL = [(dt, lay) for dt in DTYPES for lay in layout_ids(dt)]


@pytest.mark.parametrize("backend", ["cpu", "emu"])
@pytest.mark.parametrize("dtype,layout", ALL, ids=[f"{d}-{lay}" for d, lay in ALL])
def test_views_match_reference(backend, dtype, layout):
    mode, base, views, key, value, slots = case(dtype, layout)
    want = expected(base, views, mode, key, value, slots)
    kc, vc = views(base)
    if backend == "emu" and layout == "vllm_paged":
        with pytest.raises(ValueError, match="32-byte bursts.*vLLM"):
            reshape_and_cache(key, value, kc, vc, slots, cache_mode=mode, backend=backend, **kw(dtype))
        return
    reshape_and_cache(key, value, kc, vc, slots, cache_mode=mode, backend=backend, **kw(dtype))
    np.testing.assert_array_equal(base.view(np.uint8), want.view(np.uint8))


# The layouts each head size has (NZ halves need a multiple of 16), vLLM's paged layout aside (the
# kernel refuses it).
AGREE = [(lay, d) for d in (16, 40, 128) for lay in layouts(NB, BS, H, d, "float16") if lay != "vllm_paged"]


@pytest.mark.parametrize("layout,head_size", AGREE, ids=[f"{lay}-d{d}" for lay, d in AGREE])
def test_emulator_and_cpu_agree_byte_for_byte(layout, head_size):
    got = []
    for backend in ("cpu", "emu"):
        mode, base, views, key, value, slots = case("float16", layout, np.int32, seed=head_size, d=head_size)
        kc, vc = views(base)
        reshape_and_cache(key, value, kc, vc, slots, cache_mode=mode, backend=backend)
        got.append(base)
    np.testing.assert_array_equal(got[0].view(np.uint8), got[1].view(np.uint8))


@pytest.mark.parametrize("backend", ["cpu", "emu"])
@pytest.mark.parametrize("layout", ["nhd_halves", "hnd_permuted", "head_major_halves", "block_gap"])
def test_key_only_strided(backend, layout):
    mode, base, views, key, value, slots = case("float16", layout)
    want = base.copy()
    kc_want, _ = views(want)
    from ascend_ops.reshape_and_cache import reference
    kc_want[...] = reference.reshape_and_cache(key, None, kc_want, None, slots, cache_mode=mode)[0]
    kc, _ = views(base)
    reshape_and_cache(key, None, kc, None, slots, cache_mode=mode, backend=backend)
    np.testing.assert_array_equal(base.view(np.uint8), want.view(np.uint8))


QUANT = [("int8", "cpu"), ("int8", "emu"), ("fp8_e4m3", "cpu"), ("fp8_e5m2", "cpu")]


@pytest.mark.parametrize("mode_name,backend", QUANT)
@pytest.mark.parametrize("layout", ["nhd_halves", "hnd_permuted", "head_major_halves", "block_gap", "nz_halves",
                                    "vllm_paged"])
def test_quantised_write_into_views(mode_name, backend, layout):
    cache_dtype = "int8" if mode_name == "int8" else "uint8"
    rng = np.random.default_rng(7)
    lays = layouts(NB, BS, H, D, cache_dtype)
    mode, shape, views = lays[layout]
    base = rng.integers(0, 256, size=shape, dtype=np.uint8).view(cache_dtype)
    key = random_array((TOKENS, H, D), "float16", rng)
    value = random_array((TOKENS, H, D), "float16", rng)
    slots = rng.permutation(NB * BS)[:TOKENS].astype(np.int32)
    k_scale = np.array([0.02, 0.03, 0.05], np.float32)
    v_scale = np.array(0.04, np.float32)
    args = dict(kv_cache_dtype=mode_name, k_scale=k_scale, v_scale=v_scale)
    want = expected(base, views, mode, key, value, slots, **args)
    kc, vc = views(base)
    if backend == "emu" and layout == "vllm_paged":
        with pytest.raises(ValueError, match="32-byte bursts"):
            reshape_and_cache(key, value, kc, vc, slots, cache_mode=mode, backend=backend, **args)
        return
    reshape_and_cache(key, value, kc, vc, slots, cache_mode=mode, backend=backend, **args)
    np.testing.assert_array_equal(base.view(np.uint8), want.view(np.uint8))


# ---- refusals: before any write, every byte unchanged ----

def refused(match, key, value, kc, vc, slots, backend="cpu", **kwargs):
    before = [np.array(a, copy=True) for a in (kc, vc) if a is not None]
    with pytest.raises(ValueError, match=match):
        reshape_and_cache(key, value, kc, vc, slots, backend=backend, **kwargs)
    for b, a in zip(before, [a for a in (kc, vc) if a is not None]):
        assert np.ascontiguousarray(a).tobytes() == b.tobytes()


@pytest.mark.parametrize("backend", ["cpu", "emu"])
def test_same_cache_for_key_and_value_refused(backend):
    _, base, _, key, value, slots = case("float16", "kv_first")
    refused("key_cache and value_cache should not share memory", key, value, base[0], base[0], slots, backend)


@pytest.mark.parametrize("backend", ["cpu", "emu"])
def test_partly_overlapping_halves_refused(backend):
    rng = np.random.default_rng(1)
    flat = random_array((2 * NB * BS * H * D,), "float16", rng)
    kc = flat[: NB * BS * H * D].reshape(NB, BS, H, D)
    shift = NB * BS * H * D - H * D  # value_cache starts on key_cache's last token row
    vc = flat[shift: shift + NB * BS * H * D].reshape(NB, BS, H, D)
    key = random_array((4, H, D), "float16", rng)
    refused("key_cache and value_cache should not share memory.*overlap", key, key.copy(), kc, vc,
            np.arange(4, dtype=np.int64), backend)


def test_interleaved_views_sharing_bytes_refused():
    """Two views of one [nb, 2, bs, H, D] allocation whose rows interleave but overlap by half a row."""
    rng = np.random.default_rng(2)
    base = random_array((NB, 2, BS, H, D), "float16", rng)
    kc = base[:, 0]
    vc = base.reshape(-1)[D // 2:].__array__()  # a flat view shifted by half a head
    vc = np.lib.stride_tricks.as_strided(vc, shape=kc.shape, strides=kc.strides)
    key = random_array((4, H, D), "float16", rng)
    refused("should not share memory", key, key.copy(), kc, vc, np.arange(4, dtype=np.int32))


def test_cache_overlapping_key_refused():
    rng = np.random.default_rng(3)
    base = random_array((NB, BS, H, D), "float16", rng)
    key = base[0]  # key [BS, H, D] is the first block of the cache
    vc = random_array((NB, BS, H, D), "float16", rng)
    refused("key_cache and key should not share memory", key, key.copy(), base, vc, np.arange(BS, dtype=np.int32))


def test_cache_overlapping_slot_mapping_refused():
    rng = np.random.default_rng(4)
    kc = random_array((NB, BS, H, D), "float16", rng)
    vc = random_array((NB, BS, H, D), "float16", rng)
    slots = vc.reshape(-1)[:8].view(np.int32)  # 8 float16 read as 4 int32
    slots[:] = np.arange(4, dtype=np.int32)
    key = random_array((4, H, D), "float16", rng)
    refused("value_cache and slot_mapping should not share memory", key, key.copy(), kc, vc, slots)


def test_cache_repeating_elements_refused():
    rng = np.random.default_rng(5)
    row = random_array((1, 1, H, D), "float16", rng)
    kc = np.broadcast_to(row, (NB, BS, H, D))
    kc = np.lib.stride_tricks.as_strided(row, shape=(NB, BS, H, D), strides=(0, 0) + row.strides[2:])
    vc = random_array((NB, BS, H, D), "float16", rng)
    key = random_array((4, H, D), "float16", rng)
    refused("key_cache should not repeat elements", key, key.copy(), kc, vc, np.arange(4, dtype=np.int32))


def test_cache_last_dim_strided_refused():
    rng = np.random.default_rng(6)
    wide = random_array((NB, BS, H, 2 * D), "float16", rng)
    vc = random_array((NB, BS, H, D), "float16", rng)
    key = random_array((4, H, D), "float16", rng)
    refused("key_cache should be contiguous in its last dim", key, key.copy(), wide[..., ::2], vc,
            np.arange(4, dtype=np.int32))


def test_head_major_shape_checked():
    rng = np.random.default_rng(8)
    kc = random_array((NB, BS, H, D), "float16", rng)  # the ND shape given with cache_mode 2
    vc = random_array((NB, H, BS, D), "float16", rng)
    key = random_array((4, H, D), "float16", rng)
    refused(r"key_cache should be \[num_blocks, H, block_size, Dk\] \(cache_mode 2", key, key.copy(), kc, vc,
            np.arange(4, dtype=np.int32), cache_mode=2)


def test_paged_x_checked():
    rng = np.random.default_rng(9)
    kc = random_array((NB, H, D // 16, BS, 16), "float16", rng)  # x should be 8 for float16
    vc = random_array((NB, H, D, BS), "float16", rng)
    key = random_array((4, H, D), "float16", rng)
    refused("x = 16 bytes / itemsize = 8", key, key.copy(), kc, vc, np.arange(4, dtype=np.int32), cache_mode=3)
