"""Cache views as users allocate them (shared by the view tests, the fuzzer and the torch tests):
each maker takes an allocation's base array and returns (key_cache, value_cache) views of it."""
from __future__ import annotations

import numpy as np

from ascend_ops.reshape_and_cache import reference


def _f(dtype) -> int:
    return reference.nz_fractal(dtype)


def layouts(nb, bs, h, d, dtype):
    """Every view layout of one KV cache [nb, bs, H, d] (K and V of head size d): name ->
    (cache_mode, base array shape, views(base) -> (key_cache, value_cache))."""
    f = _f(dtype)
    x = 16 // np.dtype(dtype).itemsize
    out = {
        # vLLM's flash layout: one [num_blocks, 2, block_size, H, D] tensor, K and V its halves
        "nhd_halves": (0, (nb, 2, bs, h, d), lambda b: (b[:, 0], b[:, 1])),
        # [2, num_blocks, ...]: two contiguous halves of one allocation
        "kv_first": (0, (2, nb, bs, h, d), lambda b: (b[0], b[1])),
        # vLLM's HND allocation [num_blocks, 2, H, block_size, D], permuted to [nb, bs, H, D]
        "hnd_permuted": (0, (nb, 2, h, bs, d), lambda b: (b[:, 0].transpose(0, 2, 1, 3),
                                                           b[:, 1].transpose(0, 2, 1, 3))),
        # a dim-0 stride larger than the block (PA_BSND: axis 0 non-contiguous)
        "block_gap": (0, (nb, 2 * bs + 1, h, d), lambda b: (b[:, :bs], b[:, bs + 1:])),
        # head-major ND, cache_mode 2: contiguous and as halves of one allocation
        "head_major": (2, (2, nb, h, bs, d), lambda b: (b[0], b[1])),
        "head_major_halves": (2, (nb, 2, h, bs, d), lambda b: (b[:, 0], b[:, 1])),
    }
    if d % f == 0 and np.dtype(dtype).itemsize <= 2:
        # NZ halves of one allocation [nb, 2, H*D/F, bs, F]
        out["nz_halves"] = (1, (nb, 2, h * d // f, bs, f), lambda b: (b[:, 0], b[:, 1]))
    if d % x == 0:
        # vLLM's paged-attention layout, cache_mode 3: key [nb, H, D/x, bs, x], value [nb, H, D, bs]
        def paged(b):
            k = b[: nb * h * d * bs].reshape(nb, h, d // x, bs, x)
            v = b[nb * h * d * bs:].reshape(nb, h, d, bs)
            return k, v
        out["vllm_paged"] = (3, (2 * nb * h * d * bs,), paged)
    return out


def expected(base, make_views, mode, key, value, slots, **kwargs):
    """The base after the write, from the reference applied view by view to a copy."""
    want = base.copy()
    kc, vc = make_views(want)
    new_k, new_v = reference.reshape_and_cache(key, value, kc, vc, slots, cache_mode=mode, **kwargs)
    kc[...] = new_k
    if vc is not None:
        vc[...] = new_v
    return want
