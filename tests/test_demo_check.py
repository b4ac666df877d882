"""`ascend-ops check` names an op that is broken on purpose and exits non-zero."""
from __future__ import annotations

import numpy as np
import pytest

from ascend_ops.common import cli

pytest.importorskip("ascend_ops.reshape_and_cache", reason="ascend-op-reshape-and-cache is not installed")


_STATUSES = ("passed", "failed", "skipped")


def _rows(out, op):
    """(backend, mode, status) of every table row of ``op``."""
    rows = []
    for line in out.splitlines():
        words = line.split()
        if words and words[0] == op:
            at = next(i for i, w in enumerate(words) if w in _STATUSES)
            rows.append((words[1], " ".join(words[2:at]), words[at]))
    return rows


def _broken_reshape_and_cache(monkeypatch):
    """The NumPy front door of reshape_and_cache writes one wrong value after the real op."""
    from ascend_ops.reshape_and_cache import api

    real = api.reshape_and_cache

    def broken(key, value, key_cache, value_cache, slot_mapping, **kwargs):
        out = real(key, value, key_cache, value_cache, slot_mapping, **kwargs)
        flat = np.asarray(key_cache).reshape(-1)
        flat[0] = flat[0] + 1
        return out

    monkeypatch.setattr(api, "reshape_and_cache", broken)


def test_check_fails_and_names_the_broken_op(monkeypatch, capsys):
    _broken_reshape_and_cache(monkeypatch)
    status = cli.main(["check"])
    out = capsys.readouterr().out
    assert status == 1, out
    failed_line = [line for line in out.splitlines() if line.startswith("FAILED:")]
    assert failed_line == ["FAILED: reshape_and_cache"], out
    rows = _rows(out, "reshape_and_cache")
    assert ("cpu", "core", "failed") in rows and ("emu", "core", "failed") in rows, out
    assert all(status != "failed" for _, mode, status in rows if mode != "core"), out  # other front doors
    assert any("key_cache differs from the reference" in line for line in out.splitlines()), out
    # the other ops still pass: only the broken one is named
    for op in ("adv_step_flash", "lightning_indexer", "sparse_flash_attention"):
        rows = _rows(out, op)
        assert rows and all(status in ("passed", "skipped") for _, _, status in rows), (op, out)


def test_check_of_that_op_alone_fails_too(monkeypatch, capsys):
    _broken_reshape_and_cache(monkeypatch)
    status = cli.main(["check", "reshape-and-cache", "--backend", "cpu"])
    out = capsys.readouterr().out
    assert status == 1 and "FAILED: reshape_and_cache" in out, out


def test_check_passes_once_the_op_is_whole_again(capsys):
    status = cli.main(["check", "reshape_and_cache", "--backend", "cpu"])
    out = capsys.readouterr().out
    assert status == 0 and "FAILED" not in out, out


def test_check_covers_sparse_flash_attention(capsys):
    """The fourth op is checked by its own _check.py entry point: cpu and emu backends, passing."""
    pytest.importorskip("ascend_ops.sparse_flash_attention", reason="ascend-op-sparse-flash-attention is not installed")
    status = cli.main(["check", "sparse_flash_attention", "--backend", "cpu"])
    out = capsys.readouterr().out
    rows = _rows(out, "sparse_flash_attention")
    assert status == 0 and rows and ("cpu", "core", "passed") in rows, out
