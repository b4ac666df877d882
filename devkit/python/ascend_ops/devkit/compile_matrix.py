"""torch.compile matrix for in-place ops: every backend, shape mode and way engines pass outputs.

Engines hand our in-place ops their outputs as views of one tensor (vLLM's
``kv_cache[0]`` / ``kv_cache.unbind(0)`` of a ``[2, num_blocks, ...]`` cache, a slice of a block
pool, a metadata buffer split into rows), taken inside or outside the compiled region. Each of
these reaches Inductor by another path (auto_functionalized_v2 view regeneration, aliased graph
inputs with a synthetic base, inputs with a storage offset), and a lost write is silent. So every
in-place op runs this matrix:

* backends ``eager``, ``aot_eager``, ``inductor``, all with ``fullgraph=True``;
* modes ``static`` (``dynamic=False``), ``dynamic`` (``dynamic=True``) and ``mark_dynamic``
  (``torch._dynamo.mark_dynamic`` on the outputs' leading dimension and on dimension 0 of every
  other tensor argument, as engines mark their token and batch dimensions);
* layouts: :data:`LAYOUTS`.

An op test supplies the fused output tensor ``[N, ...]`` (its N mutated arguments stacked) and
the other arguments for two steps, and a function that calls the op with the N outputs; each
step's result must equal the same call in eager mode, bit for bit.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, List, Sequence, Tuple

import torch

__all__ = ["Layout", "LAYOUTS", "BACKENDS", "MODES", "views", "run_case", "case_ids", "assert_no_copies"]


@dataclass(frozen=True)
class Layout:
    name: str
    inside: bool  # the views are taken inside the compiled function
    how: str  # "separate", "index", "unbind" or "slice"


LAYOUTS: Tuple[Layout, ...] = (
    Layout("separate", False, "separate"),  # whole tensors, one storage each
    Layout("index_inside", True, "index"),  # fused[i]
    Layout("unbind_inside", True, "unbind"),  # fused.unbind(0)
    Layout("slice_inside", True, "slice"),  # fused[i, 1:]: a storage offset
    Layout("index_outside", False, "index"),  # aliased graph inputs
    Layout("unbind_outside", False, "unbind"),
    Layout("slice_outside", False, "slice"),  # inputs with a storage offset
)
BACKENDS = ("eager", "aot_eager", "inductor")
MODES = ("static", "dynamic", "mark_dynamic")


def views(fused: torch.Tensor, how: str) -> List[torch.Tensor]:
    """The N outputs as the layout hands them to the op (``separate`` copies them out)."""
    if how == "separate":
        return [t.clone() for t in fused.unbind(0)]
    if how == "index":
        return [fused[i] for i in range(fused.shape[0])]
    if how == "unbind":
        return list(fused.unbind(0))
    if how == "slice":
        return [fused[i, 1:] for i in range(fused.shape[0])]
    raise ValueError(f"unknown layout {how!r}")


def case_ids() -> List[Tuple[str, str, Layout]]:
    return [(b, m, lay) for b in BACKENDS for m in MODES for lay in LAYOUTS]


Step = Tuple[torch.Tensor, Sequence[object]]  # (fused outputs, the other arguments)


def run_case(
    call: Callable[..., None],
    steps: Sequence[Step],
    backend: str,
    mode: str,
    layout: Layout,
) -> None:
    """Run ``call(outputs, *args)`` compiled on each step and compare with eager, exactly.

    ``call`` receives the list of N outputs then the step's other arguments. With ``slice``
    layouts the outputs lose their first row of dimension 1 (``fused[i, 1:]``): the steps'
    arguments must be valid for that smaller shape too.
    """
    import torch._dynamo
    import torch._inductor.config as inductor_config

    torch._dynamo.reset()
    # Compile for real: Inductor's on-disk caches key on the graph and config, not on the
    # lowerings that were registered, and would replay a graph compiled without our fix.
    with inductor_config.patch(fx_graph_cache=False, autotune_local_cache=False), \
            torch._functorch.config.patch(enable_autograd_cache=False):
        _run(call, steps, backend, mode, layout)


def _run(call, steps, backend, mode, layout) -> None:
    if layout.inside:
        def fn(fused, args):
            call(views(fused, layout.how), *args)
    else:
        def fn(outs, args):
            call(list(outs), *args)

    dynamic = {"static": False, "dynamic": True, "mark_dynamic": None}[mode]
    compiled = torch.compile(fn, backend=backend, fullgraph=True, dynamic=dynamic)
    for step, (fused, args) in enumerate(steps):
        expected = fused.clone()
        expected_outs = views(expected, layout.how)
        call(expected_outs, *args)
        if layout.how == "separate":
            expected = torch.stack(expected_outs)

        got_fused = fused.clone()
        if mode == "mark_dynamic":
            for a in args:
                if isinstance(a, torch.Tensor) and a.dim() > 0:
                    torch._dynamo.mark_dynamic(a, 0)
        if layout.inside:
            if mode == "mark_dynamic":
                torch._dynamo.mark_dynamic(got_fused, 1)
            compiled(got_fused, tuple(args))
            got = got_fused
        else:
            outs = views(got_fused, layout.how)
            if mode == "mark_dynamic":
                for t in outs:
                    torch._dynamo.mark_dynamic(t, 0)
            compiled(tuple(outs), tuple(args))
            got = torch.stack(outs) if layout.how == "separate" else got_fused
        if not torch.equal(got, expected):
            wrong = (got != expected).reshape(got.shape[0], -1).any(dim=1).nonzero().flatten().tolist()
            raise AssertionError(
                f"torch.compile(backend={backend!r}, mode={mode}, layout={layout.name}) step "
                f"{step}: outputs {wrong} differ from eager (a lost or misplaced write)"
            )


def assert_no_copies(fn: Callable[..., None], *args: object, op: str) -> None:
    """Compile ``fn(*args)`` with Inductor (dynamic shapes) and check that the generated code
    calls ``op`` in place and copies no tensor: the cost of a compiled step must not grow with
    the size of the tensors the op writes (a KV cache is gigabytes)."""
    import torch._dynamo
    import torch._inductor.config as inductor_config
    from torch._inductor.utils import run_and_get_code

    torch._dynamo.reset()
    with inductor_config.patch(fx_graph_cache=False):
        _, codes = run_and_get_code(torch.compile(fn, fullgraph=True, dynamic=True), *args)
    body = "\n".join(code.split("def call(")[1].split("\ndef ")[0] for code in codes)
    assert op in body, f"{op} is not called by the compiled graph:\n{body}"
    for copy in ("clone", "copy_", "empty_strided"):
        assert copy not in body, f"the compiled graph copies a tensor ({copy}):\n{body}"
