"""Every installed op's ``_core`` is derived from its description (common's numpy_op.hpp): the
same functions, the same argument handling and the same refusals for every op, found through the
``ascend_ops.ops`` entry points."""
from __future__ import annotations

import pytest

from ascend_ops.common.loader import load_native
from ascend_ops.common.registry import installed_ops

OPS = [op for op in installed_ops() if "cpu" in op.supported_backends]


@pytest.fixture(params=OPS, ids=lambda op: op.name)
def core(request):
    return load_native(request.param.module, "core")


def _arguments(core) -> list:
    """The names of run_cpu's documented argument list (the op's description)."""
    listed = core.run_cpu.__doc__.split("run_cpu(", 2)[2].split(")")[0]
    return [a.strip().split("=")[0] for a in listed.split(",") if a.strip() != "dtype=''"]


def _first_required(core) -> str:
    return _arguments(core)[0]


def test_every_core_has_the_common_functions(core):
    for name in ("run_cpu", "kernel_tiling", "num_threads", "set_num_threads"):
        assert callable(getattr(core, name)), name
    assert core.tiling is core.kernel_tiling  # its former name in two ops
    assert isinstance(core.HAS_EMU, bool) and isinstance(core.HAS_NPU_SIM, bool)
    if core.HAS_EMU:
        assert callable(core.run_emu)
    if core.HAS_NPU_SIM:
        assert callable(core.run_npu_sim) and callable(core.drain_npu_sim_queue)


def test_unknown_keyword_is_refused_naming_it(core):
    with pytest.raises(TypeError, match="unexpected keyword argument 'no_such_argument'"):
        core.run_cpu(no_such_argument=1)


def test_missing_argument_is_refused_naming_it(core):
    first = _first_required(core)
    with pytest.raises(TypeError, match=f"missing required argument '{first}'"):
        core.run_cpu()


def test_too_many_positional_arguments_are_refused(core):
    with pytest.raises(TypeError, match="positional arguments but 40 were given"):
        core.run_cpu(*([None] * 40))


def test_an_argument_given_twice_is_refused(core):
    first = _first_required(core)
    with pytest.raises(TypeError, match=f"multiple values for argument '{first}'"):
        core.run_cpu(None, **{first: None})


def test_a_list_is_not_an_array(core):
    with pytest.raises(TypeError, match="should be (a numpy.ndarray|an int) .*but is list"):
        core.run_cpu([1, 2, 3], *([None] * (len(_arguments(core)) - 1)))
