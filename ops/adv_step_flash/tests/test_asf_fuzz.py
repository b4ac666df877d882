"""Fuzzer of advance_step_flashattn: random batch sizes and padding rows, block sizes (1, odd,
powers of two, beyond 2^31), every int32 / int64 combination of the six tensors, [num_queries, 1]
and [num_queries] tokens, row-strided block tables, read-only inputs, and values at the limits
(positions beyond 2^24, 2^31 and 2^32 where the dtypes hold them, block ids up to the largest
slot that fits, tokens at their dtype limits), with faults planted on top.

Every case must end as the golden result (bit exact; inputs, padding rows' seq_lens, the table's
row padding and the guard bytes around every tensor unchanged) or as the documented exception
with every buffer unchanged; see :mod:`ascend_ops.devkit.fuzzing`. ``./dev test`` runs the quick
profile, ``AOP_FUZZ_EXAMPLES=10000`` (``./dev fuzz``) the long one.
"""
from __future__ import annotations


import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from ascend_ops.adv_step_flash import advance_step_flashattn, reference
from ascend_ops.devkit.fuzzing import (Fault, assert_bytes, check_call, expected_bytes, front_doors, fuzz_settings,
                                      guarded, owners, to_torch)

from asf_cases import DTYPE_COMBOS, NAMES, OUTPUTS

OP = "advance_step_flashattn"
INT32_MAX, INT64_MIN, INT64_MAX = 2**31 - 1, -2**63, 2**63 - 1
INT_DTYPES = (np.dtype(np.int32), np.dtype(np.int64))
BAD_DTYPES = [np.float16, np.float32, np.float64, np.int8, np.int16, np.uint8, np.uint16, np.uint32, np.uint64,
              np.bool_]
SMALL_BLOCKS = [1, 2, 3, 7, 16, 17, 64, 128, 255, 1000]
# With a table of a few entries these reach positions beyond 2^24, 2^31 and 2^32 and take every
# division path of the CPU kernel (shift, 32-bit, 64-bit).
BIG_BLOCKS = [2**16 + 1, 2**20, 2**24 - 1, 2**28 + 3, 2**30, 2**31 - 1, 2**31 + 1, 2**32 + 5, 2**40 + 1]
# Where a float division or a 32-bit intermediate goes wrong.
POSITION_EDGES = [2**24 - 1, 2**24, 2**24 + 1, 2**31 - 2, 2**31 - 1, 2**31, 2**32 - 1, 2**32, 2**32 + 1]
TOKEN_EDGES = [0, -1, 151935, 2**31 - 1, -2**31]


DOORS = front_doors("ascend_ops.adv_step_flash")


# --- values ---------------------------------------------------------------------------------
def imin(dtype):
    return int(np.iinfo(dtype).min)


def imax(dtype):
    return int(np.iinfo(dtype).max)


def pick(rng, lo, hi, edges=()):
    """An int in [lo, hi]: at or next to either end, one of ``edges`` that falls inside, small
    (lo + up to 1000) or uniform."""
    kind = int(rng.integers(5))
    inside = [e for e in edges if lo <= e <= hi]
    if kind == 0:
        return lo + int(rng.integers(0, min(hi - lo, 2), endpoint=True))
    if kind == 1:
        return hi - int(rng.integers(0, min(hi - lo, 2), endpoint=True))
    if kind == 2 and inside:
        return inside[int(rng.integers(len(inside)))]
    if kind == 3:
        return lo + int(rng.integers(0, min(hi - lo, 1000), endpoint=True))
    return lo + int(rng.integers(0, hi - lo, endpoint=True, dtype=np.uint64))


