"""Fuzzer of lightning_indexer: random front doors, layouts, shapes, dtypes, lengths and block
tables, with faults planted on top.

A valid case mixes query BSND / TND with key PA_BSND / BSND / TND; 0-4 batches of unequal
lengths, empty ones included (act_s1 or act_s2 = 0), act_s1 > act_s2; sparse_mode 0 / 3;
compressed keys (cmp_ratio 1 / 2 / 4 / 128 with residuals in [0, r), optional under mode 0);
sparse_count below and above the visible length (up to 8192); float16 / bfloat16 / float32
(float32 on the CPU only) with weights of the query's dtype or float32; int32 / int64 lengths and
block tables; block tables with shuffled, shared and unused blocks (unused entries hold junk that
is never read); N2 dividing N1; return_value either way; magnitudes from tiny to large, zeros and
exactly tied keys. "numpy-emu" cases keep to the AscendC kernel's documented limits (float16 /
bfloat16, N2 = 1, D = 128, N1 <= 64, block_size a multiple of 16 <= 1024); going outside them is
a planted fault there (TypeError for float32, ValueError otherwise, as the op README documents).

Values are finite and bounded so that no score overflows to inf: NaN / inf inputs are outside
the op's contract (its README), so they are left out.

Every case must end as the golden result (li_cases' comparison, the README's tolerance rule:
indices exact where the scores are separated; no input byte or guard byte changed) or as the
documented exception with every buffer unchanged; see :mod:`ascend_ops.devkit.fuzzing`.
``./dev test`` runs the quick profile, ``./dev fuzz`` 10,000 cases.
"""
from __future__ import annotations


import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from ascend_ops.devkit.fuzzing import (Fault, assert_bytes, check_call, expected_bytes, front_doors, fuzz_settings,
                                      guarded, owners, to_torch)
from ascend_ops.devkit.testing import to_bf16_bits
from ascend_ops.lightning_indexer import lightning_indexer

from li_cases import assert_topk, reference_rows, values_of

OP = "lightning_indexer"
TENSORS = ("query", "key", "weights", "actual_seq_lengths_query", "actual_seq_lengths_key", "block_table",
           "cmp_residual_k")
ATTRIBUTES = ("layout_query", "layout_key", "sparse_count", "sparse_mode", "cmp_ratio", "return_value")
LENGTHS = ("actual_seq_lengths_query", "actual_seq_lengths_key")
INDEX_DTYPES = (np.int32, np.int64)
Q_RANK = {"BSND": 4, "TND": 3}
K_RANK = {"PA_BSND": 4, "BSND": 4, "TND": 3}
EMU_BLOCK_SIZES = (16, 32, 48, 64)
CPU_BLOCK_SIZES = (1, 2, 3, 5, 8, 16, 64)


DOORS = front_doors("ascend_ops.lightning_indexer")


# --- valid cases ------------------------------------------------------------------------------
def float_data(shape, dtype, rng, scale, spread, zeros):
    """Finite values N(0, 1) * 2**(scale +- spread), a fraction ``zeros`` of them 0, in the op's
    NumPy representation (bfloat16 as uint16 bits)."""
    x = rng.standard_normal(shape) * np.exp2(scale + rng.integers(-spread, spread + 1, size=shape))
    x[rng.random(shape) < zeros] = 0.0
    if dtype == "float16":
        return np.clip(x, -65504, 65504).astype(np.float16)
    x = x.astype(np.float32)
    return to_bf16_bits(x) if dtype == "bfloat16" else x


def junk(shape, dtype, num_blocks, rng):
    """Block ids that no batch reads: anything, out of range included."""
    info = np.iinfo(dtype)
    choices = np.array([-1, info.min, info.max, num_blocks, num_blocks + 7], dtype=dtype)
    return choices[rng.integers(len(choices), size=shape)]


def block_table(used, num_blocks, shared, width, dtype, rng):
    """[B, width]: batch b reads its first used[b] entries, distinct shuffled blocks (or any
    blocks when ``shared``); the rest is junk."""
    table = junk((len(used), width), dtype, num_blocks, rng)
    ids = rng.integers(num_blocks, size=sum(used)) if shared else rng.permutation(num_blocks)
    at = 0
    for b, u in enumerate(used):
        table[b, :u] = ids[at:at + u]
        at += u
    return table


