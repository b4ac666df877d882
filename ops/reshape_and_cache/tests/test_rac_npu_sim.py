"""The NPU host path (run_npu: common's npu::run_kernel over op.h) on common's simulated Ascend runtime: golden results,
and what a steady-state call costs the host: 0 synchronisations, 0 copies, 0 allocations."""
import numpy as np
import pytest

from ascend_ops.devkit import ascend_sim as sim
from ascend_ops.common import check_errors
from ascend_ops.reshape_and_cache import _core, reference

from rac_cases import DTYPES, SHAPES, SLOT_DTYPES, make

pytestmark = pytest.mark.skipif(not getattr(_core, "HAS_NPU_SIM", False),
                                reason="built without AOP_WITH_NPU_SIM (./dev builds it)")


@pytest.fixture(scope="module")
def stream():
    s = sim.Stream()
    yield s
    s.destroy()


def on_device(key, value, key_cache, value_cache, slots):
    return [sim.to_device(a) for a in (key, value, key_cache, value_cache, slots)]


def call(dev, stream, dtype):
    key, value, key_cache, value_cache, slots = dev
    _core.run_npu_sim(key.array, value.array, key_cache.array, value_cache.array, slots.array,
                      stream=stream.handle, dtype="bfloat16" if dtype == "bfloat16" else "")


