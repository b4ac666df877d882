"""ms_custom_ops' call forms on the op itself: key / value [B, S, H*D] (and [T, H*D]) with
head_num, and dtypes checked per pair (key with key_cache, value with value_cache) so an int8 key
beside a float16 / bfloat16 value works, ND and NZ, "auto", on the cpu backend and the kernel."""
import numpy as np
import pytest

from ascend_ops.devkit.testing import random_array
from ascend_ops.reshape_and_cache import reference, reshape_and_cache

PAIRS = [("int8", "float16"), ("int8", "bfloat16"), ("float16", "int8"), ("bfloat16", "float32"),
         ("float16", "float16")]


def _cache(rng, dtype, nb, bs, h, d, nz):
    f = reference.nz_fractal(np.int8 if dtype == "int8" else np.float16)
    return random_array((nb, h * d // f, bs, f) if nz else (nb, bs, h, d), dtype, rng)


# NZ has no float32 cache: those pairs run ND only.
CACHE_PAIRS = [(nz, k, v) for nz in (False, True) for k, v in PAIRS if not (nz and "float32" in (k, v))]


@pytest.mark.parametrize("backend", ["cpu", "emu"])
@pytest.mark.parametrize("nz,kdt,vdt", CACHE_PAIRS, ids=[f"{'nz' if nz else 'nd'}-k{k}-v{v}" for nz, k, v in CACHE_PAIRS])
@pytest.mark.parametrize("lead", [(13,), (3, 5), (1, 7), (6, 1)], ids=lambda s: "x".join(map(str, s)))
def test_forms_and_dtype_pairs(backend, nz, kdt, vdt, lead):
    rng = np.random.default_rng(len(lead) * 7 + lead[0])
    h, d, nb, bs = 4, 64, 5, 16
    tokens = int(np.prod(lead))
    key = random_array(lead + (h * d,), kdt, rng)
    value = random_array(lead + (h * d,), vdt, rng)
    kc, vc = _cache(rng, kdt, nb, bs, h, d, nz), _cache(rng, vdt, nb, bs, h, d, nz)
    slots = rng.permutation(nb * bs)[:tokens].astype(np.int32)
    slots[0] = -1
    mode = 1 if nz else 0
    want_k = reference.reshape_and_cache(key.reshape(tokens, h, d), None, kc, None, slots, cache_mode=mode)[0]
    want_v = reference.reshape_and_cache(value.reshape(tokens, h, d), None, vc, None, slots, cache_mode=mode)[0]
    # bfloat16 arrays are uint16 bits: say which (the other pair's dtype is its own)
    reshape_and_cache(key, value, kc, vc, slots, cache_mode=mode, head_num=h, backend=backend,
                      dtype="bfloat16" if "bfloat16" in (kdt, vdt) else None)
    np.testing.assert_array_equal(kc.view(np.uint8), want_k.view(np.uint8))
    np.testing.assert_array_equal(vc.view(np.uint8), want_v.view(np.uint8))


def test_ms_custom_ops_readme_shape_on_the_op():
    """Their README's example: key / value (128, 1, 2048), caches (1024, 16, 32, 64), head_num 32."""
    rng = np.random.default_rng(0)
    key, value = (rng.random((128, 1, 2048)).astype(np.float16) for _ in range(2))
    kc, vc = (rng.random((1024, 16, 32, 64)).astype(np.float16) for _ in range(2))
    slots = np.arange(128, dtype=np.int32)
    want = reference.reshape_and_cache(key.reshape(128, 32, 64), value.reshape(128, 32, 64), kc, vc, slots)
    reshape_and_cache(key, value, kc, vc, slots, cache_mode=0, head_num=32)
    np.testing.assert_array_equal(kc, want[0])
    np.testing.assert_array_equal(vc, want[1])


def test_batch_seq_that_do_not_merge_refused():
    rng = np.random.default_rng(1)
    big = random_array((3, 8, 128), "float16", rng)
    key = big[:, :4]  # [3, 4, 128] of [3, 8, 128]: batch stride 8 rows, S stride 1 row, no one token stride
    kc = random_array((4, 8, 2, 64), "float16", rng)
    before = kc.copy()
    with pytest.raises(ValueError, match=r"key \[B, S, H\*D\] should have B and S that merge"):
        reshape_and_cache(key, None, kc, None, np.arange(12, dtype=np.int32), head_num=2)
    np.testing.assert_array_equal(kc, before)


def test_quantised_mode_still_needs_one_input_dtype():
    rng = np.random.default_rng(2)
    key = random_array((4, 2, 32), "float16", rng)
    value = random_array((4, 2, 32), "float32", rng)
    kc = np.zeros((2, 4, 2, 32), np.int8)
    with pytest.raises(TypeError, match="value should have dtype float16"):
        reshape_and_cache(key, value, kc, kc.copy(), np.arange(4, dtype=np.int32), kv_cache_dtype="int8",
                          k_scale=np.array(1, np.float32), v_scale=np.array(1, np.float32))
