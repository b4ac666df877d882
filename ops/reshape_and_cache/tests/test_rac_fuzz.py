"""Fuzzer of reshape_and_cache: random shapes, dtypes, strides, front doors, slot patterns
(padding, huge negative slots, duplicates, empty batches) and call forms (key + value or
key-only, ND or NZ caches, cache views: K and V views of one allocation in every layout of
rac_views, [T, H, D] or [T, H*D] with head_num), with faults planted on top.

Every case must end as the golden result (bit exact, guard bytes around every tensor
unchanged) or as the documented exception with every buffer unchanged; see
:mod:`ascend_ops.devkit.fuzzing`. ``./dev test`` runs the quick profile, ``./dev fuzz``
10,000 cases under the sanitizer build.
"""
from __future__ import annotations


import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from ascend_ops.devkit.fuzzing import (Fault, assert_bytes, check_call, expected_bytes, front_doors, fuzz_settings,
                                      guarded, locate, owners, to_torch)
from ascend_ops.reshape_and_cache import reference, reshape_and_cache

from rac_views import layouts as view_layouts

OP = "reshape_and_cache"
NUMPY_DTYPES = {"float16": np.float16, "bfloat16": np.uint16, "float32": np.float32, "int8": np.int8}


DOORS = front_doors("ascend_ops.reshape_and_cache")


# --- faults: (name, exception, applies(case), mutate(case, rng)) -----------------------------
def _retype(name, dtypes):
    def mutate(c, rng):
        c[name] = c[name].astype(dtypes[int(rng.integers(len(dtypes)))])
    return mutate


def _reshape(name, shape_of):
    def mutate(c, rng):
        c[name] = guarded(shape_of(c[name].shape), c[name].dtype, rng)
    return mutate


def _slot_out_of_range(c, rng):
    slots = c["slot_mapping"]
    # num_blocks * block_size in either layout: the cache holds that many rows of H*Dk elements
    row = int(np.prod(c["key"].shape[1:])) if c["key"].ndim >= 2 else 1
    slots_total = c["key_cache"].size // max(row, 1)
    big = np.iinfo(slots.dtype).max
    slots[int(rng.integers(len(slots)))] = [slots_total, slots_total + 7, big][int(rng.integers(3))]


def _non_contiguous_cache(name):
    def mutate(c, rng):
        shape = c[name].shape
        wide = guarded(shape[:-1] + (2 * shape[-1],), c[name].dtype, rng)
        c[name] = wide[..., ::2]
    return mutate


def _inner_strided_key(c, rng):
    t, h, d = c["key"].shape
    c["key"] = guarded((t, d, h), c["key"].dtype, rng).transpose(0, 2, 1)


def _other_float_dtype(c, rng):
    others = [d for d in (np.float16, np.float32, np.int8) if d != c["value"].dtype]
    c["value"] = c["value"].astype(others[int(rng.integers(len(others)))])


def ranked(**ranks):
    """applies(case): the named arguments still have these ranks (no earlier fault changed them)."""
    return lambda c: all(c[name].ndim == n for name, n in ranks.items())


def always(c):
    return True


def needs(*names, then=always):
    """applies(case): the case has these arguments (key-only cases have no value / value_cache)."""
    return lambda c: all(n in c for n in names) and then(c)


