"""Every build of the int8 dot kernel (host/liq_dots.cpp: "avx512_vnni", "avx2", "baseline"; the
ASCEND_OPS_CPU_ISA cap picks one per process) gives the same bytes: the int32 dots are exact and
the float part is one fixed sequence of float32 operations. Each build runs in its own process
on odd head counts (pad lanes), odd D (partial dwords / int16 pairs), extreme codes, and both
layouts; the uncapped run is also checked against the reference."""
from __future__ import annotations

import os
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np

from ascend_ops.lightning_indexer_quant import _core

from liq_cases import Shape, assert_topk, make, reference_rows

SHAPES = [Shape((2, 1), (300, 77), 64, 128, 50, name="N64-D128"),
          Shape((3,), (200,), 20, 13, 30, block_size=8, name="N20-D13"),
          Shape((1, 2), (90, 130), 6, 30, 40, n2=2, block_size=16, name="N6/2-D30"),
          Shape((4,), (64,), 17, 7, 64, name="N17-D7")]

_SCRIPT = """
import pickle, sys
sys.path.insert(0, {tests!r})
import numpy as np
from ascend_ops.lightning_indexer_quant import _core, lightning_indexer_quant
from test_liq_isa import cases
out = {{"isa": _core.CPU_ISA, "results": [lightning_indexer_quant(**args, sparse_mode=mode, return_value=True)
                                         for args, mode in cases()]}}
sys.stdout.buffer.write(pickle.dumps(out))
"""


def cases():
    out = []
    for i, shape in enumerate(SHAPES):
        for layouts in (("BSND", "PA_BSND"), ("TND", "TND")):
            args = make(shape, *layouts, weights_dtype="float16" if i % 2 else "float32", seed=40 + i)
            if i == 0:  # extreme codes: |dot| = 2^21
                rng = np.random.default_rng(i)
                args["query"][:] = rng.choice(np.array([-128, 127], np.int8), args["query"].shape)
                args["key"][:] = rng.choice(np.array([-128, 127], np.int8), args["key"].shape)
            out.append((args, 3 if i % 2 else 0))
    return out


def run(isa: str | None):
    env = dict(os.environ)
    env.pop("ASCEND_OPS_CPU_ISA", None)
    if isa:
        env["ASCEND_OPS_CPU_ISA"] = isa
    done = subprocess.run([sys.executable, "-c", _SCRIPT.format(tests=str(Path(__file__).parent))], env=env,
                          capture_output=True, check=False)
    assert done.returncode == 0, done.stderr.decode()
    return pickle.loads(done.stdout)


def test_every_isa_gives_the_same_bytes():
    best = run(None)
    assert best["isa"] == _core.CPU_ISA
    for (args, mode), (idx, val) in zip(cases(), best["results"]):
        assert_topk(idx, val, reference_rows(args, mode), args["sparse_count"])
    seen = {best["isa"]}
    for isa in ("avx2", "baseline"):
        capped = run(isa)
        seen.add(capped["isa"])
        for (idx, val), (want_idx, want_val) in zip(capped["results"], best["results"]):
            np.testing.assert_array_equal(idx, want_idx, err_msg=capped["isa"])
            np.testing.assert_array_equal(val.view(np.int32), want_val.view(np.int32), err_msg=capped["isa"])
    assert "baseline" in seen
    if _core.CPU_ISA == "avx512_vnni":
        assert seen == {"avx512_vnni", "avx2", "baseline"}
