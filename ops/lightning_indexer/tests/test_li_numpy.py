"""Golden tests of the cpu backend on NumPy arrays against the float64 reference, with the
comparison rule of li_cases (the tolerance documented in the op README)."""
import numpy as np
import pytest

from ascend_ops.common.loader import load_native
from ascend_ops.lightning_indexer import lightning_indexer, reference

from li_cases import DTYPES, K_LAYOUTS, MODES, Q_LAYOUTS, SHAPES, Shape, assert_topk, compress, make, reference_rows


def run(args, dtype, **kwargs):
    return lightning_indexer(dtype="bfloat16" if dtype == "bfloat16" else None, **args, **kwargs)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("layout_key", K_LAYOUTS)
@pytest.mark.parametrize("layout_query", Q_LAYOUTS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_matches_reference(shape, dtype, layout_query, layout_key, mode):
    length_dtype = np.int64 if (len(shape.s1) + mode) % 2 else np.int32
    args = make(shape, layout_query, layout_key, dtype, seed=len(shape.s2) + mode, length_dtype=length_dtype)
    idx, val = run(args, dtype, sparse_mode=mode, return_value=True)
    assert idx.dtype == np.int32 and val.dtype == np.float32
    assert_topk(idx, val, reference_rows(args, dtype, mode), shape.k)


# DeepSeek-V4's compressed keys: (shape, cmp_ratio, residuals or None for random). act_s2 counts
# compressed rows; the "from-scratch" prefills have act_s2 * r + residual = act_s1 (the original
# keys are the query's own tokens), so their first rows see no compressed row (all -1).
CMP_CASES = [
    (Shape((1, 1, 1, 1), (37, 200, 5, 0), 8, 32, 64, name="decode-r=4"), 4, None),
    (Shape((2, 2, 1), (90, 3, 1), 4, 16, 40, block_size=8, name="mtp-r=2"), 2, None),
    (Shape((37, 9), (9, 2), 4, 16, 8, block_size=4, name="prefill-from-scratch-r=4"), 4, (1, 1)),
    (Shape((300, 130), (2, 1), 3, 16, 4, block_size=2, name="prefill-from-scratch-r=128"), 128, (44, 2)),
    (Shape((5, 3), (70, 4), 6, 24, 100, n2=2, block_size=8, name="gqa-r=128"), 128, None),
    (Shape((20, 11), (150, 90), 8, 16, 32, block_size=16, name="prefill-r=1"), 1, None),
]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("layout_key", K_LAYOUTS)
@pytest.mark.parametrize("layout_query", Q_LAYOUTS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", CMP_CASES, ids=lambda c: str(c[0]))
def test_compressed_keys_match_reference(case, dtype, layout_query, layout_key, mode):
    shape, ratio, residual = case
    args = make(shape, layout_query, layout_key, dtype, seed=ratio + mode)
    compress(args, ratio, residual, seed=ratio, dtype=np.int64 if mode else np.int32)
    idx, val = run(args, dtype, sparse_mode=mode, return_value=True)
    assert_topk(idx, val, reference_rows(args, dtype, mode), shape.k)


def test_rows_seeing_no_compressed_row_are_all_minus_one():
    """Prefill from scratch with r = 4, residual 1 (13 original tokens = 13 query rows, 3
    compressed rows): row p sees floor((p + 1) / 4) rows, so rows 0-2 see none."""
    shape = Shape((13,), (3,), 4, 16, 8, block_size=4, extra_q=0)
    args = compress(make(shape, "TND", "PA_BSND", "float16"), 4, [1])
    idx, val = run(args, "float16", sparse_mode=3, return_value=True)
    assert (idx[:3] == -1).all() and np.isneginf(val[:3]).all()
    assert [int((row[0] >= 0).sum()) for row in idx] == [(p + 1) // 4 for p in range(13)]
    assert_topk(idx, val, reference_rows(args, "float16", 3), shape.k)


@pytest.mark.parametrize("ratio", [2, 4, 128])
def test_sparse_mode_0_ignores_the_ratio(ratio):
    args = make(SHAPES[1], "BSND", "PA_BSND", "bfloat16")
    want = run(args, "bfloat16", sparse_mode=0, return_value=True)
    for residual in (None, [ratio - 1, 0]):
        got = run(compress(dict(args), ratio, residual), "bfloat16", sparse_mode=0, return_value=True)
        assert got[0].tobytes() == want[0].tobytes() and got[1].tobytes() == want[1].tobytes()


def test_ratio_1_is_the_uncompressed_rule():
    """cmp_ratio=1 given explicitly is the default, byte for byte."""
    for shape in SHAPES:
        args = make(shape, "BSND", "PA_BSND", "float16")
        want = run(args, "float16", return_value=True)
        got = run(args, "float16", return_value=True, cmp_ratio=1, cmp_residual_k=None)
        assert got[0].tobytes() == want[0].tobytes() and got[1].tobytes() == want[1].tobytes()


def test_the_rule_is_the_reference_rule():
    """The reference's visible count (absolute position t, j < (t + 1) // r) against the op's
    indices counted per row, over every residual of r = 4 and r = 3 (floor of negatives)."""
    for ratio in (3, 4):
        for residual in range(ratio):
            shape = Shape((7,), (2,), 2, 8, 16, block_size=2, extra_q=0)
            args = compress(make(shape, "BSND", "BSND", "float32"), ratio, [residual])
            idx, _ = run(args, "float32", sparse_mode=3)
            got = [int((row[0] >= 0).sum()) for row in idx[0]]
            assert got == [reference.visible_keys(3, 7, 2, p, ratio, residual) for p in range(7)]


@pytest.mark.parametrize("dtype", DTYPES)
def test_indices_without_values(dtype):
    args = make(SHAPES[0], "BSND", "PA_BSND", dtype)
    idx, val = run(args, dtype)
    assert val is None
    idx2, _ = run(args, dtype, return_value=True)
    np.testing.assert_array_equal(idx, idx2)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_float32_weights_beside_half_inputs(dtype):
    args = make(SHAPES[1], "TND", "BSND", dtype, weights_fp32=True)
    assert args["weights"].dtype == np.float32
    idx, val = run(args, dtype, sparse_mode=3, return_value=True)
    assert_topk(idx, val, reference_rows(args, dtype, 3), SHAPES[1].k)


@pytest.mark.parametrize("layout_key", K_LAYOUTS)
@pytest.mark.parametrize("mode", MODES)
def test_ties_go_to_the_smaller_index_exactly(layout_key, mode):
    """Keys drawn from a pool of 4 vectors: scores tie exactly, in float64 and in the kernel
    (every key is scored by the same operations), so the indices must equal the reference's."""
    shape = Shape((3, 2), (300, 90), 8, 64, 120, block_size=32)
    args = make(shape, "BSND", layout_key, "bfloat16", key_pool=4)
    idx, val = run(args, "bfloat16", sparse_mode=mode, return_value=True)
    assert_topk(idx, val, reference_rows(args, "bfloat16", mode), shape.k, exact=True)


@pytest.mark.parametrize("key_pool", [None, 5])
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_long_rows_prune_by_sampled_pivots(dtype, key_pool):
    """sparse_count 600 over up to 6000 keys: candidate buffers of 2K >= 1024, so the running
    top-k prunes by sampled pivots and radix-sorts; with keys from a pool, ties are exact."""
    shape = Shape((2, 1), (6000, 2500), 8, 64, 600, block_size=64)
    args = make(shape, "BSND", "PA_BSND", dtype, seed=3, key_pool=key_pool)
    for mode in MODES:
        idx, val = run(args, dtype, sparse_mode=mode, return_value=True)
        assert_topk(idx, val, reference_rows(args, dtype, mode), shape.k, exact=key_pool is not None)


def test_default_arguments_match_the_spec():
    """sparse_count 2048, sparse_mode 3, layout BSND / PA_BSND."""
    shape = Shape((2, 3), (2100, 700), 4, 32, 2048, block_size=128)
    args = make(shape, "BSND", "PA_BSND", "float16")
    for name in ("layout_query", "layout_key", "sparse_count"):
        args.pop(name)
    idx, val = lightning_indexer(**args, return_value=True)
    assert idx.shape == (2, 4, 1, 2048)
    assert_topk(idx, val, reference_rows(dict(args, sparse_count=2048), "float16", 3), 2048)


def test_bsnd_lengths_default_to_the_full_tensors():
    rng = np.random.default_rng(5)
    q = rng.standard_normal((2, 3, 4, 16)).astype(np.float32)
    k = rng.standard_normal((2, 10, 1, 16)).astype(np.float32)
    w = rng.standard_normal((2, 3, 4)).astype(np.float32)
    for mode in MODES:
        idx, val = lightning_indexer(q, k, w, layout_key="BSND", sparse_count=12, sparse_mode=mode, return_value=True)
        want_idx, want_val = reference.lightning_indexer(q, k, w, layout_key="BSND", sparse_count=12, sparse_mode=mode)
        np.testing.assert_array_equal(idx, want_idx)
        np.testing.assert_allclose(val, want_val, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_result_does_not_depend_on_the_thread_count(threads):
    core = load_native("ascend_ops.lightning_indexer", "core")
    args = make(SHAPES[5], "TND", "PA_BSND", "bfloat16", seed=9)
    base = run(args, "bfloat16", return_value=True)
    old = core.num_threads()
    try:
        core.set_num_threads(threads)
        got = run(args, "bfloat16", return_value=True)
        assert core.cpu_plan(dtype="bfloat16", **args)["threads"] == threads
    finally:
        core.set_num_threads(old)
    np.testing.assert_array_equal(got[0], base[0])
    np.testing.assert_array_equal(got[1], base[1])


def test_cpu_plan_is_cached_and_names_the_isa():
    core = load_native("ascend_ops.lightning_indexer", "core")
    args = make(SHAPES[0], "BSND", "PA_BSND", "float16")
    plan = core.cpu_plan(**args)
    assert plan["key_tile"] % 16 == 0 and plan["key_chunk"] % plan["key_tile"] == 0
    assert plan["isa"] == core.CPU_ISA and core.CPU_ISA in ("avx512", "avx2", "baseline")
    assert plan["bf16_kernel"] is False  # float16: the transposing float32 path


_ISA_SCRIPT = """
import sys
sys.path.insert(0, {tests!r})
from ascend_ops.common.loader import load_native
from li_cases import SHAPES, Shape, assert_topk, make, reference_rows
core = load_native("ascend_ops.lightning_indexer", "core")
assert core.CPU_ISA == {isa!r}, core.CPU_ISA
assert core.CPU_BF16_KERNEL is False
shapes = SHAPES + [Shape((1,), (300,), 64, 128, 64, block_size=16, name="N1=64-D=128")]
for shape in shapes:
    for dtype in ("float16", "bfloat16", "float32"):
        args = make(shape, "BSND", "PA_BSND", dtype, seed=3)
        idx, val = core.run_cpu(**args, sparse_mode=3, return_value=True,
                                dtype="bfloat16" if dtype == "bfloat16" else "")
        assert_topk(idx, val, reference_rows(args, dtype, 3), shape.k)
print("ok", len(shapes))
"""


@pytest.mark.parametrize("isa", ["baseline", "avx2"])
def test_every_micro_kernel_build_matches_the_reference(isa):
    """ASCEND_OPS_CPU_ISA caps the ISA the CPU kernels may use, so each build of the float32
    micro-kernel (and not only this CPU's best) is checked against the reference."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    core = load_native("ascend_ops.lightning_indexer", "core")
    if isa == "avx2" and core.CPU_ISA == "baseline":
        pytest.skip("this CPU has no AVX2")
    script = _ISA_SCRIPT.format(tests=str(Path(__file__).parent), isa=isa)
    env = dict(os.environ, ASCEND_OPS_CPU_ISA=isa)
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.startswith("ok")


def test_bf16_kernel_runs_where_the_cpu_has_it():
    """bfloat16 with an even D takes the AVX512_BF16 key-major kernel exactly where the CPU
    has the instructions (_core.CPU_BF16_KERNEL); an odd D never does."""
    core = load_native("ascend_ops.lightning_indexer", "core")
    even = core.cpu_plan(dtype="bfloat16", **make(SHAPES[0], "BSND", "PA_BSND", "bfloat16"))
    odd = core.cpu_plan(dtype="bfloat16", **make(Shape((1,), (40,), 4, 15, 8), "BSND", "PA_BSND", "bfloat16"))
    assert even["bf16_kernel"] is bool(core.CPU_BF16_KERNEL)
    assert odd["bf16_kernel"] is False
    assert even["key_chunk"] % even["key_tile"] == 0 and even["key_tile"] % 16 == 0


@pytest.mark.parametrize("layout_key", ["PA_BSND", "BSND"])
def test_ml_dtypes_bfloat16_arrays_need_no_dtype(layout_key):
    """bfloat16 as ml_dtypes.bfloat16 arrays: the results of uint16 bits with dtype="bfloat16"."""
    ml_dtypes = pytest.importorskip("ml_dtypes")
    args = make(SHAPES[0], "BSND", layout_key, "bfloat16", seed=5)
    want_idx, want_val = run(args, "bfloat16", return_value=True)
    as_bf16 = {k: (v.view(ml_dtypes.bfloat16) if isinstance(v, np.ndarray) and v.dtype == np.uint16 else v)
               for k, v in args.items()}
    assert sum(isinstance(v, np.ndarray) and v.dtype == ml_dtypes.bfloat16 for v in as_bf16.values()) >= 2
    idx, val = lightning_indexer(**as_bf16, return_value=True)
    np.testing.assert_array_equal(idx, want_idx)
    np.testing.assert_array_equal(val, want_val)
