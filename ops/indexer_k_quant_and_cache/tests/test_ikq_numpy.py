"""Golden tests on NumPy arrays: the cpu backend (split and fused) and the emu backend (split int8),
byte-exact against the reference written from the contract (codes and stored scales); bytes of a
cache view's allocation outside the written slots untouched."""
import numpy as np
import pytest

from ascend_ops.indexer_k_quant_and_cache import indexer_k_quant_and_cache, reference

from ikq_cases import FUSED, K_DTYPES, SLOT_DTYPES, SPLIT, base_of, make


def fewest_cores(units: int, cores: int) -> int:
    """The cores of a launch of `units` equal units: the fewest with the longest share of
    min(units, cores) cores (49 on 48 cores: 25 cores, 24 of 2 and one of 1)."""
    longest = -(-units // cores)
    return -(-units // longest)


def run(backend, k, cache, slots, scales, k_dtype, **kwargs):
    as_dtype = "bfloat16" if k_dtype == "bfloat16" else None
    return indexer_k_quant_and_cache(k, cache, slots, k_scale_cache=scales, backend=backend, dtype=as_dtype, **kwargs)


def check(backend, case, k_dtype, slot_dtype, seed=0):
    k, cache, slots, scales, kwargs = make(case, k_dtype, slot_dtype, seed)
    want_cache, want_scales = reference.indexer_k_quant_and_cache(k, cache, slots, scales, **kwargs)
    cache_base, scale_base = base_of(cache).copy(), None if scales is None else base_of(scales).copy()
    run(backend, k, cache, slots, scales, k_dtype, **kwargs)
    np.testing.assert_array_equal(cache.view(np.uint8), want_cache.view(np.uint8))
    if scales is not None:
        np.testing.assert_array_equal(scales.view(np.uint8), want_scales.view(np.uint8))
    # the padding between blocks of a view: untouched
    if case.block_pad:
        per_block = cache[0].size
        np.testing.assert_array_equal(base_of(cache).reshape(case.num_blocks, -1)[:, per_block:],
                                      cache_base.reshape(case.num_blocks, -1)[:, per_block:])
        if scales is not None:
            per_block = scales[0].size
            np.testing.assert_array_equal(base_of(scales).reshape(case.num_blocks, -1)[:, per_block:],
                                          scale_base.reshape(case.num_blocks, -1)[:, per_block:])


@pytest.mark.parametrize("backend", ["cpu", "emu"])
@pytest.mark.parametrize("slot_dtype", SLOT_DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("k_dtype", K_DTYPES)
@pytest.mark.parametrize("case", SPLIT, ids=str)
def test_split_matches_reference_exactly(backend, case, k_dtype, slot_dtype):
    check(backend, case, k_dtype, slot_dtype)


@pytest.mark.parametrize("slot_dtype", SLOT_DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("k_dtype", K_DTYPES)
@pytest.mark.parametrize("case", FUSED, ids=str)
def test_fused_matches_reference_exactly(case, k_dtype, slot_dtype):
    check("cpu", case, k_dtype, slot_dtype)


def exchange_bytes(cores: int) -> int:
    """GM bytes of the check exchange: every core reads word 0 of every core's slot and writes its own."""
    return cores * cores * 8 + cores * 8 if cores > 1 else 0


@pytest.mark.parametrize("soc", ["Ascend910B2", "Ascend910B4"])
@pytest.mark.parametrize("tokens", [1, 47, 48, 49, 700])
def test_emulator_presets_and_token_counts(soc, tokens):
    """Tokens split over at most 48 or 40 cores, with and without a remainder: a launch of the
    fewest cores for its longest share, whose check exchange is at most 1/40 of the bytes the op
    must move (bfloat16 k, int8 codes, float16 scales, int32 slots)."""
    from ikq_cases import Case

    case = Case(tokens, tokens, 128, 64, tokens // 16 + 2, 16, padding=tokens // 10)
    k, cache, slots, scales, kwargs = make(case, "bfloat16", np.int32, seed=tokens)
    want_cache, want_scales = reference.indexer_k_quant_and_cache(k, cache, slots, scales, **kwargs)
    report = run("emu", k, cache, slots, scales, "bfloat16", soc=soc, **kwargs)
    np.testing.assert_array_equal(cache, want_cache)
    np.testing.assert_array_equal(scales.view(np.uint16), want_scales.view(np.uint16))
    cores = report["block_dim"]
    assert cores <= fewest_cores(tokens, 48 if soc == "Ascend910B2" else 40)
    assert cores == fewest_cores(tokens, cores)
    assert exchange_bytes(cores) <= tokens * (128 * 2 + 128 + 2 * 2 + 4) // 40


@pytest.mark.parametrize("soc,tokens,cores", [("Ascend910B2", 16, 1), ("Ascend910B2", 256, 16),
                                              ("Ascend910B2", 4096, 48), ("Ascend910B4", 4096, 40)])
def test_core_count_of_the_bench_shapes(soc, tokens, cores):
    """The bench's shapes (D = qbs = 128, bfloat16 k, float16 scales, int64 slots): one core at
    T = 16 (faster than 16: no SyncAll, and no exchange), 16 at T = 256 (the most whose exchange
    fits 1/40 of the minimum bytes; 43 read 15 KB of codes), every core at T = 4096."""
    from ikq_cases import Case

    case = Case(tokens, tokens, 128, 128, tokens // 64 + 2, 64, padding=tokens // 16)
    k, cache, slots, scales, kwargs = make(case, "bfloat16", np.int64, seed=3)
    report = run("emu", k, cache, slots, scales, "bfloat16", soc=soc, **kwargs)
    want_cache, _ = reference.indexer_k_quant_and_cache(k, cache.copy(), slots, scales.copy(), **kwargs)
    assert report["block_dim"] == cores
    np.testing.assert_array_equal(cache, want_cache)


def test_every_e4m3fn_code_round_trips():
    """The reference's encode is the inverse of its decode on every finite code, -0.0 included."""
    codes = np.array([c for c in range(256) if c & 0x7F != 0x7F], dtype=np.uint8)
    np.testing.assert_array_equal(reference.encode_e4m3fn(reference.decode_e4m3fn(codes)), codes)


@pytest.mark.parametrize("padding", [0, 20])
def test_emulator_traffic_is_the_minimum(padding):
    """GM bytes: every written token's row of k read once (a padding token's row is not read:
    one DMA per run of written tokens), codes and scales written once per written token, one slot
    read per token; plus the check phase: word 0 of each core's check slot written and word 0 of
    every core's slot read by every core (8 bytes per slot)."""
    from ikq_cases import Case

    case = Case(1000, 1000, 128, 64, 70, 16, padding=padding)
    k, cache, slots, scales, kwargs = make(case, "bfloat16", np.int64, seed=4)
    report = run("emu", k, cache, slots, scales, "bfloat16", order="in_order", **kwargs)
    written = int((slots >= 0).sum())
    cores = report["block_dim"]
    totals = report["totals"]
    assert totals["gm_write_bytes"] == written * (128 + 2 * 2) + cores * 8
    assert cores > 1
    assert totals["gm_read_bytes"] == written * 128 * 2 + 1000 * 8 + cores * cores * 8
    assert totals["gm_scalar_reads"] == 0


@pytest.mark.parametrize("backend", ["cpu", "emu"])
@pytest.mark.parametrize("scale_dtype", [np.float16, np.float32])
def test_ties_round_to_even_and_tiny_scales(backend, scale_dtype):
    """Rows whose amax is 127 (sc = 1): x / sc on every half-integer tie rounds to even; a row of
    tiny values (its float16 scale subnormal) and a zero row (sc = 1)."""
    ties = np.arange(-126.5, 127.0, 1.0, dtype=np.float32)            # 254 ties
    k = np.zeros((4, 256), np.float32)
    k[0, :254], k[0, 254:] = ties, [127.0, -127.0]
    k[1, :254], k[1, 254:] = ties[::-1], [-127.0, 127.0]
    k[2] = np.linspace(-3e-5, 3e-5, 256, dtype=np.float32)             # sc ~ 2.4e-7: a float16 subnormal
    cache = np.full((2, 4, 256), 9, np.int8)
    scales = np.full((2, 4, 1), 5, scale_dtype)
    slots = np.array([1, 2, 5, 7], np.int32)
    want_cache, want_scales = reference.indexer_k_quant_and_cache(k, cache, slots, scales, quant_block_size=256)
    assert list(want_cache[0, 1, [0, 1, 126, 127, 128, 254]]) == [-126, -126, 0, 0, 2, 127]  # -126.5 -125.5 -0.5 0.5 1.5 127
    indexer_k_quant_and_cache(k, cache, slots, k_scale_cache=scales, quant_block_size=256, backend=backend)
    np.testing.assert_array_equal(cache, want_cache)
    np.testing.assert_array_equal(scales.view(np.uint8), want_scales.view(np.uint8))


def test_e4m3fn_encode_matches_ml_dtypes_on_every_boundary():
    """The reference's encode against a third implementation, ml_dtypes' float32 -> float8_e4m3fn
    (round to nearest even), on every code's value, every midpoint between neighbours (ties), one
    float32 ulp either side of them, and random values, all within [-448, 448] (ml_dtypes gives
    NaN beyond instead of saturating); -0.0 included."""
    import ml_dtypes

    values = reference.e4m3fn_values()
    mids = (values[:-1] + values[1:]) / 2
    points = np.concatenate([values, mids]).astype(np.float32)
    near = np.concatenate([points, np.nextafter(points, np.float32(np.inf)), np.nextafter(points, np.float32(0))])
    rng = np.random.default_rng(1)
    y = np.concatenate([near, -near, rng.uniform(-448, 448, 20000).astype(np.float32), [-0.0]]).astype(np.float32)
    y = y[np.abs(y) <= 448]
    want = y.astype(ml_dtypes.float8_e4m3fn).view(np.uint8)
    np.testing.assert_array_equal(reference.encode_e4m3fn(y), want)


def test_cpu_fp8_encode_on_every_boundary():
    """The CPU kernel's E4M3FN encode on the same boundary values: rows of 128 float32 whose amax
    is 448 (sc = 1 exactly), so the codes are encode(x)."""
    values = reference.e4m3fn_values()
    mids = (values[:-1] + values[1:]) / 2
    points = np.concatenate([values, mids]).astype(np.float32)
    near = np.concatenate([points, np.nextafter(points, np.float32(np.inf)), np.nextafter(points, np.float32(0))])
    y = np.concatenate([near, -near, [-0.0]]).astype(np.float32)
    y = y[np.abs(y) <= 448]
    rows = -(-len(y) // 127)
    k = np.zeros((rows, 128), np.float32)
    k[:, 0] = 448.0
    body = np.zeros(rows * 127, np.float32)
    body[: len(y)] = y
    k[:, 1:] = body.reshape(rows, 127)
    cache = np.zeros((rows // 4 + 1, 4, 128 + 4), np.uint8)
    slots = np.arange(rows, dtype=np.int64)
    want, _ = reference.indexer_k_quant_and_cache(k, cache, slots)
    indexer_k_quant_and_cache(k, cache, slots, backend="cpu")
    np.testing.assert_array_equal(cache, want)
    codes = cache.reshape(cache.shape[0], -1)[:, : 4 * 128].reshape(-1, 128)[:rows, 1:].reshape(-1)[: len(y)]
    np.testing.assert_array_equal(codes, reference.encode_e4m3fn(y))