def fill_advancing_rows(c, rng):
    """Valid values in the rows the step reads (i < num_queries): a position, the table entry
    it reads and a token, each fitting every dtype it goes through. Padding rows and the
    unread table entries keep their random bytes (the op must not read them)."""
    bs, width = c["block_size"], c["block_tables"].shape[1]
    lens, table, sampled = c["seq_lens"], c["block_tables"], c["sampled_token_ids"]
    pos_max = min(imax(c["input_positions"].dtype), imax(lens.dtype) - 1, width * bs - 1)
    slot_max = imax(c["slot_mapping"].dtype)
    token_lo = max(imin(c["input_tokens"].dtype), imin(sampled.dtype))
    token_hi = min(imax(c["input_tokens"].dtype), imax(sampled.dtype))
    for i in range(c["num_queries"]):
        pos = pick(rng, 0, pos_max, POSITION_EDGES + [bs - 1, bs, 2 * bs - 1])
        if pos % bs > slot_max:  # an offset into a huge block that no int32 slot can hold
            pos -= pos % bs - int(rng.integers(0, slot_max, endpoint=True))
        lens[i] = pos
        table[i, pos // bs] = pick(rng, 0, min(imax(table.dtype), (slot_max - pos % bs) // bs))
        sampled[i] = pick(rng, token_lo, token_hi, TOKEN_EDGES)


# --- faults: (name, exception, applies(case), mutate(case, rng)) -----------------------------
def well_formed(c):
    """No int, dtype, shape, layout or device fault planted so far: the call reaches the data
    check, which reads every row i < num_queries."""
    n, q = c["num_seqs"], c["num_queries"]
    if not (0 < q <= n and c["block_size"] > 0 and not c["meta"]):
        return False
    if any(c[name].dtype not in INT_DTYPES for name in NAMES):
        return False
    if any(c[name].shape != (n,) or not c[name].flags.c_contiguous or not c[name].flags.writeable
           for name in OUTPUTS):
        return False
    sampled, table = c["sampled_token_ids"], c["block_tables"]
    if sampled.shape not in ((q,), (q, 1)) or not sampled.flags.c_contiguous:
        return False
    if table.ndim != 2 or table.shape[0] != n or table.shape[1] < 1:
        return False
    row, column = (s // table.itemsize for s in table.strides)
    return (table.shape[1] == 1 or column == 1) and (n == 1 or row >= table.shape[1])


def readable_rows(c):
    """The advancing rows whose seq_len is >= 0 and inside the table: a table entry is read."""
    bs, width, lens = c["block_size"], c["block_tables"].shape[1], c["seq_lens"]
    return [i for i in range(c["num_queries"]) if 0 <= int(lens[i]) and int(lens[i]) // bs < width]


def choose(rng, options):
    return options[int(rng.integers(len(options)))]


def as_dtype(c, name, dtype, rng, keep=False):
    """Give c[name] ``dtype``: a new guarded array, holding the old values if ``keep`` (a widening)."""
    if c[name].dtype != dtype:
        c[name] = guarded(c[name].shape, dtype, rng, values=c[name] if keep else None)


def _retype(name):
    def mutate(c, rng):
        c[name] = c[name].astype(choose(rng, BAD_DTYPES))
    return mutate


# The layout faults keep the old values (repeated or cut to the new shape): an op that missed
# the layout error would then read valid data instead of failing on random bytes by luck.
def _reshape(name, shape_of):
    def mutate(c, rng):
        shape = shape_of(c, c[name].shape, rng)
        c[name] = guarded(shape, c[name].dtype, rng, values=np.resize(c[name], shape))
    return mutate


def _other_length(count):
    """A length other than c[count] (the num_seqs or num_queries the call passes)."""
    return lambda c, s, rng: (c[count] + choose(rng, [-1, 1, 2]),) + s[1:]


def _strided_vector(name):
    """c[name] (1-D, or 2-D after another mutation) as every other element along its last axis of
    a twice as wide array."""
    def mutate(c, rng):
        a, k = c[name], choose(rng, [0, 1])
        if a.ndim == 2:
            strided = guarded((a.shape[0], 2 * a.shape[1]), a.dtype, rng)[:, k::2]
        else:
            strided = guarded((a.shape[0], 2), a.dtype, rng)[:, k]
        strided[...] = a
        c[name] = strided
    return mutate


def _strided_columns(c, rng):
    n, w = c["block_tables"].shape
    strided = guarded((n, 2 * w), c["block_tables"].dtype, rng)[:, ::2]
    strided[...] = c["block_tables"]
    c["block_tables"] = strided


def _overlapping_rows(c, rng):
    """Rows w - 1 elements apart, all block id 0 (a valid id for every row that is read)."""
    n, w = c["block_tables"].shape
    flat = guarded(((n - 1) * (w - 1) + w,), c["block_tables"].dtype, rng, values=0)
    c["block_tables"] = np.lib.stride_tricks.as_strided(flat, (n, w), ((w - 1) * flat.itemsize, flat.itemsize))


def _set(key, values):
    return lambda c, rng: c.update({key: choose(rng, values(c))})


def _read_only(c, rng):
    c[choose(rng, OUTPUTS)].flags.writeable = False


def _on_meta(c, rng):
    c["meta"] = (choose(rng, NAMES),)


def _negative_seq_len(c, rng):
    lens = c["seq_lens"]
    lens[int(rng.integers(c["num_queries"]))] = choose(rng, [-1, max(-c["block_size"], imin(lens.dtype)),
                                                             imin(lens.dtype)])


def _negative_block(c, rng):
    i = choose(rng, readable_rows(c))
    table = c["block_tables"]
    table[i, int(c["seq_lens"][i]) // c["block_size"]] = choose(rng, [-1, -7, imin(table.dtype)])


def _beyond_table(c, rng):
    pos = pick(rng, c["block_tables"].shape[1] * c["block_size"], INT64_MAX, POSITION_EDGES)
    if pos > imax(c["seq_lens"].dtype):
        as_dtype(c, "seq_lens", np.int64, rng, keep=True)
    c["seq_lens"][int(rng.integers(c["num_queries"]))] = pos


def _empty_table(c, rng):
    c["block_tables"] = guarded((c["num_seqs"], 0), c["block_tables"].dtype, rng, row_pad=choose(rng, [0, 3]))


def _slot_overflow(limit):
    """A table entry (on a row that is read) whose slot exceeds ``limit`` (int32: an int32
    slot_mapping overflow; int64: the slot itself overflows)."""
    def mutate(c, rng):
        if limit == INT32_MAX:
            as_dtype(c, "slot_mapping", np.int32, rng)
        i = choose(rng, readable_rows(c))
        bs, pos = c["block_size"], int(c["seq_lens"][i])
        low = max((limit - pos % bs) // bs + 1, 0)
        if low > imax(c["block_tables"].dtype):
            as_dtype(c, "block_tables", np.int64, rng, keep=True)
        c["block_tables"][i, pos // bs] = pick(rng, low, imax(c["block_tables"].dtype))
    return mutate


def _table_reaches(c, pos):
    """Raise block_size if needed so that position ``pos`` falls inside the table. The other
    rows then read entries at the same or a smaller index: valid ones or, at worst, random
    bytes that make a negative block id or an overflowing slot (ValueError, like the faults
    that call this)."""
    c["block_size"] = max(c["block_size"], pos // c["block_tables"].shape[1] + 1)


def _position_overflow(c, rng):
    """A position beyond int32 (inside the table) with an int32 input_positions."""
    pos = pick(rng, 2**31, INT64_MAX - 1, POSITION_EDGES)
    _table_reaches(c, pos)
    as_dtype(c, "seq_lens", np.int64, rng, keep=True)
    as_dtype(c, "input_positions", np.int32, rng)
    i = int(rng.integers(c["num_queries"]))
    c["seq_lens"][i] = pos
    c["block_tables"][i, pos // c["block_size"]] = 0


def _seq_len_overflow(c, rng):
    """seq_len = INT32_MAX in an int32 seq_lens: the new length does not fit."""
    _table_reaches(c, INT32_MAX)
    i = int(rng.integers(c["num_queries"]))
    c["seq_lens"][i] = INT32_MAX
    c["block_tables"][i, INT32_MAX // c["block_size"]] = 0


def _token_overflow(c, rng):
    as_dtype(c, "sampled_token_ids", np.int64, rng, keep=True)
    as_dtype(c, "input_tokens", np.int32, rng)
    c["sampled_token_ids"][int(rng.integers(c["num_queries"]))] = choose(
        rng, [2**31, -2**31 - 1, 2**40, INT64_MIN, INT64_MAX])


def ranked(**ranks):
    """applies(case): the named arguments still have these ranks (no earlier fault changed them)."""
    return lambda c: all(c[name].ndim == n for name, n in ranks.items())


def counts_sane(c):
    """0 < num_queries <= num_seqs (no int fault planted): lengths made from them are small."""
    return 0 < c["num_queries"] <= c["num_seqs"]


def rows_over(name, count):
    """applies(case): c[name] is still a [count] or [count, x] array with more than one row: a
    strided view of it is not contiguous (one-row arrays are, whatever their strides)."""
    return lambda c: c[name].ndim in (1, 2) and c[name].shape[0] == c[count] > 1


def table_with(rows=0, width=0):
    """applies(case): block_tables is still 2-D with at least ``rows`` rows and ``width`` columns."""
    return lambda c: c["block_tables"].ndim == 2 and c["block_tables"].shape[0] >= rows \
        and c["block_tables"].shape[1] >= width


def well_formed_and(condition):
    return lambda c: well_formed(c) and bool(condition(c))


def always(c):
    return True


def door_is(*names):
    return lambda c: c["door"] in names


def _any_shape(choices):
    return lambda c, s, rng: choose(rng, choices(s))


FAULTS = [
    *[(f"{name} dtype", TypeError, always, _retype(name)) for name in NAMES],
    # ranks and lengths
    *[(f"{name} rank", ValueError, ranked(**{name: 1}), _reshape(name, _any_shape(lambda s: [s + (1,), (1,) + s, ()])))
      for name in OUTPUTS],
    ("sampled_token_ids rank", ValueError, always, _reshape("sampled_token_ids", lambda c, s, rng: s[:1] + (1, 1))),
    ("sampled_token_ids [q, 2]", ValueError, lambda c: c["sampled_token_ids"].ndim >= 1,
     _reshape("sampled_token_ids", lambda c, s, rng: (s[0], 2))),
    ("block_tables rank", ValueError, ranked(block_tables=2),
     _reshape("block_tables", _any_shape(lambda s: [(s[0] * s[1],), s + (1,)]))),
    *[(f"{name} length", ValueError, lambda c, name=name: c[name].ndim == 1 and counts_sane(c),
       _reshape(name, _other_length("num_seqs"))) for name in OUTPUTS],
    ("sampled_token_ids length", ValueError, lambda c: c["sampled_token_ids"].ndim >= 1 and counts_sane(c),
     _reshape("sampled_token_ids", _other_length("num_queries"))),
    ("block_tables rows", ValueError, lambda c: table_with()(c) and counts_sane(c),
     _reshape("block_tables", _other_length("num_seqs"))),
    # the ints
    ("num_seqs mismatch", ValueError, always,
     _set("num_seqs", lambda c: [c["num_seqs"] - 1, c["num_seqs"] + 1, 0, -1])),
    ("num_queries > num_seqs", ValueError, always,
     _set("num_queries", lambda c: [c["num_seqs"] + 1, c["num_seqs"] + 1000, 2**62])),
    ("num_queries <= 0", ValueError, always, _set("num_queries", lambda c: [0, -1, INT64_MIN])),
    ("block_size <= 0", ValueError, always,
     _set("block_size", lambda c: [0, -1, -abs(c["block_size"]), INT64_MIN])),
    # layouts and devices
    *[(f"{name} not contiguous", ValueError, rows_over(name, "num_seqs"), _strided_vector(name)) for name in OUTPUTS],
    ("sampled_token_ids not contiguous", ValueError, rows_over("sampled_token_ids", "num_queries"),
     _strided_vector("sampled_token_ids")),
    ("block_tables columns strided", ValueError, table_with(width=2), _strided_columns),
    ("block_tables rows overlap", ValueError, table_with(rows=2, width=1), _overlapping_rows),
    ("read-only output", ValueError, door_is("numpy-cpu", "numpy-emu"), _read_only),
    ("tensor on the meta device", ValueError, door_is("torch-cpu"), _on_meta),
    # the data, on rows that are read
    ("negative seq_len", ValueError, well_formed, _negative_seq_len),
    ("negative block id", ValueError, well_formed_and(readable_rows), _negative_block),
    ("block index beyond the table", IndexError, well_formed, _beyond_table),
    ("empty block table", IndexError, well_formed, _empty_table),
    ("int32 slot_mapping overflow", ValueError, well_formed_and(readable_rows), _slot_overflow(INT32_MAX)),
    # With block_size 1 every slot (= its block id) fits int64.
    ("int64 slot overflow", ValueError, well_formed_and(lambda c: readable_rows(c) and c["block_size"] > 1),
     _slot_overflow(INT64_MAX)),
    ("int32 input_positions overflow", ValueError, well_formed, _position_overflow),
    ("int32 seq_lens overflow", ValueError, well_formed_and(lambda c: c["seq_lens"].dtype == np.int32),
     _seq_len_overflow),
    ("int32 input_tokens overflow", ValueError, well_formed, _token_overflow),
]


@st.composite
def cases(draw):
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    door = draw(st.sampled_from(DOORS))
    dt = {name: np.dtype(d) for name, d in zip(NAMES, draw(st.sampled_from(DTYPE_COMBOS)))}
    num_seqs = draw(st.one_of(st.integers(1, 8), st.integers(1, 300)))
    num_queries = draw(st.one_of(st.just(num_seqs), st.integers(1, num_seqs)))
    width = draw(st.integers(1, 9))
    sampled_layout = draw(st.sampled_from(["[q, 1]", "[q]", "[q][:, None]"]))
    sampled = guarded((num_queries, 1) if sampled_layout == "[q, 1]" else (num_queries,), dt["sampled_token_ids"], rng)
    case = {
        "door": door,
        "num_seqs": num_seqs,
        "num_queries": num_queries,
        "block_size": draw(st.one_of(st.sampled_from(SMALL_BLOCKS), st.sampled_from(BIG_BLOCKS))),
        "meta": (),  # torch-cpu: the arguments moved to the meta device
        **{name: guarded((num_seqs,), dt[name], rng) for name in OUTPUTS},
        "sampled_token_ids": sampled[:, None] if sampled_layout == "[q][:, None]" else sampled,
        "block_tables": guarded((num_seqs, width), dt["block_tables"], rng,
                                row_pad=draw(st.sampled_from([0, 0, 1, 5, 16]))),
    }
    fill_advancing_rows(case, rng)
    faults = []
    for name, error, applies, mutate in draw(st.lists(st.sampled_from(FAULTS), min_size=1, max_size=2, unique_by=id)) \
            if draw(st.booleans()) else []:
        if applies(case):
            with np.errstate(all="ignore"):  # casts of huge values to float16 and the like
                mutate(case, rng)
            faults.append(Fault(name, error))
    if door != "torch-cpu" and draw(st.booleans()):  # the op only reads these (torch warns on them)
        for name in ("sampled_token_ids", "block_tables"):
            case[name].flags.writeable = False
    return door, case, faults


def golden(case, roots):
    """The bytes every buffer must hold after a valid call: the four outputs as the reference
    computes them, everything else as it is."""
    want = reference.advance_step_flashattn(case["num_seqs"], case["num_queries"], case["block_size"],
                                            *(case[name] for name in NAMES))
    return expected_bytes(roots, [(case[name], want[name]) for name in OUTPUTS])


def call_for(door, case):
    ints = (case["num_seqs"], case["num_queries"], case["block_size"])
    if door == "torch-cpu":
        tensors = [to_torch(case[name]) for name in NAMES]
        tensors = [t.to("meta") if name in case["meta"] else t for name, t in zip(NAMES, tensors)]
        return lambda: advance_step_flashattn(*ints, *tensors)
    backend = door.split("-")[1]
    return lambda: advance_step_flashattn(*ints, *(case[name] for name in NAMES), backend=backend)


@fuzz_settings()
@given(drawn=cases())
def test_fuzz_advance_step_flashattn(drawn):
    door, case, faults = drawn
    roots = owners(*case.values())
    check = None
    if not faults:
        expected = golden(case, roots)

        def check(result):
            assert result is None or door == "numpy-emu", f"{door}: returned {result!r}"
            assert_bytes(roots, expected, f"{door}: ")

    check_call(OP, call_for(door, case), buffers=roots, faults=faults, check=check, door=door,
               package="adv_step_flash")
