"""Fixtures the integration tests share."""
from __future__ import annotations

import pytest


@pytest.fixture
def ms_pynative(tmp_path, monkeypatch):
    """MindSpore in PyNative mode, run from a temporary directory (a failing graph writes rank_0/
    into the current directory); the mode is restored afterwards."""
    ms = pytest.importorskip("mindspore")
    monkeypatch.chdir(tmp_path)
    ms.set_context(mode=ms.PYNATIVE_MODE)
    yield ms
    ms.set_context(mode=ms.PYNATIVE_MODE)