@st.composite
def cases(draw):
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    door = draw(st.sampled_from(DOORS))
    emu = door == "numpy-emu"
    dtype = draw(st.sampled_from(("float16", "bfloat16") if emu else ("float16", "bfloat16", "float32")))
    layout_query = draw(st.sampled_from(("BSND", "TND")))
    layout_key = draw(st.sampled_from(("PA_BSND", "BSND", "TND")))
    batch = draw(st.integers(0, 4))
    n2 = 1 if emu else draw(st.sampled_from((1, 1, 2, 3)))
    n1 = n2 * draw(st.sampled_from((1, 2, 3, 4, 8) if emu else (1, 2, 3, 4)))
    d = 128 if emu else draw(st.integers(1, 24))
    act_s1 = draw(st.lists(st.integers(0, 6), min_size=batch, max_size=batch))
    act_s2 = draw(st.lists(st.one_of(st.integers(0, 8), st.integers(0, 300)), min_size=batch, max_size=batch))
    # Exponents per tensor: float16 saturates at 65504; bfloat16 / float32 stay far from float32
    # overflow (every score < 2**110) and underflow.
    low, high = (-6, 10) if dtype == "float16" else (-20, 26)
    spread = draw(st.sampled_from((0, 0, 2, 4)))
    zeros = draw(st.sampled_from((0.0, 0.0, 0.3, 0.9)))
    pool = draw(st.sampled_from((0, 0, 0, 1, 3)))  # keys repeat `pool` vectors: exact ties

    def floats(shape, as_dtype):
        return guarded(shape, np.uint16 if as_dtype == "bfloat16" else as_dtype, rng,
                       values=float_data(shape, as_dtype, rng, draw(st.integers(low, high)), spread, zeros))

    def indices(values, as_dtype):
        values = np.asarray(values, dtype=np.int64).astype(as_dtype)
        return guarded(values.shape, as_dtype, rng, values=values)

    def keys(shape, row_pad=0):
        if not pool:
            values = float_data(shape, dtype, rng, draw(st.integers(low, high)), spread, zeros)
        else:
            vectors = float_data((pool, n2, d), dtype, rng, draw(st.integers(low, high)), spread, zeros)
            values = vectors[rng.integers(pool, size=int(np.prod(shape[:-2])))].reshape(shape)
        return guarded(shape, np.uint16 if dtype == "bfloat16" else values.dtype, rng, row_pad=row_pad, values=values)

    c = dict(door=door, dtype=dtype, layout_query=layout_query, layout_key=layout_key, block_table=None,
             sparse_mode=draw(st.sampled_from((3, 0))), return_value=draw(st.booleans()))
    w_dtype = draw(st.sampled_from((dtype, "float32")))
    lq_dtype, lk_dtype, bt_dtype = (draw(st.sampled_from(INDEX_DTYPES)) for _ in range(3))
    if layout_query == "BSND":
        lead = (batch, max(act_s1, default=0) + draw(st.integers(0, 2)))
        c["actual_seq_lengths_query"] = indices(act_s1, lq_dtype) if draw(st.booleans()) else None
    else:
        lead = (sum(act_s1) + draw(st.integers(0, 2)),)
        c["actual_seq_lengths_query"] = indices(np.cumsum(act_s1, dtype=np.int64), lq_dtype)
    c["query"] = floats(lead + (n1, d), dtype)
    # weights [.., N1] or with a trailing 1 (vllm-ascend's and ms_custom_ops' form)
    c["weights"] = floats(lead + (n1,) + ((1,) if draw(st.integers(0, 3)) == 0 else ()), w_dtype)

    if layout_key == "PA_BSND":
        bs = draw(st.sampled_from(EMU_BLOCK_SIZES if emu else CPU_BLOCK_SIZES))
        used = [-(-s // bs) for s in act_s2]
        shared = draw(st.booleans())
        num_blocks = (draw(st.integers(1, max(1, sum(used)))) if shared else sum(used)) + draw(st.integers(0, 3))
        width = max(used, default=0) + draw(st.integers(0, 2))
        # the cache as allocated: blocks apart by a whole block (vLLM's K half of [.., 2, ...]) or an
        # odd gap (a pool slice), each block packed
        c["key"] = keys((num_blocks, bs, n2, d), row_pad=draw(st.sampled_from((0, 0, 0, bs * n2 * d, 3))))
        c["block_table"] = indices(block_table(used, num_blocks, shared, width, bt_dtype, rng), bt_dtype)
        c["actual_seq_lengths_key"] = indices(act_s2, lk_dtype)
    elif layout_key == "BSND":
        s2 = max(act_s2, default=0) + draw(st.integers(0, 3))
        c["key"] = keys((batch, s2, n2, d))
        c["actual_seq_lengths_key"] = indices(act_s2, lk_dtype) if draw(st.booleans()) else None
    else:
        t2 = sum(act_s2) + draw(st.integers(0, 3))
        c["key"] = keys((t2, n2, d))
        c["actual_seq_lengths_key"] = indices(np.cumsum(act_s2, dtype=np.int64), lk_dtype)

    # Compressed keys (DeepSeek-V4): the residuals are required under sparse_mode 3, optional under 0.
    c["cmp_ratio"] = draw(st.sampled_from((1, 1, 2, 4, 128)))
    c["cmp_residual_k"] = None
    if c["cmp_ratio"] > 1 and (c["sparse_mode"] == 3 or draw(st.booleans())):
        residual = [draw(st.one_of(st.integers(0, c["cmp_ratio"] - 1), st.just(c["cmp_ratio"] - 1), st.just(0)))
                    for _ in range(batch)]
        c["cmp_residual_k"] = indices(residual, draw(st.sampled_from(INDEX_DTYPES)))

    visible = max(act_s2, default=0)
    c["sparse_count"] = draw(st.one_of(st.integers(1, 16), st.integers(1, 400), st.just(8192),
                                       st.integers(max(1, visible - 2), visible + 2)))

    # Half the cases get 1 or 2 faults, each picked among those that apply now (the rng rather
    # than hypothesis: its choices lean heavily toward the first entries).
    faults = []
    for _ in range(int(rng.integers(1, 3)) if rng.random() < 0.5 else 0):
        applicable = [f for f in FAULTS if f[0] not in {x.what for x in faults} and f[2](c)]
        odds = np.array([FAULT_WEIGHT.get(f[0], 1.0) for f in applicable])
        name, error, _, mutate = applicable[rng.choice(len(applicable), p=odds / odds.sum())]
        with np.errstate(all="ignore"):  # casts of large values to integer dtypes
            mutate(c, rng)
        faults.append(Fault(name, error))
    return c, faults


# --- faults: (name, exception, applies(case), mutate(case, rng)) -------------------------------
# Each mutation, applied to whatever state the case is in, makes the case invalid with its own
# exception; later faults may hide an earlier one but never make the case valid again.
def pick(rng, choices):
    return choices[int(rng.integers(len(choices)))]


def replace(c, name, shape, rng, dtype=None, values=None):
    """c[name] becomes a fresh guarded array of ``shape`` (its old values, repeated or cut)."""
    old = c[name]
    values = np.resize(old, shape) if values is None else values
    c[name] = guarded(shape, old.dtype if dtype is None else dtype, rng, values=values)


def query_dtype(c):
    """The dtype the op reads query as: "bfloat16", "float16", ..."""
    q = c["query"]
    return "bfloat16" if c["dtype"] == "bfloat16" and q.dtype == np.uint16 else q.dtype.name


def retype(name, choices):
    """c[name] gets one of ``choices(case)`` (numpy dtypes), same shape and values."""
    def mutate(c, rng):
        new = np.dtype(pick(rng, choices(c)))
        replace(c, name, c[name].shape, rng, dtype=new, values=c[name].astype(new))
    return mutate


def key_dtypes(c):
    """Dtypes key may not have: any but the one query is read as."""
    return [np.float64, np.int32] + [f for f in (np.float16, np.float32) if np.dtype(f).name != query_dtype(c)]


def weights_dtypes(c):
    """Dtypes weights may not have: any but query's and float32."""
    return [np.float64, np.int32, np.bool_] + ([np.float16] if query_dtype(c) != "float16" else [])


def rerank(name):
    """One more axis (of 2 for weights, where a trailing 1 is legal), or the first two merged."""
    def mutate(c, rng):
        s = c[name].shape
        # already [.., N1, 1] (not [.., N1, 2], which another fault may have made)
        if name == "weights" and len(s) > len(c["query"].shape) - 1 and s[-1] == 1:
            s = s[:-1]
        if len(s) < 2 or rng.random() < 0.5:
            new = s + ((2,) if name == "weights" else (1,))
            replace(c, name, new, rng, values=np.repeat(c[name].reshape(s + (1,)), new[-1], axis=-1))
        else:
            new = (s[0] * s[1],) + s[2:]
            replace(c, name, new, rng, values=c[name].reshape(new))
    return mutate


def reshape(name, shape_of):
    def mutate(c, rng):
        replace(c, name, shape_of(c[name].shape, c, rng), rng)
    return mutate


def bump(s, c, rng):
    """One axis of ``s`` grown by 1 or 2."""
    axis = int(rng.integers(len(s)))
    return s[:axis] + (s[axis] + int(rng.integers(1, 3)),) + s[axis + 1:]


def batch_of(c):
    """B as the op sees it: from query (BSND) or from its cumulative ends (TND)."""
    lq = c["actual_seq_lengths_query"]
    return lq.shape[0] if c["layout_query"] == "TND" and lq is not None else c["query"].shape[0]


def other_batch(c, rng):
    b = batch_of(c)
    return pick(rng, [b + 1, b - 1] if b > 0 else [b + 1])


def strided(name):
    """A view of a bigger allocation holding the same values: rows apart, or every other element
    of the last axis (only that for a PA_BSND key, whose blocks may lie apart)."""
    def mutate(c, rng):
        a = c[name]
        paged_key = name == "key" and c["layout_key"] == "PA_BSND"
        if a.shape[0] > 1 and not paged_key and (a.shape[-1] == 1 or rng.random() < 0.5):
            c[name] = guarded(a.shape, a.dtype, rng, row_pad=int(rng.integers(1, 4)), values=a)
        else:
            wide = guarded(a.shape[:-1] + (2 * a.shape[-1],), a.dtype, rng)[..., ::2]
            wide[...] = a
            c[name] = wide
    return mutate


def can_stride(name):
    # An empty array or one whose axes are all 1 is contiguous whatever its strides; a PA_BSND
    # key is refused only for an unpacked block (a last axis > 1).
    return lambda c: c[name] is not None and c[name].size > 1 and c[name].ndim >= 1 and \
        (c[name].shape[-1] > 1 or (c[name].shape[0] > 1 and not (name == "key" and c["layout_key"] == "PA_BSND")))


def int_vector(name, min_size=1):
    """applies: c[name] is a 1-D integer array of at least ``min_size`` entries."""
    return lambda c: c[name] is not None and c[name].ndim == 1 and c[name].dtype.kind == "i" and \
        c[name].shape[0] >= min_size


def present(name):
    return lambda c: c[name] is not None


def ranked(*names):
    """applies: query / key / weights still have their layouts' ranks."""
    want = {"query": lambda c: Q_RANK.get(c["layout_query"]), "weights": lambda c: Q_RANK.get(c["layout_query"], 0) - 1,
            "key": lambda c: K_RANK.get(c["layout_key"])}
    return lambda c: all(c[n].ndim == want[n](c) for n in names)


def always(c):
    return True


def negative_length(name):
    def mutate(c, rng):
        a = c[name]
        a[int(rng.integers(len(a)))] = pick(rng, [-1, -7, np.iinfo(a.dtype).min])
    return mutate


def residual_out_of_range(c, rng):
    """One residual at or past cmp_ratio (or negative): outside [0, cmp_ratio)."""
    a, r = c["cmp_residual_k"], c["cmp_ratio"]
    a[int(rng.integers(len(a)))] = pick(rng, [r, r + 1, -1, np.iinfo(a.dtype).max]) if 1 <= r <= 128 else -1


def query_lengths_beyond(c, rng):
    rows = c["query"].shape[1 if c["layout_query"] == "BSND" else 0]
    if c["actual_seq_lengths_query"] is None:  # BSND default: act_s1 = S1 everywhere
        c["actual_seq_lengths_query"] = guarded((c["query"].shape[0],), np.int32, rng, values=rows)
    lq = c["actual_seq_lengths_query"]
    # TND: the last cumulative end, so the ends still never decrease
    at = int(rng.integers(len(lq))) if c["layout_query"] == "BSND" else -1
    lq[at] = rows + int(rng.integers(1, 4))


def can_query_lengths_beyond(c):
    lq = c["actual_seq_lengths_query"]
    if not ranked("query")(c):
        return False
    if c["layout_query"] == "BSND" and lq is None:
        return c["query"].shape[0] > 0
    return int_vector("actual_seq_lengths_query")(c)


def key_capacity(c):
    """How many keys a batch may have: S2, T2 or max_blocks * block_size."""
    k = c["key"]
    if c["layout_key"] == "PA_BSND":
        return c["block_table"].shape[1] * k.shape[1]
    return k.shape[1 if c["layout_key"] == "BSND" else 0]


def key_lengths_beyond(c, rng):
    if c["actual_seq_lengths_key"] is None:  # BSND default: act_s2 = S2 everywhere
        c["actual_seq_lengths_key"] = guarded((c["key"].shape[0],), np.int32, rng, values=c["key"].shape[1])
    lk = c["actual_seq_lengths_key"]
    at = int(rng.integers(len(lk))) if c["layout_key"] != "TND" else -1
    lk[at] = key_capacity(c) + int(rng.integers(1, 4))


def can_key_lengths_beyond(c):
    lk = c["actual_seq_lengths_key"]
    if not ranked("key")(c):
        return False
    if c["layout_key"] == "PA_BSND":
        bt = c["block_table"]
        if bt is None or bt.ndim != 2:
            return False
    if c["layout_key"] == "BSND" and lk is None:
        return c["key"].shape[0] > 0
    return int_vector("actual_seq_lengths_key")(c)


def decreasing(name, layout):
    def applies(c):
        return c[layout] == "TND" and int_vector(name, 2)(c)

    def mutate(c, rng):
        ends = c[name]
        b = int(rng.integers(1, len(ends)))
        ends[b] = ends[b - 1] - int(rng.integers(1, 4))  # below the previous end, or negative
    return applies, mutate


def read_blocks(c):
    """[(b, i)]: the block-table entries the op reads (i < the blocks batch b uses)."""
    lk, bt, bs = c["actual_seq_lengths_key"], c["block_table"], c["key"].shape[1]
    return [(b, i) for b in range(min(len(lk), bt.shape[0]))
            for i in range(min(-(-max(int(lk[b]), 0) // bs), bt.shape[1]))]


def paged(c):
    return c["layout_key"] == "PA_BSND" and ranked("key")(c) and int_vector("actual_seq_lengths_key", 0)(c) and \
        c["block_table"] is not None and c["block_table"].ndim == 2 and c["block_table"].dtype.kind == "i"


def bad_block_id(c, rng):
    bt = c["block_table"]
    b, i = pick(rng, read_blocks(c))
    info = np.iinfo(bt.dtype)
    bt[b, i] = pick(rng, [c["key"].shape[0], c["key"].shape[0] + 5, info.max, -1, info.min])


def narrow_table(c, rng):
    bt, bs = c["block_table"], c["key"].shape[1]
    width = max(0, -(-int(c["actual_seq_lengths_key"].max()) // bs) - int(rng.integers(1, 3)))
    replace(c, "block_table", (bt.shape[0], width), rng, values=bt[:, :width])


def setting(name, choices):
    return lambda c, rng: c.update({name: pick(rng, choices)})


# The AscendC kernel's limits, faults on "numpy-emu" only.
def on_emu(*more):
    return lambda c: c["door"] == "numpy-emu" and all(f(c) for f in more)


def emu_float32(c, rng):
    dtype = query_dtype(c)
    for name in ("query", "key", "weights"):
        replace(c, name, c[name].shape, rng, dtype=np.float32, values=values_of(c[name], dtype).astype(np.float32))
    c["dtype"] = "float32"


def emu_head_dim(c, rng):
    d = pick(rng, [32, 64, 136])
    for name in ("query", "key"):
        replace(c, name, c[name].shape[:-1] + (d,), rng)


def emu_heads(c, rng):
    n1 = int(rng.integers(65, 80))
    replace(c, "query", c["query"].shape[:-2] + (n1, c["query"].shape[-1]), rng)
    replace(c, "weights", c["weights"].shape[:-1] + (n1,), rng)


def emu_block_size(c, rng):
    # Larger blocks, so every length stays within the table and no unused entry gets read.
    s = c["key"].shape
    replace(c, "key", (s[0], s[1] + 8) + s[2:], rng)


FAULTS = [
    ("query dtype", TypeError, always, retype("query", lambda c: [np.float64, np.int32, np.bool_, np.int8])),
    ("key dtype", TypeError, always, retype("key", key_dtypes)),
    ("weights dtype", TypeError, always, retype("weights", weights_dtypes)),
    *[(f"{name} dtype", TypeError, present(name),
       retype(name, lambda c: [np.int16, np.int8, np.uint8, np.float32, np.float64, np.bool_]))
      for name in (*LENGTHS, "block_table")],
    ("query rank", ValueError, always, rerank("query")),
    ("key rank", ValueError, always, rerank("key")),
    ("weights rank", ValueError, always, rerank("weights")),
    *[(f"{name} rank", ValueError, present(name), rerank(name)) for name in (*LENGTHS, "block_table")],
    ("N2 not dividing N1", ValueError, ranked("query"),
     reshape("key", lambda s, c, rng: s[:-2] + (c["query"].shape[-2] + 1, s[-1]))),
    ("key D", ValueError, always, reshape("key", lambda s, c, rng: s[:-1] + (s[-1] + int(rng.integers(1, 4)),))),
    ("weights shape", ValueError, always, reshape("weights", bump)),
    ("actual_seq_lengths_query B", ValueError,
     lambda c: c["layout_query"] == "BSND" and present("actual_seq_lengths_query")(c),
     reshape("actual_seq_lengths_query", lambda s, c, rng: (other_batch(c, rng),) + s[1:])),
    ("actual_seq_lengths_key B", ValueError, present("actual_seq_lengths_key"),
     reshape("actual_seq_lengths_key", lambda s, c, rng: (other_batch(c, rng),) + s[1:])),
    ("block_table B", ValueError, present("block_table"),
     reshape("block_table", lambda s, c, rng: (other_batch(c, rng),) + s[1:])),
    *[(f"{name} negative", ValueError, int_vector(name), negative_length(name)) for name in LENGTHS],
    ("act_s1 beyond S1 / T1", ValueError, can_query_lengths_beyond, query_lengths_beyond),
    ("act_s2 beyond S2 / T2 / the table", ValueError, can_key_lengths_beyond, key_lengths_beyond),
    *[(f"{name} decreasing", ValueError, *decreasing(name, layout))
      for name, layout in zip(LENGTHS, ("layout_query", "layout_key"))],
    ("block id out of range", IndexError, lambda c: paged(c) and bool(read_blocks(c)), bad_block_id),
    ("block_table too narrow", ValueError,
     lambda c: paged(c) and len(c["actual_seq_lengths_key"]) > 0 and c["actual_seq_lengths_key"].max() > 0,
     narrow_table),
    ("cmp_residual_k dtype", TypeError, present("cmp_residual_k"),
     retype("cmp_residual_k", lambda c: [np.int16, np.int8, np.uint8, np.float32, np.float64, np.bool_])),
    ("cmp_residual_k rank", ValueError, present("cmp_residual_k"), rerank("cmp_residual_k")),
    ("cmp_residual_k B", ValueError, present("cmp_residual_k"),
     reshape("cmp_residual_k", lambda s, c, rng: (other_batch(c, rng),) + s[1:])),
    ("cmp_residual_k out of range", ValueError, int_vector("cmp_residual_k"), residual_out_of_range),
    ("cmp_residual_k missing", ValueError,
     lambda c: present("cmp_residual_k")(c) and c["sparse_mode"] == 3 and c["cmp_ratio"] > 1,
     setting("cmp_residual_k", [None])),
    ("cmp_residual_k with cmp_ratio 1", ValueError, present("cmp_residual_k"), setting("cmp_ratio", [1])),
    ("cmp_ratio", ValueError, always, setting("cmp_ratio", [0, -1, 129, 256, 2**40])),
    ("sparse_count", ValueError, always, setting("sparse_count", [0, -1, -(2**31), 8193, 10**6, 2**40])),
    ("sparse_mode", ValueError, always, setting("sparse_mode", [1, 2, 4, -1, -3, 100])),
    ("layout_query", ValueError, always, setting("layout_query", ["BNSD", "PA_BSND", "bsnd", "", "TND "])),
    ("layout_key", ValueError, always, setting("layout_key", ["PA_BNSD", "BNSD", "tnd", "", "PA"])),
    *[(f"{name} not contiguous", ValueError, can_stride(name), strided(name)) for name in TENSORS],
    ("block_table missing", ValueError, lambda c: c["layout_key"] == "PA_BSND" and present("block_table")(c),
     setting("block_table", [None])),
    ("actual_seq_lengths_key missing", ValueError,
     lambda c: c["layout_key"] in ("PA_BSND", "TND") and present("actual_seq_lengths_key")(c),
     setting("actual_seq_lengths_key", [None])),
    ("actual_seq_lengths_query missing", ValueError,
     lambda c: c["layout_query"] == "TND" and present("actual_seq_lengths_query")(c),
     setting("actual_seq_lengths_query", [None])),
    ("block_table without PA_BSND", ValueError,
     lambda c: c["layout_key"] in ("BSND", "TND") and c["block_table"] is None,
     lambda c, rng: c.update(block_table=guarded((batch_of(c), 2), np.int32, rng, values=0))),
    ("emu: float32", TypeError, on_emu(), emu_float32),
    ("emu: N2 = 2", ValueError, on_emu(ranked("query", "key")),
     reshape("key", lambda s, c, rng: s[:-2] + (2, s[-1]))),
    ("emu: D != 128", ValueError, on_emu(), emu_head_dim),
    ("emu: N1 > 64", ValueError, on_emu(ranked("query", "weights")), emu_heads),
    ("emu: block_size not a multiple of 16", ValueError,
     on_emu(lambda c: c["layout_key"] == "PA_BSND", ranked("key")), emu_block_size),
]


# The only IndexError, and it needs a paged key with a block that is read: drawn more often.
FAULT_WEIGHT = {"block id out of range": 4.0}


# --- the call and the check --------------------------------------------------------------------
def call_for(c):
    bf16 = c["dtype"] == "bfloat16"
    attributes = {n: c[n] for n in ATTRIBUTES}
    if c["door"] == "torch-cpu":
        tensors = [to_torch(c[n], bfloat16=bf16) for n in TENSORS]
        return lambda: lightning_indexer(*tensors[:3], **dict(zip(TENSORS[3:], tensors[3:])), **attributes)
    backend = c["door"].split("-")[1]
    return lambda: lightning_indexer(*(c[n] for n in TENSORS[:3]), **{n: c[n] for n in TENSORS[3:]}, **attributes,
                                     backend=backend, dtype="bfloat16" if bf16 else None)


def as_numpy(x):
    return x if x is None or isinstance(x, np.ndarray) else x.numpy()


def golden_check(c, roots):
    """check(result) of a valid case: the outputs pass li_cases' rule against the float64
    reference and every buffer still holds ``expected`` (taken now, before the call)."""
    expected = expected_bytes(roots)
    k = c["sparse_count"]

    def check(result):
        indices, values = (as_numpy(x) for x in result)
        q = c["query"]
        shape = (q.shape[:1] if c["layout_query"] == "TND" else q.shape[:2]) + (c["key"].shape[-2], k)
        assert indices.dtype == np.int32 and indices.shape == shape, f"indices {indices.dtype} {indices.shape}"
        if c["return_value"]:
            assert values is not None and values.dtype == np.float32 and values.shape == shape
        else:
            assert values is None
        args = {n: c[n] for n in TENSORS}
        if args["weights"].ndim == q.ndim:  # [.., N1, 1]: the reference takes the spec's [.., N1]
            args["weights"] = args["weights"][..., 0]
        rows = reference_rows(dict(args, layout_query=c["layout_query"], layout_key=c["layout_key"],
                                   sparse_count=k, cmp_ratio=c["cmp_ratio"]), c["dtype"], c["sparse_mode"])
        assert_topk(indices, values, rows, k)
        assert_bytes(roots, expected, f"{c['door']}: ")
    return check


@fuzz_settings()
@given(drawn=cases())
def test_fuzz_lightning_indexer(drawn):
    c, faults = drawn
    roots = owners(*(c[n] for n in TENSORS))
    check = None if faults else golden_check(c, roots)
    check_call(OP, call_for(c), buffers=roots, faults=faults, check=check, door=c["door"])
