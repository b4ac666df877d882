"""Every error of the spec, through every front door that exists here: the documented
exception, a message naming the op and the argument, and both caches byte-for-byte unchanged."""
import numpy as np
import pytest

from ascend_ops.reshape_and_cache import reshape_and_cache

from rac_cases import Shape, make

SHAPE = Shape(6, 6, 2, 16, 8, 4, 4, padding=1)


def base():
    return list(make(SHAPE, "float16", np.int64, seed=3))


def with_(index, fn):
    def mutate(args):
        args[index] = fn(args[index])
        return args
    return mutate


KEY, VALUE, KEY_CACHE, VALUE_CACHE, SLOTS = range(5)

# (id, mutation of [key, value, key_cache, value_cache, slot_mapping], exception, words in message)
CASES = [
    ("key-dtype", with_(KEY, lambda a: a.astype(np.int32)), TypeError, ["key", "dtype"]),
    ("value-dtype", with_(VALUE, lambda a: a.astype(np.float32)), TypeError, ["value", "float16"]),
    ("key_cache-dtype", with_(KEY_CACHE, lambda a: a.astype(np.float32)), TypeError, ["key_cache"]),
    ("value_cache-dtype", with_(VALUE_CACHE, lambda a: a.astype(np.int8)), TypeError, ["value_cache"]),
    ("slot-dtype", with_(SLOTS, lambda a: a.astype(np.float32)), TypeError, ["slot_mapping", "int32"]),
    ("key-rank", with_(KEY, lambda a: a.reshape(6, -1)), ValueError, ["key", "[T, H, Dk]"]),
    ("value-rank", with_(VALUE, lambda a: a[None]), ValueError, ["value"]),
    ("key_cache-rank", with_(KEY_CACHE, lambda a: a.reshape(4, 4, -1)), ValueError, ["key_cache"]),
    ("slot-byte-order", with_(SLOTS, lambda a: a.astype(">i8")), TypeError, ["slot_mapping", "byte order", ">i8"]),
    ("key-byte-order", with_(KEY, lambda a: a.astype(">f2")), TypeError, ["key", "byte order"]),
    ("slot-rank", with_(SLOTS, lambda a: a.reshape(2, 3)), ValueError, ["slot_mapping"]),
    ("value-tokens", with_(VALUE, lambda a: a[:5]), ValueError, ["value", "T"]),
    ("value-heads", with_(VALUE, lambda a: np.concatenate([a, a], axis=1)), ValueError, ["value", "H"]),
    ("key_cache-heads", with_(KEY_CACHE, lambda a: a[:, :, :1]), ValueError, ["key_cache", "H"]),
    ("key_cache-dk", with_(KEY_CACHE, lambda a: np.ascontiguousarray(a[..., :8])), ValueError, ["key_cache", "Dk"]),
    ("value_cache-dv", with_(VALUE_CACHE, lambda a: np.concatenate([a, a], axis=3)), ValueError, ["value_cache", "Dv"]),
    ("value_cache-blocks", with_(VALUE_CACHE, lambda a: a[:3]), ValueError, ["value_cache", "num_blocks"]),
    ("value_cache-block_size", with_(VALUE_CACHE, lambda a: np.ascontiguousarray(a[:, :2])), ValueError,
     ["value_cache", "block_size"]),
    ("slots-longer-than-T", with_(SLOTS, lambda a: np.concatenate([a, [0]]).astype(np.int64)), ValueError,
     ["slot_mapping", "T'"]),
    # A slot stride of 2 rows is a valid strided cache now (test_rac_views_numpy.py); a strided last dim is not.
    ("key_cache-not-contiguous", with_(KEY_CACHE, lambda a: np.concatenate([a, a], axis=3)[..., ::2]),
     ValueError, ["key_cache", "contiguous"]),
    ("value_cache-not-contiguous", with_(VALUE_CACHE, lambda a: np.asfortranarray(a)), ValueError,
     ["value_cache", "contiguous"]),
    ("key-inner-not-contiguous", with_(KEY, lambda a: np.ascontiguousarray(a.transpose(0, 2, 1)).transpose(0, 2, 1)),
     ValueError, ["key", "strides"]),
    ("slot-out-of-range", with_(SLOTS, lambda a: np.where(np.arange(6) == 4, 16, a)), IndexError,
     ["slot_mapping[4]", "16", "16 slots"]),
    ("slot-far-out-of-range", with_(SLOTS, lambda a: np.where(np.arange(6) == 5, 2**40, a)), IndexError,
     ["slot_mapping[5]"]),
]


