"""The call forms beyond key + value ND through the NumPy front door (cpu and emu backends):
key-only caches, FRACTAL_NZ caches (cache_mode 1) and [T, H*D] inputs with head_num.

Every result is checked bit for bit against the reference and, independently of it, against
the ND write re-laid out as NZ (reference.nd_to_nz, a reshape + transpose) and against one
hand-computed index of the README's formula.
"""
import numpy as np
import pytest

from ascend_ops.reshape_and_cache import reference, reshape_and_cache

from rac_cases import DTYPES, Shape, make

# Shapes whose head sizes are whole fractals for every dtype (F = 32 covers int8).
NZ_SHAPES = [
    Shape(1, 1, 1, 32, 32, 1, 16),
    Shape(7, 7, 3, 32, 64, 4, 8, padding=2),
    Shape(19, 13, 2, 128, 64, 5, 16, padding=3),
    Shape(33, 33, 8, 128, 128, 3, 16, key_pad=96),
    Shape(300, 300, 1, 512, 64, 10, 32, padding=30),  # an MLA latent + rope sized cache
    Shape(5, 0, 2, 32, 32, 2, 4),
]
BF16 = {"bfloat16": "bfloat16"}
DOORS = ("cpu", "emu")


def run(backend, dtype, *args, **kwargs):
    return reshape_and_cache(*args, **kwargs, backend=backend, dtype=BF16.get(dtype))


def same(a, b):
    return np.array_equal(np.ascontiguousarray(a).view(np.uint8), np.ascontiguousarray(b).view(np.uint8))


@pytest.mark.parametrize("backend", DOORS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [Shape(7, 7, 3, 20, 12, 4, 8, padding=2), Shape(33, 33, 8, 128, 128, 3, 16,
                                                                                   key_pad=96)], ids=str)
def test_key_only_nd(backend, dtype, shape):
    key, value, key_cache, value_cache, slots = make(shape, dtype, np.int32, seed=1)
    want, _ = reference.reshape_and_cache(key, value, key_cache, value_cache, slots)
    got = key_cache.copy()
    run(backend, dtype, key, None, got, None, slots)
    assert same(got, want)


@pytest.mark.parametrize("backend", DOORS)
@pytest.mark.parametrize("dtype", [d for d in DTYPES if d != "float32"])
@pytest.mark.parametrize("shape", NZ_SHAPES, ids=str)
@pytest.mark.parametrize("key_only", [False, True], ids=["kv", "key-only"])
def test_nz_equals_nd_relaid(backend, dtype, shape, key_only):
    key, value, key_cache, value_cache, slots = make(shape, dtype, np.int64, seed=2)
    want_nd = reference.reshape_and_cache(key, value, key_cache, value_cache, slots)
    nz = [reference.nd_to_nz(key_cache), reference.nd_to_nz(value_cache)]
    want = reference.reshape_and_cache(key, value, *nz, slots, cache_mode=1)
    for w_nz, w_nd in zip(want, want_nd):  # the reference agrees with the re-laid ND write
        assert same(w_nz, reference.nd_to_nz(w_nd))
    got = [c.copy() for c in nz]
    if key_only:
        run(backend, dtype, key, None, got[0], None, slots, cache_mode=1)
        assert same(got[1], nz[1])
        want = want[:1]
    else:
        run(backend, dtype, key, value, *got, slots, cache_mode=1)
    for g, w in zip(got, want):
        assert same(g, w)
        assert same(reference.nz_to_nd(g, shape.heads), reference.nz_to_nd(w, shape.heads))