@pytest.mark.parametrize("slot_dtype", SLOT_DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_matches_reference_exactly(stream, shape, dtype, slot_dtype):
    host = make(shape, dtype, slot_dtype)
    want_key, want_value = reference.reshape_and_cache(*host)
    dev = on_device(*host)
    call(dev, stream, dtype)
    stream.synchronize()
    np.testing.assert_array_equal(dev[2].numpy().view(np.uint8), want_key.view(np.uint8))
    np.testing.assert_array_equal(dev[3].numpy().view(np.uint8), want_value.view(np.uint8))


def test_steady_state_call_makes_no_sync_copy_or_allocation(stream):
    host = make(SHAPES[2], "float16", np.int32)
    dev = on_device(*host)
    call(dev, stream, "float16")  # the first call of a configuration copies its tiling once
    stream.synchronize()
    before = sim.counters()
    for _ in range(5):
        call(dev, stream, "float16")
    per_5 = sim.counters() - before
    assert per_5.launches == 5
    assert (per_5.synchronizations, per_5.h2d_copies, per_5.d2h_copies, per_5.d2d_copies,
            per_5.allocations, per_5.pageable_refused) == (0, 0, 0, 0, 0, 0)
    stream.synchronize()


def test_first_call_of_a_configuration_copies_its_tiling_once(stream):
    host = make(SHAPES[1], "float32", np.int64, seed=7)
    dev = on_device(*host)
    before = sim.counters()
    call(dev, stream, "float32")
    first = sim.counters() - before
    assert first.synchronizations == 0 and first.d2h_copies == 0
    assert first.h2d_copies <= 1  # 0 when an earlier test already ran this configuration
    stream.synchronize()


def bad_slot_case():
    """A case whose slot_mapping holds a slot beyond the cache, and the exception the
    synchronous check (the cpu backend) raises for it."""
    from ascend_ops.reshape_and_cache import reshape_and_cache

    host = make(SHAPES[2], "float16", np.int32, seed=5)
    host[4][3] = SHAPES[2].num_blocks * SHAPES[2].block_size + 5
    with pytest.raises(IndexError) as sync_error:
        reshape_and_cache(*(a.copy() for a in host), backend="cpu")
    return host, str(sync_error.value)


def test_bad_slot_raises_at_check_errors_with_the_caches_unchanged(stream):
    host, message = bad_slot_case()
    dev = on_device(*host)
    call(dev, stream, "float16")  # queued: nothing raised, nothing synchronised
    with pytest.raises(IndexError) as raised:
        check_errors()  # synchronises the streams the op used, then raises the kernel's error
    assert str(raised.value) == message
    np.testing.assert_array_equal(dev[2].numpy(), host[2])
    np.testing.assert_array_equal(dev[3].numpy(), host[3])
    check_errors()  # raised once: the record was cleared


def test_bad_slot_raises_at_the_next_call(stream):
    host, message = bad_slot_case()
    dev = on_device(*host)
    call(dev, stream, "float16")
    stream.synchronize()  # the kernel has run and recorded the error: the next call raises it
    good = on_device(*make(SHAPES[2], "float16", np.int32, seed=6))
    with pytest.raises(IndexError) as raised:
        call(good, stream, "float16")
    assert str(raised.value) == message
    check_errors()


def test_sync_checks_switch_raises_in_the_call(stream, monkeypatch):
    host, message = bad_slot_case()
    dev = on_device(*host)
    monkeypatch.setenv("ASCEND_OPS_NPU_SYNC_CHECKS", "1")
    before = sim.counters()
    with pytest.raises(IndexError) as raised:
        call(dev, stream, "float16")
    assert str(raised.value) == message
    assert (sim.counters() - before).synchronizations == 1
    np.testing.assert_array_equal(dev[2].numpy(), host[2])


def test_through_a_task_queue_like_torch_npu(stream):
    """queued=True: the device work goes through a stand-in of torch_npu's task queue (what
    torch_npu_context.hpp's OpCommand handler does): the call returns before anything is on the
    stream, makes no synchronisation, copy or allocation, and the result is golden once drained."""
    host = make(SHAPES[3], "bfloat16", np.int64, seed=11)
    want_key, want_value = reference.reshape_and_cache(*host)
    dev = on_device(*host)
    key, value, key_cache, value_cache, slots = dev
    run = lambda: _core.run_npu_sim(key.array, value.array, key_cache.array, value_cache.array,  # noqa: E731
                                    slots.array, stream=stream.handle, queued=True, dtype="bfloat16")
    run()  # first call of the configuration
    _core.drain_npu_sim_queue()
    stream.synchronize()
    before = sim.counters()
    run()
    per_call = sim.counters() - before
    assert (per_call.synchronizations, per_call.h2d_copies, per_call.allocations) == (0, 0, 0)
    _core.drain_npu_sim_queue()
    stream.synchronize()
    np.testing.assert_array_equal(key_cache.numpy().view(np.uint8), want_key.view(np.uint8))
    np.testing.assert_array_equal(value_cache.numpy().view(np.uint8), want_value.view(np.uint8))


def test_check_errors_drains_the_task_queue_first(stream):
    host, message = bad_slot_case()
    dev = on_device(*host)
    _core.run_npu_sim(*(d.array for d in dev), stream=stream.handle, queued=True)
    with pytest.raises(IndexError) as raised:
        check_errors()  # drains the queue (its poller), synchronises, raises
    assert str(raised.value) == message
    np.testing.assert_array_equal(dev[2].numpy(), host[2])


# --- kv_cache_dtype "int8" on the npu path (fp8 is refused there: no fp8 on Atlas A2 / A3) -------
def quant_case(seed=3):
    from rac_quant_cases import make_quant

    key, value, kc, vc, slots, kw = make_quant(SHAPES[3], "float16", "int8", np.int64, seed=seed,
                                               granularity="channel_flat", with_offset=True)
    want = reference.reshape_and_cache(key, value, kc, vc, slots, **kw)
    dev = [sim.to_device(np.ascontiguousarray(a)) for a in (key, value, kc, vc, slots)]
    scales = {k: sim.to_device(v) for k, v in kw.items() if k != "kv_cache_dtype"}
    return dev, scales, want, (kc, vc)


def call_quant(dev, scales, stream):
    _core.run_npu_sim(*(d.array for d in dev), kv_cache_dtype="int8", stream=stream.handle,
                      **{k: v.array for k, v in scales.items()})


def test_int8_matches_reference_with_no_sync(stream):
    dev, scales, want, _ = quant_case()
    call_quant(dev, scales, stream)  # the first call of the configuration
    stream.synchronize()
    before = sim.counters()
    call_quant(dev, scales, stream)
    per_call = sim.counters() - before
    assert (per_call.synchronizations, per_call.d2h_copies, per_call.allocations) == (0, 0, 0)
    stream.synchronize()
    np.testing.assert_array_equal(dev[2].numpy(), want[0])
    np.testing.assert_array_equal(dev[3].numpy(), want[1])


def test_bad_scale_is_found_in_the_kernel_with_the_caches_unchanged(stream):
    """The npu path reads no data on the host: a bad scale is the kernel's deferred error, the
    same exception and message as the cpu backend's synchronous check."""
    from ascend_ops.reshape_and_cache import reshape_and_cache

    dev, scales, _, host_caches = quant_case(seed=4)
    bad = scales["v_scale"].numpy().copy()
    bad[17] = -np.inf
    scales["v_scale"] = sim.to_device(bad)
    host = [d.numpy().copy() for d in dev]
    with pytest.raises(ValueError) as sync_error:
        reshape_and_cache(*host, kv_cache_dtype="int8", **{k: v.numpy() for k, v in scales.items()}, backend="cpu")
    call_quant(dev, scales, stream)  # queued: nothing raised
    with pytest.raises(ValueError) as raised:
        check_errors()
    assert str(raised.value) == str(sync_error.value)
    assert "v_scale[17]" in str(raised.value)
    np.testing.assert_array_equal(dev[2].numpy(), host_caches[0])
    np.testing.assert_array_equal(dev[3].numpy(), host_caches[1])
    check_errors()


def test_fp8_is_refused_on_the_npu_path(stream):
    dev, scales, _, host_caches = quant_case(seed=5)
    dev[2], dev[3] = (sim.to_device(c.view(np.uint8)) for c in host_caches)  # fp8 bytes
    with pytest.raises(ValueError, match="kv_cache_dtype 'fp8_e4m3' runs on the cpu backend only"):
        _core.run_npu_sim(*(d.array for d in dev), kv_cache_dtype="fp8", stream=stream.handle,
                          k_scale=scales["k_scale"].array, v_scale=scales["v_scale"].array)
    np.testing.assert_array_equal(dev[2].numpy(), host_caches[0].view(np.uint8))
