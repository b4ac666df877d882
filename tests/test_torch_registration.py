"""``torch.ops.ascend_ops.*`` exists once torch and an op package are imported, in any order.

Each order runs in a fresh interpreter (registration is process state). An op package imported
alone must not import torch (MindSpore users); once torch is imported too, before or after, the
op's torch.ops entry exists and runs under torch.compile(fullgraph=True) with no graph break.
"""
from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import textwrap

import pytest

if importlib.util.find_spec("torch") is None:
    pytest.skip("torch is not installed", allow_module_level=True)

from ascend_ops.common.registry import installed_ops  # noqa: E402


def _torch_name(package: str) -> str:
    """The op's torch.ops.ascend_ops entry, from its description (importing it imports no torch)."""
    return __import__(f"ascend_ops.{package}._description", fromlist=["_"]).DESCRIPTION["name"]


# Every installed op (the ascend_ops.ops entry points): package -> torch.ops.ascend_ops entry.
OPS = {op.name: _torch_name(op.name) for op in installed_ops()}
FIRST, *REST = sorted(OPS)

# Runs every op's own `torch compile` check case (ascend-ops check: each call form against the
# golden reference, torch.compile(fullgraph=True)): a graph break would raise.
CHECK_COMPILED = textwrap.dedent("""
    from ascend_ops.common.registry import CheckSkipped, installed_ops
    ran = 0
    for op in installed_ops():
        for case in op.cases():
            if case.mode == "torch compile" and case.backend == "cpu":
                try:
                    case.run()
                    ran += 1
                except CheckSkipped:
                    pass
    assert ran, "no op has a torch compile check that ran"
""")


def run(*blocks: str) -> None:
    """Run the blocks (each dedented on its own) as one script in a fresh interpreter."""
    code = "\n".join(textwrap.dedent(b).strip("\n") for b in blocks)
    env = dict(os.environ, TORCH_DEVICE_BACKEND_AUTOLOAD="0")
    proc = subprocess.run([sys.executable, "-c", code], env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"{code}\n--- stdout\n{proc.stdout}\n--- stderr\n{proc.stderr}"


def has_ops(packages) -> str:
    return "\n".join(f"assert hasattr(torch.ops.ascend_ops, {OPS[p]!r}), {p!r}\n"
                     f"torch.ops.ascend_ops.{OPS[p]}.default  # the schema resolves" for p in packages)


@pytest.mark.parametrize("package", sorted(OPS))
def test_package_alone_does_not_import_torch(package):
    run(f"""
        import sys
        import ascend_ops.{package}
        assert "torch" not in sys.modules, "importing the op package imported torch"
    """)


@pytest.mark.parametrize("package", sorted(OPS))
def test_torch_first(package):
    run(f"""
        import torch
        import ascend_ops.{package}
    """, has_ops([package]))


@pytest.mark.parametrize("package", sorted(OPS))
def test_torch_after(package):
    run(f"""
        import sys
        import ascend_ops.{package}
        assert "torch" not in sys.modules
        import torch
    """, has_ops([package]))


def test_from_import_of_the_function_then_torch():
    imports = "\n".join(f"from ascend_ops.{p} import {OPS[p]}" for p in sorted(OPS))
    run(imports, """
        import torch.nn  # a submodule import imports torch too
        import torch
    """, has_ops(sorted(OPS)))


def test_interleaved_orders_and_compiled_without_graph_break():
    run(f"""
        import ascend_ops.{FIRST}
        import torch
    """, "\n".join(f"import ascend_ops.{p}" for p in REST), has_ops(sorted(OPS)), CHECK_COMPILED)


def test_torch_after_then_compiled_without_graph_break():
    run("\n".join(f"import ascend_ops.{p}" for p in sorted(OPS)), "import torch", CHECK_COMPILED)


def test_inductor_fix_is_registered_when_inductor_is_imported():
    run(f"""
        import sys
        import ascend_ops.{FIRST}
        import torch
        assert "torch._inductor.lowering" not in sys.modules  # importing the op does not load Inductor
        import torch._inductor.lowering as lowering
        assert torch.ops.aten.sym_storage_offset.default in lowering.lowerings
    """)
