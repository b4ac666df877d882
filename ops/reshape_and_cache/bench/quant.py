"""The quantising write (kv_cache_dtype "int8" / "fp8") in `./dev bench` (bench/run.py).

CPU, timed in the same run on the same tensors, caches far larger than the CPU's L3:
  fused int8   torch.ops.ascend_ops.reshape_and_cache(..., kv_cache_dtype="int8", k_scale, v_scale,
               k_offset, v_offset): per-channel float32 scales and offsets
  fused fp8    the same with kv_cache_dtype="fp8" (no offsets)
  composite    what a user writes today: (x.float() / scale + offset).round().clamp(-128, 127)
               .to(torch.int8), then index_copy_ into the cache, for key and value
  auto         our own unquantized write of the same bfloat16 rows into bfloat16 caches
Ratios: speedup = composite p50 / fused int8 p50 (target >= 3 at T = 16..256 and 4096);
vs auto = fused int8 p50 / auto p50 (target <= 1.5 at T >= 4096).
Emulator (AscendC kernel, int8): GM bytes against the minimum (16-bit rows in, 8-bit rows out,
slots, the scales once), the HBM bytes after the modelled L2 (per-channel tables: each core loads
the slice of the tables its channel group needs, host/tiling_quant.cpp, and the cores of the
first token group check theirs), and the modelled 910B time against the unquantized write's.
"""
from __future__ import annotations

import numpy as np
import torch

from ascend_ops.devkit import bench
from ascend_ops.reshape_and_cache import reshape_and_cache

H, D, BLOCK_SIZE = 8, 128, 128
CACHE_BLOCKS = 512  # 64 MiB per int8 cache, 128 MiB per bfloat16 cache: far beyond a 32 MiB L3
DECODE = (16, 64, 256)
PREFILL = (4096,)


def make_case(tokens: int, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    key = torch.randn(tokens, H, D, generator=g).to(torch.bfloat16)
    value = torch.randn(tokens, H, D, generator=g).to(torch.bfloat16)
    blocks = torch.randperm(CACHE_BLOCKS, generator=g)
    slots = (blocks[:, None] * BLOCK_SIZE + torch.arange(BLOCK_SIZE)).flatten()[:tokens].clone()
    if tokens <= max(DECODE):
        slots[15::16] = -1  # the 16th of every 16 tokens (none below 16)
    scales = {n: (torch.rand(H, D, generator=g) * 0.02 + 0.01) for n in ("k_scale", "v_scale")}
    offsets = {n: (torch.rand(H, D, generator=g) * 4 - 2) for n in ("k_offset", "v_offset")}
    return key, value, slots.to(torch.int64), scales, offsets


def providers(tokens: int, caches: dict):
    key, value, slots, scales, offsets = make_case(tokens)
    op = torch.ops.ascend_ops.reshape_and_cache
    kc8, vc8 = caches["int8"]
    kcf, vcf = caches["fp8"]
    kca, vca = caches["auto"]
    flat_k, flat_v = kc8.view(-1, H, D), vc8.view(-1, H, D)

    def composite():
        valid = slots >= 0
        index = slots[valid]
        for src, flat, s, o in ((key, flat_k, scales["k_scale"], offsets["k_offset"]),
                                (value, flat_v, scales["v_scale"], offsets["v_offset"])):
            q = (src[valid].float() / s + o).round().clamp(-128, 127).to(torch.int8)
            flat.index_copy_(0, index, q)

    return {
        "fused int8": lambda: op(key, value, kc8, vc8, slots, kv_cache_dtype="int8", **scales, **offsets),
        "fused fp8": lambda: op(key, value, kcf, vcf, slots, kv_cache_dtype="fp8", **scales),
        "composite": composite,
        "auto": lambda: op(key, value, kca, vca, slots),
    }


def cpu_table(runner: bench.Runner, quick: bool):
    """(results, rows): the timed cases and the ratio rows."""
    shape = (CACHE_BLOCKS, BLOCK_SIZE, H, D)
    caches = {"int8": [torch.zeros(shape, dtype=torch.int8) for _ in range(2)],
              "fp8": [torch.zeros(shape, dtype=torch.uint8) for _ in range(2)],
              "auto": [torch.zeros(shape, dtype=torch.bfloat16) for _ in range(2)]}
    cases = []
    for tokens in ((16, 4096) if quick else DECODE + PREFILL):
        nbytes = tokens * H * D * 2 * (2 + 1)  # bfloat16 rows read, int8 rows written
        for name, fn in providers(tokens, caches).items():
            cases.append(bench.Case("reshape_and_cache quantising", name, f"T={tokens} H={H} D={D}", "bfloat16",
                                    fn, nbytes))
    results = runner.run(cases, baseline="composite")
    by = {(r.shape, r.provider): r.p50_us for r in results}
    rows = []
    for shape in dict.fromkeys(r.shape for r in results):
        fused = by[(shape, "fused int8")]
        rows.append([shape, fused, by[(shape, "fused fp8")], by[(shape, "composite")], by[(shape, "auto")],
                     by[(shape, "composite")] / fused, fused / by[(shape, "auto")]])
    return results, rows


ROW_HEADERS = ["shape", "fused int8 µs", "fused fp8 µs", "composite µs", "auto µs", "speedup (composite / int8)",
               "int8 / auto"]


def emulator_rows(tokens_list=(16, 64, 1024), socs=("Ascend910B2",)) -> list:
    """The int8 kernel through the emulator's timing model against the minimum traffic, and its
    modelled time against the unquantized (float16 -> float16) write of the same rows."""
    rng = np.random.default_rng(0)
    out = []
    for tokens in tokens_list:
        for granularity, scale_shape in (("per head", (H,)), ("per channel", (H * D,))):
            blocks = (tokens + BLOCK_SIZE - 1) // BLOCK_SIZE + 1
            key = rng.standard_normal((tokens, H, D)).astype(np.float16)
            value = rng.standard_normal((tokens, H, D)).astype(np.float16)
            slots = rng.permutation(blocks * BLOCK_SIZE)[:tokens].astype(np.int32)
            scale = np.full(scale_shape, 0.02, np.float32)
            for soc in socs:
                caches = [np.zeros((blocks, BLOCK_SIZE, H, D), np.int8) for _ in range(2)]
                report = reshape_and_cache(key, value, *caches, slots, kv_cache_dtype="int8", k_scale=scale,
                                           v_scale=scale, backend="emu", soc=soc, order="in_order")
                plain = [np.zeros((blocks, BLOCK_SIZE, H, D), np.float16) for _ in range(2)]
                base = reshape_and_cache(key, value, *plain, slots, backend="emu", soc=soc, order="in_order")
                minimum = tokens * H * 2 * D * (2 + 1) + tokens * 4 + 2 * scale.nbytes
                row = bench.modelled_row(f"T={tokens} fp16->int8 {granularity}", soc, report, minimum)
                out.append(row + [report["hbm_bytes"], report["hbm_bytes"] / minimum, base["modelled_us"],
                                  report["modelled_us"] / base["modelled_us"]])
    return out


EMU_HEADERS = bench.MODELLED_HEADERS + ["HBM bytes (after the modelled L2)", "HBM / minimum",
                                        "unquantized modelled µs", "int8 / unquantized"]