FAULTS = [
    ("key dtype", TypeError, always, _retype("key", [np.float64, np.int32, np.bool_])),
    ("value dtype", TypeError, needs("value"), _other_float_dtype),
    ("key_cache dtype", TypeError, always, _retype("key_cache", [np.float64, np.int64])),
    ("slot dtype", TypeError, always, _retype("slot_mapping", [np.float32, np.int16, np.uint8])),
    ("key rank", ValueError, always, _reshape("key", lambda s: s + (1, 1) if len(s) == 2 else s + (1,))),
    ("slot rank", ValueError, always, lambda c, rng: c.update(slot_mapping=c["slot_mapping"][None])),
    ("value_cache rank", ValueError, needs("value_cache", then=ranked(value_cache=4)),
     _reshape("value_cache", lambda s: s[:2] + (s[2] * s[3],))),
    ("value tokens", ValueError, needs("value"), _reshape("value", lambda s: (s[0] + 1,) + s[1:])),
    # ND: H + 1 heads; NZ: H*Dk/F + 1 fractal rows (a changed block_size alone is valid key-only)
    ("key_cache heads", ValueError, ranked(key_cache=4),
     _reshape("key_cache", lambda s: (s[0], s[1] + 1, s[2] + 1, s[3]))),
    ("value_cache Dv", ValueError, needs("value_cache", then=ranked(value_cache=4)),
     _reshape("value_cache", lambda s: s[:3] + (s[3] + 2,))),
    ("value_cache blocks", ValueError, needs("value_cache"), _reshape("value_cache", lambda s: (s[0] + 1,) + s[1:])),
    ("value without value_cache", ValueError, needs("value_cache"), lambda c, rng: c.pop("value_cache")),
    ("T' > T", ValueError, always,
     lambda c, rng: c.update(slot_mapping=np.full(c["key"].shape[0] + 1, -1, c["slot_mapping"].dtype))),
    # A last dim of one element is contiguous whatever its stride (other strides are views users pass).
    ("key_cache not contiguous", ValueError, lambda c: c["key_cache"].size > 1 and c["key_cache"].shape[-1] > 1,
     _non_contiguous_cache("key_cache")),
    # So is an empty one: T = 0 is left alone.
    ("key [H, Dk] not contiguous", ValueError,
     lambda c: c["key"].ndim == 3 and c["key"].shape[0] > 0 and c["key"].shape[1] > 1 and c["key"].shape[2] > 1,
     _inner_strided_key),
    ("slot out of range", IndexError,
     lambda c: c["slot_mapping"].dtype.kind == "i" and c["slot_mapping"].ndim == 1 and len(c["slot_mapping"]) > 0,
     _slot_out_of_range),
]


# --- the quantising modes (kv_cache_dtype != "auto"): their own faults -----------------------
QUANT_CACHE = {"int8": np.int8, "fp8": np.uint8, "fp8_e4m3": np.uint8, "fp8_e5m2": np.uint8}


def _scale_value(value):
    def mutate(c, rng):
        name = ("k_scale", "v_scale")[int(rng.integers(2))] if "v_scale" in c else "k_scale"
        scale = c[name].copy()
        scale.reshape(-1)[int(rng.integers(scale.size))] = value
        c[name] = scale
    return mutate


def _scale_shape(c, rng):
    """size + H*Dk + 1 is neither 1, H nor H*Dk for any of the valid sizes 1, H, H*Dk."""
    row = int(np.prod(c["key"].shape[1:]))
    c["k_scale"] = np.ones(c["k_scale"].size + row + 1, np.float32)


QUANT_FAULTS = [
    ("scale zero", ValueError, always, _scale_value(0.0)),
    ("scale negative", ValueError, always, _scale_value(-2.0)),
    ("scale nan", ValueError, always, _scale_value(np.nan)),
    ("scale inf", ValueError, always, _scale_value(np.inf)),
    ("scale shape", ValueError, always, _scale_shape),
    ("scale dtype", TypeError, always, lambda c, rng: c.update(k_scale=c["k_scale"].astype(np.float64))),
    ("offset nan", ValueError, lambda c: "k_offset" in c,
     lambda c, rng: c.update(k_offset=np.full_like(c["k_offset"], np.nan))),
    ("quantised cache dtype", TypeError, always,
     lambda c, rng: c.update(key_cache=c["key_cache"].view(np.uint8 if c["key_cache"].dtype == np.int8 else np.int8))),
]
SCALE_NAMES = ("k_scale", "v_scale", "k_offset", "v_offset")


def finite_rows(shape, dtype, rng, scale):
    """No NaN (outside the quantising contract); float16 overflows to +-inf, which saturates. As
    the dtype's bits for bfloat16 (uint16)."""
    x = (rng.standard_normal(shape) * scale).astype(np.float32)
    if dtype == np.uint16:
        return (x.view(np.uint32) >> 16).astype(np.uint16)
    with np.errstate(over="ignore"):
        return x.astype(dtype)


def scale_of(rng, heads, d, offset=False):
    shape = [(), (1,), (heads,), (heads, d), (heads * d,)][int(rng.integers(5))]
    values = rng.uniform(-8, 8, shape) if offset else np.exp(rng.uniform(-6, 2, shape))
    return np.asarray(values, np.float32)