# The new arguments: (id, call arguments as a function of the base [key, value, key_cache,
# value_cache, slot_mapping] -> (args, kwargs), exception, words in message). Base: T = 6, H = 2,
# Dk = 16, Dv = 8, float16, 4 blocks of 4 slots.
def nz(args):
    """The base arguments with NZ caches (Dv widened to 16, a whole fractal)."""
    key, value, _, _, slots = args
    value = np.concatenate([value, value], axis=2)
    return [key, value, np.zeros((4, 2 * 16 // 16, 4, 16), np.float16), np.zeros((4, 2 * 16 // 16, 4, 16), np.float16),
            slots]


def attrs_case(build, **kwargs):
    def make_call(args):
        return build(args), kwargs
    return make_call


ATTR_CASES = [
    ("value-without-value_cache", attrs_case(lambda a: a[:3] + [None, a[4]]), ValueError,
     ["value_cache", "None"]),
    ("value_cache-without-value", attrs_case(lambda a: [a[0], None] + a[2:]), ValueError, ["value", "None"]),
    ("cache_mode-4", attrs_case(lambda a: a, cache_mode=4), ValueError, ["cache_mode", "0 (ND) or 1", "4"]),
    ("cache_mode-negative", attrs_case(lambda a: a, cache_mode=-1), ValueError, ["cache_mode", "-1"]),
    ("head_num-negative", attrs_case(lambda a: a, head_num=-2), ValueError, ["head_num", "-2"]),
    ("head_num-not-H", attrs_case(lambda a: a, head_num=4), ValueError, ["key", "H = head_num = 4", "[6, 2, 16]"]),
    ("head_num-does-not-divide", attrs_case(lambda a: [a[0].reshape(6, 32), a[1].reshape(6, 16)] + a[2:], head_num=3),
     ValueError, ["head_num = 3", "divide", "key", "[6, 32]"]),
    ("2d-key-without-head_num", attrs_case(lambda a: [a[0].reshape(6, 32)] + a[1:]), ValueError,
     ["key", "[T, H*D]", "head_num"]),
    ("2d-key-head_num-wrong-cache", attrs_case(lambda a: [a[0].reshape(6, 32), a[1].reshape(6, 16)] + a[2:],
                                               head_num=4), ValueError, ["key_cache", "H (from key) = 4"]),
    ("nz-head-size-not-fractal", attrs_case(lambda a: a[:2] + nz(a)[2:4] + a[4:], cache_mode=1), ValueError,
     ["NZ", "Dv = 8", "multiple of the fractal width 16"]),
    ("nz-key-head-size-not-fractal",
     attrs_case(lambda a: [a[0][..., :8].copy(), None, np.zeros((4, 1, 4, 16), np.float16), None, a[4]], cache_mode=1),
     ValueError, ["NZ", "Dk = 8", "fractal width 16"]),
    ("nz-float32", attrs_case(lambda a: [x.astype(np.float32) if x.dtype == np.float16 else x for x in nz(a)],
                              cache_mode=1), TypeError, ["NZ", "float32"]),
    ("nz-cache-shaped-nd", attrs_case(lambda a: [a[0], None, a[2], None, a[4]], cache_mode=1), ValueError,
     ["key_cache", "[num_blocks, H*Dk/F, block_size, F]", "H*Dk/F = 2"]),
    ("nz-cache-fractal-width", attrs_case(lambda a: nz(a)[:2] + [np.zeros((4, 4, 4, 8), np.float16)] + nz(a)[3:],
                                          cache_mode=1), ValueError, ["key_cache", "H*Dk/F = 2"]),
    ("nz-value_cache-block_size", attrs_case(lambda a: nz(a)[:3] + [np.zeros((4, 2, 3, 16), np.float16), a[4]],
                                             cache_mode=1), ValueError, ["value_cache", "block_size (from key_cache)"]),
    ("nz-slot-out-of-range", attrs_case(lambda a: nz(a)[:4] + [np.where(np.arange(6) == 2, 16, a[4])], cache_mode=1),
     IndexError, ["slot_mapping[2]", "16 slots"]),
    ("key-only-slot-out-of-range", attrs_case(lambda a: [a[0], None, a[2], None, np.where(np.arange(6) == 1, 99, a[4])]),
     IndexError, ["slot_mapping[1]", "99"]),
]


def front_doors():
    doors = [("numpy cpu", "cpu"), ("numpy emu", "emu")]
    return doors


def call(door, args):
    backend = door[1]
    return reshape_and_cache(*args, backend=backend)


@pytest.mark.parametrize("door", front_doors(), ids=lambda d: d[0])
@pytest.mark.parametrize("case_id,mutate,exc,words", CASES, ids=[c[0] for c in CASES])
def test_bad_input_raises_and_leaves_caches_untouched(door, case_id, mutate, exc, words):
    args = mutate(base())
    before = [np.array(args[KEY_CACHE], copy=True), np.array(args[VALUE_CACHE], copy=True)]
    with pytest.raises(exc) as info:
        call(door, args)
    message = str(info.value)
    assert message.startswith("reshape_and_cache:"), message
    for word in words:
        assert word in message, f"{word!r} not in {message!r}"
    assert_same_bytes(args[KEY_CACHE], before[0])
    assert_same_bytes(args[VALUE_CACHE], before[1])


@pytest.mark.parametrize("door", front_doors(), ids=lambda d: d[0])
@pytest.mark.parametrize("case_id,make_call,exc,words", ATTR_CASES, ids=[c[0] for c in ATTR_CASES])
def test_bad_attributes_raise_and_leave_caches_untouched(door, case_id, make_call, exc, words):
    args, kwargs = make_call(base())
    caches = [a for a in (args[KEY_CACHE], args[VALUE_CACHE]) if a is not None]
    before = [np.array(c, copy=True) for c in caches]
    with pytest.raises(exc) as info:
        reshape_and_cache(*args, **kwargs, backend=door[1])
    message = str(info.value)
    assert message.startswith("reshape_and_cache:"), message
    for word in words:
        assert word in message, f"{word!r} not in {message!r}"
    for c, b in zip(caches, before):
        assert_same_bytes(c, b)


def assert_same_bytes(actual, expected):
    np.testing.assert_array_equal(np.ascontiguousarray(actual).view(np.uint8),
                                  np.ascontiguousarray(expected).view(np.uint8))


def test_read_only_cache_is_refused():
    args = base()
    args[KEY_CACHE].setflags(write=False)
    with pytest.raises(ValueError, match="key_cache .*read-only"):
        reshape_and_cache(*args)


def test_unknown_backend_and_foreign_type():
    with pytest.raises(ValueError, match="backend"):
        reshape_and_cache(*base(), backend="gpu")
    with pytest.raises(TypeError, match="key should be"):
        reshape_and_cache([1], *base()[1:])
