"""The NPU host path (run_npu: common's npu::run_kernel over op.h) on common's simulated Ascend
runtime: golden results (split int8), a steady-state call makes 0 synchronisations, 0 copies and
0 allocations, the kernel's errors raise at check_errors() / the next call with the caches
unchanged, and the fused layout is refused before anything is queued."""
import numpy as np
import pytest

from ascend_ops.common import check_errors
from ascend_ops.devkit import ascend_sim as sim
from ascend_ops.indexer_k_quant_and_cache import _core, indexer_k_quant_and_cache, reference

from ikq_cases import Case, K_DTYPES, SLOT_DTYPES, SPLIT, make

pytestmark = pytest.mark.skipif(not getattr(_core, "HAS_NPU_SIM", False),
                                reason="built without AOP_WITH_NPU_SIM (./dev builds it)")

CONTIGUOUS = [c for c in SPLIT if c.k_pad == 0 and c.block_pad == 0]


@pytest.fixture(scope="module")
def stream():
    s = sim.Stream()
    yield s
    s.destroy()


def on_device(k, cache, slots, scales):
    return [sim.to_device(a) for a in (k, cache, slots, scales)]


def call(dev, stream, k_dtype, kwargs, **extra):
    k, cache, slots, scales = dev
    _core.run_npu_sim(k.array, cache.array, slots.array, k_scale_cache=scales.array, stream=stream.handle,
                      dtype="bfloat16" if k_dtype == "bfloat16" else "", **kwargs, **extra)


@pytest.mark.parametrize("slot_dtype", SLOT_DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("k_dtype", K_DTYPES)
@pytest.mark.parametrize("case", CONTIGUOUS, ids=str)
def test_matches_reference_exactly(stream, case, k_dtype, slot_dtype):
    k, cache, slots, scales, kwargs = make(case, k_dtype, slot_dtype)
    want_cache, want_scales = reference.indexer_k_quant_and_cache(k, cache, slots, scales, **kwargs)
    dev = on_device(k, cache, slots, scales)
    call(dev, stream, k_dtype, kwargs)
    stream.synchronize()
    np.testing.assert_array_equal(dev[1].numpy(), want_cache)
    np.testing.assert_array_equal(dev[3].numpy().view(np.uint8), want_scales.view(np.uint8))


def test_steady_state_call_makes_no_sync_copy_or_allocation(stream):
    k, cache, slots, scales, kwargs = make(SPLIT[2], "float16", np.int32)
    dev = on_device(k, cache, slots, scales)
    call(dev, stream, "float16", kwargs)  # the first call of a configuration copies its tiling once
    stream.synchronize()
    before = sim.counters()
    for _ in range(5):
        call(dev, stream, "float16", kwargs)
    per_5 = sim.counters() - before
    assert per_5.launches == 5
    assert (per_5.synchronizations, per_5.h2d_copies, per_5.d2h_copies, per_5.d2d_copies,
            per_5.allocations, per_5.pageable_refused) == (0, 0, 0, 0, 0, 0)
    stream.synchronize()


def bad_case(kind):
    """A case the kernel's check refuses, and the exception the synchronous check (cpu) raises."""
    k, cache, slots, scales, kwargs = make(Case(30, 30, 128, 64, 4, 8), "bfloat16", np.int64, seed=5)
    if kind == "slot":
        slots[13] = 32
    else:
        k[17, 90] = 0x4B18  # bfloat16 9961472: its float16 scale overflows
        slots[17] = 17 if slots[17] < 0 else slots[17]
    with pytest.raises(IndexError if kind == "slot" else ValueError) as sync_error:
        indexer_k_quant_and_cache(k, cache.copy(), slots, k_scale_cache=scales.copy(), backend="cpu",
                                  dtype="bfloat16", **kwargs)
    return (k, cache, slots, scales), kwargs, sync_error.type, str(sync_error.value)


@pytest.mark.parametrize("kind", ["slot", "overflow"])
def test_kernel_error_raises_at_check_errors_with_the_caches_unchanged(stream, kind):
    host, kwargs, exc, message = bad_case(kind)
    dev = on_device(*host)
    call(dev, stream, "bfloat16", kwargs)  # queued: nothing raised, nothing synchronised
    with pytest.raises(exc) as raised:
        check_errors()
    assert str(raised.value) == message
    np.testing.assert_array_equal(dev[1].numpy(), host[1])
    np.testing.assert_array_equal(dev[3].numpy(), host[3])
    check_errors()  # raised once: the record was cleared


def test_kernel_error_raises_at_the_next_call(stream):
    host, kwargs, exc, message = bad_case("overflow")
    dev = on_device(*host)
    call(dev, stream, "bfloat16", kwargs)
    stream.synchronize()
    good, good_kwargs, _, _ = bad_case("slot")
    good[2][13] = 3
    with pytest.raises(exc) as raised:
        call(on_device(*good), stream, "bfloat16", good_kwargs)
    assert str(raised.value) == message
    check_errors()


def test_fused_layout_is_refused_before_launch(stream):
    k, cache, slots, _, kwargs = make(Case(4, 4, 128, 128, 2, 4, layout="fused"), "float16", np.int32)
    dev = [sim.to_device(a) for a in (k, cache, slots)]
    before = sim.counters()
    with pytest.raises(ValueError, match="split int8 layout only"):
        _core.run_npu_sim(dev[0].array, dev[1].array, dev[2].array, stream=stream.handle, **kwargs)
    assert (sim.counters() - before).launches == 0
    np.testing.assert_array_equal(dev[1].numpy(), cache)