@st.composite
def cases(draw):
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    door = draw(st.sampled_from(DOORS))
    form = draw(st.sampled_from(FORMS))
    nz = "nz" in form
    views = "views" in form
    # a quantising mode: int8 on every door, fp8 where it runs (not the emulator's kernel)
    modes = ["auto", "auto", "int8"] + ([] if door == "numpy-emu" else ["fp8", "fp8_e5m2"])
    mode = draw(st.sampled_from(modes))
    quant = mode != "auto"
    dtype = draw(st.sampled_from(sorted(d for d in NUMPY_DTYPES if not (nz and d == "float32" and not quant)
                                        and not (quant and d == "int8"))))
    nd = NUMPY_DTYPES[dtype]
    cache_nd = QUANT_CACHE[mode] if quant else nd
    fractal = 32 // np.dtype(cache_nd).itemsize
    block_size = draw(st.sampled_from([1, 3, 16, 32]))
    num_blocks = draw(st.integers(1, 6))
    slots_total = num_blocks * block_size
    tokens = draw(st.integers(0, 24))
    written = draw(st.integers(0, tokens))
    heads, dk, dv = draw(st.integers(1, 4)), draw(st.integers(1, 40)), draw(st.integers(1, 40))
    if nz:  # head sizes whole fractals
        dk, dv = fractal * draw(st.integers(1, 3)), fractal * draw(st.integers(1, 3))
    layout = None
    if views:  # K and V views of one allocation: one head size
        dk = dv = draw(st.sampled_from([8, 16, 32, 64]))
        choices = view_layouts(num_blocks, block_size, heads, dk, cache_nd)
        names = sorted(n for n in choices if not (door == "numpy-emu" and n == "vllm_paged"))
        layout = choices[draw(st.sampled_from(names))]
    slot_dtype = draw(st.sampled_from([np.int32, np.int64]))
    # Distinct slots, then some padding (any negative value) and duplicates: a caller error whose
    # winner is not promised, which the emulator reports as two cores writing the same bytes
    # (the op README), so not on "numpy-emu".
    slots = np.resize(rng.permutation(slots_total), written)  # repeats past slots_total ...
    pad = rng.random(written) < draw(st.sampled_from([0.0, 0.2, 0.9]))
    # ... which are padding on the emulator, and in a quantising mode (the duplicate-winner check
    # compares the cache with the token's own bytes)
    pad[slots_total:] |= door == "numpy-emu" or quant or views
    negatives = np.array([-1, -7, np.iinfo(slot_dtype).min, -(2**40)])
    if slot_dtype == np.int32:
        negatives = negatives[:3]
    slots = np.where(pad, negatives[rng.integers(len(negatives), size=written)], slots).astype(slot_dtype)
    if door != "numpy-emu" and not quant and not views and draw(st.booleans()) and written >= 2:
        slots[-1] = slots[0]
    flat = "head_num" in form

    spread = float(draw(st.sampled_from([1.0, 100.0, 1e5])))

    def rows(d, pad):
        shape = (tokens, heads * d) if flat else (tokens, heads, d)
        values = finite_rows(shape, nd, rng, spread) if quant else None
        return guarded(shape, nd, rng, row_pad=pad, values=values)

    def cache(d):
        shape = (num_blocks, heads * d // fractal, block_size, fractal) if nz else (num_blocks, block_size, heads, d)
        return guarded(shape, cache_nd, rng)

    case = {"key": rows(dk, draw(st.sampled_from([0, 1, 13])))}
    if "key_only" not in form:
        case["value"] = rows(dv, draw(st.sampled_from([0, 0, 5])))
    if layout is not None:
        _, base_shape, make_views = layout
        flat_base = guarded((int(np.prod(base_shape)),), cache_nd, rng)
        case["key_cache"], case["value_cache"] = make_views(flat_base.reshape(base_shape))
    else:
        case["key_cache"] = cache(dk)
        if "key_only" not in form:
            case["value_cache"] = cache(dv)
    case["slot_mapping"] = guarded((written,), slot_dtype, rng, values=slots)
    attrs = {"cache_mode": layout[0] if layout else 1 if nz else 0, "head_num": heads if flat else None}
    if quant:
        attrs["kv_cache_dtype"] = mode
        case["k_scale"] = scale_of(rng, heads, dk)
        if "key_only" not in form:
            case["v_scale"] = scale_of(rng, heads, dv)
        if mode == "int8" and draw(st.booleans()):
            case["k_offset"] = scale_of(rng, heads, dk, offset=True)
            if "key_only" not in form:
                case["v_offset"] = scale_of(rng, heads, dv, offset=True)
    faults = []
    pool = FAULTS + QUANT_FAULTS if quant else FAULTS
    for name, error, applies, mutate in draw(st.lists(st.sampled_from(pool), min_size=1, max_size=2, unique_by=id)) \
            if draw(st.booleans()) else []:
        if applies(case):
            with np.errstate(all="ignore"):  # casts of NaN bit patterns
                mutate(case, rng)
            faults.append(Fault(name, error))
    return door, dtype, case, attrs, faults


# The call forms drawn: key + value or key-only, ND or NZ caches, [T, H, D] or [T, H*D] + head_num.
FORMS = ("nd", "nd", "key_only", "nz", "nz+key_only", "head_num", "nz+head_num", "views", "views+head_num")


def golden(case, attrs, roots):
    """The bytes every buffer must hold after a valid call, and the duplicated slots (the
    spec leaves open which of their tokens wins): {slot: [tokens]}."""
    want_key, want_value = reference.reshape_and_cache(
        case["key"], case.get("value"), case["key_cache"], case.get("value_cache"), case["slot_mapping"],
        **attrs, **{n: case[n] for n in SCALE_NAMES if n in case})
    tokens_of = {}
    for t, s in enumerate(case["slot_mapping"].tolist()):
        if s >= 0:
            tokens_of.setdefault(s, []).append(t)
    duplicates = {s: ts for s, ts in tokens_of.items() if len(ts) > 1}
    pairs = [(case["key_cache"], want_key)] + ([(case["value_cache"], want_value)] if "value_cache" in case else [])
    return expected_view_bytes(roots, pairs), duplicates


def expected_view_bytes(roots, pairs):
    """expected_bytes for views of any strides (K and V halves of one allocation): each written
    through a view of the same offset and strides into a copy of its root's bytes."""
    contiguous = [(v, w) for v, w in pairs if v.flags.c_contiguous]
    out = expected_bytes(roots, contiguous)
    for view, values in pairs:
        if view.flags.c_contiguous:
            continue
        index, start = locate_start(roots, view)
        target = np.ndarray(view.shape, view.dtype, buffer=out[index], offset=start, strides=view.strides)
        target[...] = values
    return out


def locate_start(roots, view):
    """(root index, byte offset of view's first element): a strided view's nbytes is not its span."""
    address = view.__array_interface__["data"][0]
    for index, root in enumerate(roots):
        start = address - root.__array_interface__["data"][0]
        if 0 <= start < root.nbytes:
            return index, start
    raise ValueError("locate_start: the view is in none of the roots")


def accept_any_duplicate_winner(case, attrs, roots, expected, duplicates):
    """Patch ``expected`` with the row the op wrote for each duplicated slot, after checking
    that it is one of the slot's tokens (its fractal rows, for an NZ cache)."""
    nz = attrs["cache_mode"] == 1
    block_size = case["key_cache"].shape[2 if nz else 1]
    for cache, rows in (("key_cache", "key"), ("value_cache", "value")):
        if cache not in case:
            continue
        for slot, tokens in duplicates.items():
            b, o = divmod(slot, block_size)
            pieces = [case[cache][b, c, o] for c in range(case[cache].shape[1])] if nz else [case[cache][b, o]]
            got = b"".join(p.tobytes() for p in pieces)
            assert any(got == np.ascontiguousarray(case[rows][t]).tobytes() for t in tokens), \
                f"{cache}: slot {slot} holds none of its tokens {tokens}"
            for piece in pieces:
                index, start = locate(roots, piece)
                expected[index][start:start + piece.nbytes] = piece.tobytes()


def call_for(door, dtype, case, attrs):
    names = ("key", "value", "key_cache", "value_cache", "slot_mapping")
    if door == "torch-cpu":
        args = [to_torch(case[n], bfloat16=dtype == "bfloat16" and case[n].dtype == np.uint16) if n in case else None
                for n in names]
        scales = {n: to_torch(case[n]) for n in SCALE_NAMES if n in case}
        return lambda: reshape_and_cache(*args, **attrs, **scales)
    backend = door.split("-")[1]
    scales = {n: case[n] for n in SCALE_NAMES if n in case}
    return lambda: reshape_and_cache(*(case.get(n) for n in names), **attrs, **scales, backend=backend,
                                     dtype="bfloat16" if dtype == "bfloat16" else None)


@fuzz_settings()
@given(drawn=cases())
def test_fuzz_reshape_and_cache(drawn):
    door, dtype, case, attrs, faults = drawn
    roots = owners(*case.values())
    check = None
    if not faults:
        expected, duplicates = golden(case, attrs, roots)

        def check(_result):
            accept_any_duplicate_winner(case, attrs, roots, expected, duplicates)
            assert_bytes(roots, expected, f"{door}: ")

    check_call(OP, call_for(door, dtype, case, attrs), buffers=roots, faults=faults, check=check, door=door)
