"""Shared case makers of the adv_step_flash tests (NumPy side)."""
from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Dict, List, Tuple

import numpy as np

#: The arguments after (num_seqs, num_queries, block_size), in the order of the signature.
NAMES = ("input_tokens", "sampled_token_ids", "input_positions", "seq_lens", "slot_mapping", "block_tables")
#: The four tensors the op writes.
OUTPUTS = ("input_tokens", "input_positions", "seq_lens", "slot_mapping")
#: Every dtype combination of the spec: one dtype per tensor of NAMES.
DTYPE_COMBOS: List[Tuple[str, ...]] = list(itertools.product(("int32", "int64"), repeat=len(NAMES)))
#: vLLM's (int64 tokens / positions / slots, int32 seq_lens / block tables) and MindSpore's (all int32).
VLLM = ("int64", "int64", "int64", "int32", "int64", "int32")
ALL32 = ("int32",) * 6
ALL64 = ("int64",) * 6

INT32_MAX = 2**31 - 1


def combo_id(combo: Tuple[str, ...]) -> str:
    return "".join("8" if d == "int64" else "4" for d in combo)  # bytes per tensor, in NAMES order


@dataclass(frozen=True)
class Case:
    num_seqs: int
    num_queries: int
    block_size: int
    pos_base: int = 0       # positions of the advancing rows are drawn from [pos_base, pos_base + span)
    span: int = 200
    table_pad: int = 0      # extra elements between rows of block_tables (a strided view)
    sampled_2d: bool = True  # sampled_token_ids [num_queries, 1] (else [num_queries])
    block_base: int = 0     # block ids are drawn from [block_base, block_base + 1000)
    headroom: int = 0       # spare table width for this many further steps

    @property
    def max_blocks(self) -> int:
        return (self.pos_base + self.span + self.headroom) // self.block_size + 1

    @property
    def max_slot(self) -> int:
        return (self.block_base + 1000) * self.block_size

    def fits(self, combo: Tuple[str, ...]) -> bool:
        """Whether every value of this case fits the dtypes of `combo` (else the op refuses)."""
        dtypes = dict(zip(NAMES, combo))
        if self.pos_base + self.span + self.headroom + 1 > INT32_MAX:
            if "int32" in (dtypes["seq_lens"], dtypes["input_positions"]):
                return False
        if self.max_slot > INT32_MAX and dtypes["slot_mapping"] == "int32":
            return False
        return True

    def __str__(self) -> str:
        return (f"S{self.num_seqs}q{self.num_queries}bs{self.block_size}p{self.pos_base}"
                f"{'-pad' + str(self.table_pad) if self.table_pad else ''}{'' if self.sampled_2d else '-1d'}")


SHAPES = [
    Case(1, 1, 16),                                           # one sequence
    Case(7, 7, 1, span=40),                                   # block_size 1, no padding rows
    Case(7, 5, 16, table_pad=3),                              # padding rows, strided table
    Case(64, 50, 128, sampled_2d=False, table_pad=128),       # [num_queries] tokens, strided table
    Case(257, 200, 16, span=5000, table_pad=16),              # more sequences than cores
    Case(3, 2, 1, pos_base=2**24 - 2, span=4),                # block_size 1 at 2^24 (float division fails)
    Case(9, 6, 16, pos_base=2**24 - 8, span=16, table_pad=5),  # near 2^24
    Case(8, 8, 128, pos_base=3 * 2**24 + 1, span=300, block_base=2**24 // 128),  # beyond 2^24, slots too
    Case(4, 3, 2**20, pos_base=2**33 + 5, span=1000),         # beyond int32: int64 positions and slots only
]


def make(case: Case, combo: Tuple[str, ...], seed: int = 0) -> Dict[str, np.ndarray]:
    """The six tensors of one call (by name); outputs start as garbage the op must overwrite."""
    rng = np.random.default_rng(seed)
    dt = {name: np.dtype(d) for name, d in zip(NAMES, combo)}
    s, q = case.num_seqs, case.num_queries
    width = case.max_blocks
    seq_lens = rng.integers(case.pos_base, case.pos_base + case.span, s)
    seq_lens[q:] = rng.integers(0, 1000, s - q)  # padding rows: must stay as they are
    row = width + case.table_pad
    if s * row <= 1 << 20:
        storage = rng.integers(case.block_base, case.block_base + 1000, (s, row))
        storage = storage.astype(dt["block_tables"])
    else:  # a huge table (positions near 2^24 with small blocks): zero pages, only used entries set
        storage = np.zeros((s, row), dt["block_tables"])
        index = seq_lens // case.block_size
        storage[np.arange(s), np.minimum(index, width - 1)] = rng.integers(case.block_base, case.block_base + 1000, s)
    offset = case.table_pad // 2
    tables = storage[:, offset:offset + width]
    sampled = rng.integers(0, 152064, (q, 1) if case.sampled_2d else (q,)).astype(dt["sampled_token_ids"])
    return {
        "input_tokens": rng.integers(-999, 999, s).astype(dt["input_tokens"]),
        "sampled_token_ids": sampled,
        "input_positions": rng.integers(-999, 999, s).astype(dt["input_positions"]),
        "seq_lens": seq_lens.astype(dt["seq_lens"]),
        "slot_mapping": rng.integers(-999, 999, s).astype(dt["slot_mapping"]),
        "block_tables": tables,
    }


def call_args(case: Case, arrays: Dict[str, np.ndarray]) -> tuple:
    return (case.num_seqs, case.num_queries, case.block_size, *(arrays[n] for n in NAMES))


def golden(case: Case, combo: Tuple[str, ...], seed: int = 0):
    """(case, arrays, expected outputs) for one dtype combination."""
    from ascend_ops.adv_step_flash import reference

    arrays = make(case, combo, seed)
    return arrays, reference.advance_step_flashattn(*call_args(case, arrays))


def params(shapes=None, combos=None):
    """(case, combo) pairs where every value fits the dtypes, with readable ids."""
    out = []
    for case in shapes or SHAPES:
        for combo in combos or DTYPE_COMBOS:
            if case.fits(combo):
                out.append((case, combo))
    return out


def param_ids(pairs) -> List[str]:
    return [f"{case}-{combo_id(combo)}" for case, combo in pairs]
