"""PyTorch front door of lightning_indexer: ``torch.ops.ascend_ops.lightning_indexer``.

Importing this module loads the op's native ``_torch`` module through
:func:`ascend_ops.common.loader.load_native`. Its static initialisers register the schema::

    lightning_indexer(Tensor query, Tensor key, Tensor weights, *,
                      Tensor? actual_seq_lengths_query=None, Tensor? actual_seq_lengths_key=None,
                      Tensor? block_table=None, str layout_query="BSND", str layout_key="PA_BSND",
                      int sparse_count=2048, int sparse_mode=3, bool return_value=False)
        -> (Tensor sparse_indices, Tensor? sparse_values)

with a CPU kernel and a Meta kernel (FakeTensor / ``torch.compile``, SymInt output sizes).

Where torchair is installed (or torch_npu, which ships it, is already imported), the torchair
GE converter of the op is registered too; call :func:`register_torchair_converter` after
importing torch_npu if it was imported later than this module.
"""
from __future__ import annotations

from typing import Optional, Tuple

from ascend_ops.common import torchair as _torchair
from ascend_ops.common.loader import load_native

_native = load_native("ascend_ops.lightning_indexer", "torch")

import torch  # noqa: E402  (already imported by load_native)

__all__ = ["lightning_indexer", "register_torchair_converter"]

_OP = torch.ops.ascend_ops.lightning_indexer.default


def lightning_indexer(
    query: torch.Tensor,
    key: torch.Tensor,
    weights: torch.Tensor,
    *,
    actual_seq_lengths_query: Optional[torch.Tensor] = None,
    actual_seq_lengths_key: Optional[torch.Tensor] = None,
    block_table: Optional[torch.Tensor] = None,
    layout_query: str = "BSND",
    layout_key: str = "PA_BSND",
    sparse_count: int = 2048,
    sparse_mode: int = 3,
    return_value: bool = False,
) -> Tuple[torch.Tensor, Optional[torch.Tensor]]:
    """Indices of the top ``sparse_count`` visible keys of every query row.

    See :func:`ascend_ops.lightning_indexer.lightning_indexer` for shapes and semantics.

    Returns
    -------
    (sparse_indices int32, sparse_values float32 or None)
    """
    return _OP(query, key, weights, actual_seq_lengths_query=actual_seq_lengths_query,
               actual_seq_lengths_key=actual_seq_lengths_key, block_table=block_table,
               layout_query=layout_query, layout_key=layout_key, sparse_count=sparse_count,
               sparse_mode=sparse_mode, return_value=return_value)


def register_torchair_converter() -> bool:
    """Register the torchair GE converter of the op if torchair is installed (True), else
    return False; see :func:`ascend_ops.common.torchair.register_converter`."""
    return _torchair.register_converter(__package__)


def _register_torchair_converter_on_import() -> None:
    _torchair.register_converter_on_import(__package__, "lightning_indexer")


_register_torchair_converter_on_import()
