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
    ("key_cache-not-contiguous", with_(KEY_CACHE, lambda a: np.concatenate([a, a], axis=1)[:, ::2]),
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
