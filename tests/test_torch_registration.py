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

OPS = {  # package -> torch.ops.ascend_ops entry
    "reshape_and_cache": "reshape_and_cache",
    "adv_step_flash": "advance_step_flashattn",
    "lightning_indexer": "lightning_indexer",
}

# Runs the in-place ops compiled with fullgraph=True: a graph break would raise.
CHECK_COMPILED = textwrap.dedent("""
    import torch
    def rac(k, v, kc, vc, s):
        torch.ops.ascend_ops.reshape_and_cache(k, v, kc, vc, s)
    def asf(tok, sampled, pos, lens, slots, tables):
        torch.ops.ascend_ops.advance_step_flashattn(2, 2, 4, tok, sampled, pos, lens, slots, tables)
    kc, vc = torch.zeros(2, 4, 1, 8), torch.zeros(2, 4, 1, 8)
    k, v = torch.ones(2, 1, 8), torch.ones(2, 1, 8)
    torch.compile(rac, fullgraph=True, backend="eager")(k, v, kc, vc, torch.tensor([0, 5]))
    assert kc.view(8, 8)[5].eq(1).all() and vc.view(8, 8)[0].eq(1).all()
    tok, pos, slots = (torch.zeros(2, dtype=torch.int64) for _ in range(3))
    lens = torch.tensor([3, 4], dtype=torch.int64)
    torch.compile(asf, fullgraph=True, backend="eager")(
        tok, torch.tensor([[7], [9]]), pos, lens, slots, torch.tensor([[1, 2], [3, 4]]))
    assert tok.tolist() == [7, 9] and lens.tolist() == [4, 5] and slots.tolist() == [7, 16]
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
    run("""
        from ascend_ops.reshape_and_cache import reshape_and_cache
        from ascend_ops.adv_step_flash import advance_step_flashattn
        import torch.nn  # a submodule import imports torch too
        import torch
    """, has_ops(["reshape_and_cache", "adv_step_flash"]))


def test_interleaved_orders_and_compiled_without_graph_break():
    run("""
        import ascend_ops.adv_step_flash
        import torch
        import ascend_ops.reshape_and_cache, ascend_ops.lightning_indexer
    """, has_ops(sorted(OPS)), CHECK_COMPILED)


def test_torch_after_then_compiled_without_graph_break():
    run("""
        import ascend_ops.reshape_and_cache, ascend_ops.adv_step_flash
        import torch
    """, CHECK_COMPILED)


def test_inductor_fix_is_registered_when_inductor_is_imported():
    run("""
        import sys
        import ascend_ops.reshape_and_cache
        import torch
        assert "torch._inductor.lowering" not in sys.modules  # importing the op does not load Inductor
        import torch._inductor.lowering as lowering
        assert torch.ops.aten.sym_storage_offset.default in lowering.lowerings
    """)
