"""The reliability tooling itself: the fuzz oracle, the figures, the soak and thread harnesses.

Each must be able to fail: a write to a guard byte, a wrong exception, a message without the
op's name, a leaking workload, a failing thread are all caught here.
"""
from __future__ import annotations

import json
import mmap
import threading

import numpy as np
import pytest

import ascend_ops.common as runtime

from ascend_ops.devkit import reliability, soak, stress
from ascend_ops.devkit.fuzzing import (GUARD_BYTES, Fault, assert_bytes, check_call, examples, expected_bytes,
                                       guarded, locate, owners, raw_bytes)


# --- fuzz oracle ---------------------------------------------------------------------------
def test_guarded_array_sits_between_random_guards():
    rng = np.random.default_rng(0)
    a = guarded((3, 2, 4), np.float16, rng, row_pad=5)
    (root,) = owners(a)
    assert a.shape == (3, 2, 4) and a.strides == (2 * 13, 8, 2)
    index, start = locate([root], a[0])
    assert index == 0 and start >= GUARD_BYTES
    assert root.nbytes >= a.size * 2 + 2 * GUARD_BYTES + 3 * 5 * 2
    b = guarded((4,), np.int64, rng, values=np.arange(4))
    assert b.flags.c_contiguous and b.tolist() == [0, 1, 2, 3]


def test_expected_bytes_patch_only_the_written_view():
    rng = np.random.default_rng(1)
    out = guarded((2, 3), np.int32, rng)
    roots = owners(out)
    want = expected_bytes(roots, [(out, np.full((2, 3), 7))])
    out[...] = 7
    assert_bytes(roots, want)
    roots[0].view(np.uint8)[0] ^= 1  # a guard byte
    with pytest.raises(AssertionError, match="first at byte 0"):
        assert_bytes(roots, want)


def _op_writing(out, value, fail_with=None, message="toy_op: bad"):
    def call():
        if fail_with is not None:
            raise fail_with(message)
        out[...] = value
    return call


def test_check_call_accepts_a_valid_case_and_runs_the_check():
    out = guarded((4,), np.int32, np.random.default_rng(2))
    seen = []
    outcome, _ = check_call("toy_op", _op_writing(out, 3), buffers=owners(out), check=seen.append)
    assert outcome == "accepted" and seen == [None] and out.tolist() == [3] * 4


def test_check_call_rejects_when_a_planted_fault_is_not_raised():
    out = guarded((4,), np.int32, np.random.default_rng(3))
    with pytest.raises(AssertionError, match="planted shape .* but the call returned"):
        check_call("toy_op", _op_writing(out, 3), buffers=owners(out), faults=[Fault("shape", ValueError)])


def test_check_call_wants_the_documented_exception_class():
    out = guarded((4,), np.int32, np.random.default_rng(4))
    with pytest.raises(AssertionError, match="expected IndexError, got RuntimeError"):
        check_call("toy_op", _op_writing(out, 3, RuntimeError), buffers=owners(out),
                   faults=[Fault("slot", IndexError)])
    outcome, exc = check_call("toy_op", _op_writing(out, 3, IndexError), buffers=owners(out),
                              faults=[Fault("slot", IndexError), Fault("dtype", TypeError)])
    assert outcome == "rejected" and isinstance(exc, IndexError)


def test_check_call_wants_the_op_name_first_in_the_message():
    out = guarded((4,), np.int32, np.random.default_rng(5))
    with pytest.raises(AssertionError, match="does not start with 'toy_op:'"):
        check_call("toy_op", _op_writing(out, 3, ValueError, "bad shape"), buffers=owners(out),
                   faults=[Fault("shape", ValueError)])


def test_check_call_catches_a_write_before_the_error():
    out = guarded((4,), np.int32, np.random.default_rng(6))

    def half_done():
        out[0] = 123456
        raise ValueError("toy_op: too late")

    with pytest.raises(AssertionError, match="changed buffer 0"):
        check_call("toy_op", half_done, buffers=owners(out), faults=[Fault("x", ValueError)])


def test_check_call_reports_an_exception_on_a_valid_case():
    out = guarded((4,), np.int32, np.random.default_rng(7))
    with pytest.raises(AssertionError, match="no fault planted, yet the call raised ValueError"):
        check_call("toy_op", _op_writing(out, 3, ValueError), buffers=owners(out))


def test_raw_bytes_of_torch_bfloat16_matches_numpy_bits():
    torch = pytest.importorskip("torch")
    bits = np.array([0x3F80, 0xFFC1, 0x0000], np.uint16)
    assert raw_bytes(torch.from_numpy(bits).view(torch.bfloat16)) == bits.tobytes()