@pytest.mark.parametrize("backend", DOORS)
@pytest.mark.parametrize("dtype,fractal", [("float16", 16), ("int8", 32)])
def test_nz_worked_index(backend, dtype, fractal):
    """README's formula: element j of token t at slot s lands at [s // bs, j // F, s % bs, j % F]."""
    heads, d, bs, nb = 2, fractal, 4, 3  # H*D = 2F: two fractal rows per token
    key = np.arange(3 * heads * d).reshape(3, heads, d).astype(dtype)
    key_cache = np.zeros((nb, heads * d // fractal, bs, fractal), dtype)
    slots = np.array([5, -1, 11], np.int32)
    run(backend, dtype, key, None, key_cache, None, slots, cache_mode=1)
    j = fractal + 3  # second fractal row, column 3
    assert key_cache[5 // bs, j // fractal, 5 % bs, j % fractal] == key[0].reshape(-1)[j]
    assert key_cache[11 // bs, 1, 11 % bs, 0] == key[2].reshape(-1)[fractal]
    assert np.count_nonzero(key_cache) == 2 * heads * d - 1  # two tokens written (key[0][0] is 0)


@pytest.mark.parametrize("backend", DOORS)
@pytest.mark.parametrize("cache_mode", [0, 1])
@pytest.mark.parametrize("key_only", [False, True], ids=["kv", "key-only"])
def test_head_num_flat_rows_equal_3d(backend, cache_mode, key_only):
    shape = Shape(19, 13, 4, 32, 64, 5, 16, key_pad=0, padding=3)
    key, value, key_cache, value_cache, slots = make(shape, "bfloat16", np.int32, seed=3)
    if cache_mode:
        key_cache, value_cache = reference.nd_to_nz(key_cache), reference.nd_to_nz(value_cache)
    if key_only:
        value = value_cache = None
    want = reference.reshape_and_cache(key, value, key_cache, value_cache, slots, cache_mode=cache_mode)
    caches = [c if c is None else c.copy() for c in (key_cache, value_cache)]
    flat_value = None if value is None else value.reshape(19, -1)
    run(backend, "bfloat16", key.reshape(19, -1), flat_value, caches[0], caches[1], slots, cache_mode=cache_mode,
        head_num=4)
    for g, w in zip(caches, want):
        if w is not None:
            assert same(g, w)


@pytest.mark.parametrize("backend", DOORS)
def test_head_num_strided_flat_rows(backend):
    """[T, H*D] rows of a fused qkv tensor (row stride > H*D) with head_num."""
    fused = np.random.default_rng(4).standard_normal((9, 3 * 64)).astype(np.float16)
    key, value = fused[:, 64:128], fused[:, 128:]
    key_cache = np.zeros((3, 4, 2, 32), np.float16)
    value_cache = np.zeros((3, 4, 2, 32), np.float16)
    slots = np.arange(9, dtype=np.int64)
    run(backend, "float16", key, value, key_cache, value_cache, slots, head_num=2)
    assert same(key_cache.reshape(-1, 64)[:9], key)
    assert same(value_cache.reshape(-1, 64)[:9], value)


def test_emu_nz_moves_the_minimum():
    """The NZ write moves each written row once each way, like ND (strided bursts, no extra traffic)."""
    shape = Shape(19, 13, 2, 128, 64, 5, 16, padding=3)
    key, value, key_cache, value_cache, slots = make(shape, "float16", np.int64, seed=5)
    nd = run("emu", "float16", key, value, key_cache.copy(), value_cache.copy(), slots)
    nz = run("emu", "float16", key, value, reference.nd_to_nz(key_cache), reference.nd_to_nz(value_cache), slots,
             cache_mode=1)
    assert nz["totals"]["gm_read_bytes"] == nd["totals"]["gm_read_bytes"]
    assert nz["totals"]["gm_write_bytes"] == nd["totals"]["gm_write_bytes"]


@pytest.mark.parametrize("backend", DOORS)
def test_readme_worked_example(backend):
    """README: float16, H = 2, D = 64, block_size = 16, slot 37, j = 70 -> key_cache[2, 4, 5, 6], flat 5206."""
    key = np.zeros((1, 2, 64), np.float16)
    key[0, 1, 6] = 1.0  # j = 1 * 64 + 6 = 70
    key_cache = np.zeros((3, 2 * 64 // 16, 16, 16), np.float16)
    run(backend, "float16", key, None, key_cache, None, np.array([37], np.int64), cache_mode=1)
    assert key_cache[2, 4, 5, 6] == 1.0 and key_cache.reshape(-1)[5206] == 1.0
    assert np.count_nonzero(key_cache) == 1
