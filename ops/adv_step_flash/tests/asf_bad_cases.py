"""The bad-input table of adv_step_flash, shared by every front door's tests: NumPy arguments
and a mutation per case; adapters convert the mutated arrays to their tensors."""
import numpy as np

from asf_cases import ALL32, NAMES, VLLM, Case, make

CASE = Case(8, 6, 16, span=60, table_pad=2)  # max_blocks = 60 // 16 + 1 = 4
BAD = ("int64", "int64", "int64", "int32", "int32", "int32")  # int32 slot_mapping for the overflow


def base(combo=VLLM):
    arrays = make(CASE, combo, seed=3)
    return {"num_seqs": CASE.num_seqs, "num_queries": CASE.num_queries, "block_size": CASE.block_size, **arrays}


def setting(name, value):
    def mutate(args):
        args[name] = value(args[name]) if callable(value) else value
        return args
    return mutate


def element(name, index, value):
    def mutate(args):
        args[name][index] = value
        return args
    return mutate


def table_entry_of(row, value):
    """block_tables[row, seq_lens[row] // block_size] = value: the entry the step reads."""
    def mutate(args):
        args["block_tables"][row, int(args["seq_lens"][row]) // args["block_size"]] = value
        return args
    return mutate


def several(*mutations):
    def mutate(args):
        for m in mutations:
            args = m(args)
        return args
    return mutate


# (id, mutation, dtypes, exception, words in the message)
CASES = [
    ("block-index-beyond-table", element("seq_lens", 2, 4 * 16), VLLM, IndexError,
     ["block index 4", "seq_lens[2] = 64", "max_blocks_per_seq = 4"]),
    ("block-index-far-beyond", element("seq_lens", 5, 2**30), VLLM, IndexError, ["seq_lens[5] = 1073741824"]),
    ("negative-seq-len", element("seq_lens", 1, -1), VLLM, ValueError, ["seq_lens[1] = -1", "negative"]),
    ("negative-block-id", table_entry_of(3, -5), VLLM, ValueError, ["block_tables[3, ", "= -5", "negative"]),
    ("num-queries-beyond-num-seqs", setting("num_queries", 9), VLLM, ValueError,
     ["num_queries = 9", "num_seqs = 8"]),
    ("num-queries-zero", setting("num_queries", 0), VLLM, ValueError, ["0 < num_queries"]),
    ("block-size-zero", setting("block_size", 0), VLLM, ValueError, ["block_size should be > 0"]),
    ("block-size-negative", setting("block_size", -16), VLLM, ValueError, ["block_size", "-16"]),
    ("num-seqs-mismatch", setting("num_seqs", 7), VLLM, ValueError, ["input_tokens should be [num_seqs] = [7]"]),
    ("input_tokens-short", setting("input_tokens", lambda a: a[:7].copy()), VLLM, ValueError,
     ["input_tokens should be [num_seqs] = [8]", "[7]"]),
    ("input_positions-long", setting("input_positions", lambda a: np.zeros(9, a.dtype)), VLLM, ValueError,
     ["input_positions", "[9]"]),
    ("seq_lens-2d", setting("seq_lens", lambda a: a.reshape(8, 1)), VLLM, ValueError, ["seq_lens", "[8, 1]"]),
    ("slot_mapping-short", setting("slot_mapping", lambda a: a[:4].copy()), VLLM, ValueError, ["slot_mapping"]),
    ("sampled-too-many", setting("sampled_token_ids", lambda a: np.zeros((8, 1), a.dtype)), VLLM, ValueError,
     ["sampled_token_ids should be [num_queries, 1] or [num_queries]", "[8, 1]"]),
    ("sampled-two-columns", setting("sampled_token_ids", lambda a: np.zeros((6, 2), a.dtype)), VLLM, ValueError,
     ["sampled_token_ids", "[6, 2]"]),
    ("block_tables-rows", setting("block_tables", lambda a: a[:7]), VLLM, ValueError,
     ["block_tables should be [num_seqs, max_blocks_per_seq]", "[7, 4]"]),
    ("block_tables-rank", setting("block_tables", lambda a: a[:, 0].copy()), VLLM, ValueError, ["block_tables"]),
    ("input_tokens-float", setting("input_tokens", lambda a: a.astype(np.float32)), VLLM, TypeError,
     ["input_tokens should have dtype int32 or int64 but has float32"]),
    ("sampled-int16", setting("sampled_token_ids", lambda a: a.astype(np.int16)), VLLM, TypeError,
     ["sampled_token_ids", "int16"]),
    ("positions-float64", setting("input_positions", lambda a: a.astype(np.float64)), VLLM, TypeError,
     ["input_positions"]),
    ("seq_lens-uint8", setting("seq_lens", lambda a: a.astype(np.uint8)), VLLM, TypeError, ["seq_lens", "uint8"]),
    ("slot_mapping-float", setting("slot_mapping", lambda a: a.astype(np.float32)), VLLM, TypeError,
     ["slot_mapping"]),
    ("block_tables-float", setting("block_tables", lambda a: a.astype(np.float32)), VLLM, TypeError,
     ["block_tables"]),
    ("int32-slot-overflow", table_entry_of(4, 2**31 // 16), BAD, ValueError,
     ["slot_mapping is int32", "the slot of sequence 4", "does not fit"]),
    ("int32-position-overflow", several(setting("block_size", 2**30), element("seq_lens", 0, 2**31)),
     ("int64", "int64", "int32", "int64", "int64", "int64"), ValueError,
     ["input_positions is int32", "2147483648"]),
    ("int32-seq-len-overflow", several(setting("block_size", 2**30), element("seq_lens", 0, 2**31 - 1)), ALL32,
     ValueError, ["seq_lens is int32", "new sequence length", "2147483648"]),
    ("int32-token-overflow", element("sampled_token_ids", (2, 0), 2**40),
     ("int32", "int64", "int64", "int32", "int64", "int32"), ValueError, ["input_tokens is int32", "1099511627776"]),
    ("input_tokens-strided", setting("input_tokens", lambda a: np.zeros(16, a.dtype)[::2]), VLLM, ValueError,
     ["input_tokens should be contiguous"]),
    ("sampled-strided", setting("sampled_token_ids", lambda a: np.zeros((6, 2), a.dtype)[:, :1]), VLLM,
     ValueError, ["sampled_token_ids should be contiguous"]),
    ("block_tables-columns-strided", setting("block_tables", lambda a: np.ascontiguousarray(a.T).T), VLLM,
     ValueError, ["block_tables should have contiguous rows"]),
]


def bad_args(mutate, combo):
    """(num_seqs, num_queries, block_size, *tensors as NumPy) of one bad case."""
    args = mutate(base(combo))
    return (args["num_seqs"], args["num_queries"], args["block_size"], *(args[n] for n in NAMES))