def test_examples_come_from_the_environment(monkeypatch):
    monkeypatch.setenv("AOP_FUZZ_EXAMPLES", "12")
    assert examples() == 12
    monkeypatch.setenv("AOP_FUZZ_EXAMPLES", "ten")
    with pytest.raises(ValueError, match="AOP_FUZZ_EXAMPLES"):
        examples()


# --- figures -------------------------------------------------------------------------------
def test_figures_are_added_across_processes_and_maxima_kept(tmp_path, monkeypatch):
    monkeypatch.setenv(reliability.ENV, str(tmp_path / "figures"))
    (tmp_path / "figures").mkdir()
    (tmp_path / "figures" / "fuzz-1.json").write_text(json.dumps({"op_a": {"cases": 5, "rejected": 2}}))
    (tmp_path / "figures" / "soak-1.json").write_text(json.dumps({"op_a": {"calls": 10, "rss_growth_bytes_max": 4096}}))
    (tmp_path / "figures" / "soak-2.json").write_text(json.dumps({"op_a": {"calls": 10, "rss_growth_bytes_max": 1024}}))
    reliability.record("fuzz", "op_a", cases=3, rejected=1)
    reliability.flush()
    got = reliability.collect(tmp_path / "figures")
    assert got["fuzz"]["op_a"] == {"cases": 8, "rejected": 3}
    assert got["soak"]["op_a"] == {"calls": 20, "rss_growth_bytes_max": 4096}
    (tmp_path / "sanitizer").mkdir()
    (tmp_path / "sanitizer" / "op_a.fuzz-asan.123").write_text("==1==ERROR: AddressSanitizer: heap-buffer-overflow")
    (tmp_path / "steps.tsv").write_text("fuzz\t0\t120\nsoak\t1\t30\n")
    text = reliability.table(tmp_path)
    assert "| op_a | 8 | 3 | 1 | n/a (not in place) | 20 | 4 KiB |" in text
    assert "| soak | FAILED (exit 1) | 0.5 |" in text


# --- soak ----------------------------------------------------------------------------------
def test_soak_passes_a_clean_workload_and_fails_a_leaking_one():
    clean = soak.soak("toy", lambda i: None, calls=2000, warmup=100)
    assert clean.passed and clean.calls == 2000
    hoard = []

    def leak(i):  # 1 MiB of fresh, touched anonymous pages every 100 calls: no allocator can reuse
        if i % 100 == 0:
            hoard.append(mmap.mmap(-1, 1 << 20))
            hoard[-1].write(b"x" * (1 << 20))

    leaky = soak.soak("toy", leak, calls=3000, warmup=100)
    assert not leaky.passed and leaky.rss_growth_max_bytes >= soak.RSS_LIMIT_BYTES


def test_soak_runs_the_golden_check_at_every_sample():
    calls = []
    result = soak.soak("toy", lambda i: None, calls=1000, warmup=100, check=lambda: calls.append(1), samples=10)
    assert result.checks == 10 and len(calls) == 11  # and once at the end of the warm-up


# --- threads -------------------------------------------------------------------------------
def test_run_threads_starts_all_together_and_reraises_a_failure():
    inside = threading.Semaphore(0)

    def work(t):
        inside.release()
        if t == 5:
            raise ValueError("boom")

    with pytest.raises(AssertionError, match=r"thread 5 of 8 failed \(1 failed\): ValueError: boom"):
        stress.run_threads(work, 8)


def test_small_caches_bound_and_restore_the_capacities():
    before = {c["name"]: c["capacity"] for c in runtime.cache_stats()}
    with stress.small_caches(3):
        now = stress.CacheCounters.now()
        assert {n: s["capacity"] for n, s in now.stats.items()} == {"tiling": 3, "operator": 3}
        now.check_consistent()
    after = {c["name"]: c["capacity"] for c in runtime.cache_stats()}
    assert after["tiling"] == before["tiling"] and after["operator"] == before["operator"]


def test_counters_that_do_not_add_up_are_caught():
    bad = stress.CacheCounters({"tiling": dict(capacity=2, size=2, hits=5, misses=3, inserts=3, evictions=0)})
    with pytest.raises(AssertionError, match="2 entries != 3 inserts - 0 evictions"):
        bad.check_consistent()


def test_rotation_turns_through_cases_and_wants_the_invalid_call_to_raise():
    seen = []
    step = soak.rotation(["a", "b"], valid=seen.append, invalid=lambda c: (_ for _ in ()).throw(IndexError()),
                         error=IndexError, what="toy", bad_every=3)
    for i in range(6):
        step(i)
    assert seen == ["a", "b", "b", "a"]  # call 2 (case "a") and call 5 were the invalid ones
    quiet = soak.rotation(["a"], valid=seen.append, invalid=lambda c: None, error=IndexError, what="toy fault",
                          bad_every=2)
    quiet(0)
    with pytest.raises(AssertionError, match="toy fault did not raise IndexError"):
        quiet(1)
