"""``ascend-ops demo``: the subcommand this package adds to common's ``ascend-ops`` command (entry-point
group ``ascend_ops.cli``)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .model import KV_CACHE_DTYPES, Config

_MODES = ("torch-eager", "torch-compile", "mindspore-pynative", "mindspore-graph")


def run_demo(args: argparse.Namespace) -> int:
    from .runner import MODES, run  # numpy only until a mode imports its framework

    try:
        cfg = Config(steps=args.steps, seed=args.seed, sparse_count=args.sparse_count,
                     prompt_lens=tuple(args.prompt_lens) if args.prompt_lens else Config().prompt_lens,
                     kv_cache_dtype=args.kv_cache_dtype)
    except ValueError as exc:
        print(f"ascend-ops demo: {exc}", file=sys.stderr)
        return 2
    modes = [m.replace("-", " ") for m in args.mode] if args.mode else list(MODES)
    report = run(cfg, modes, out=sys.stdout, err=sys.stderr, plot=args.plot, torch_backend=args.torch_backend)
    return report.exit_status


def add_parser(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    """Add ``demo`` to the ``ascend-ops`` subcommands."""
    p = sub.add_parser("demo", help="a sparse-attention decode loop using every op, in every framework mode",
                       description="A DeepSeek-V3.2-style sparse-attention decode loop on a paged KV cache: "
                                   "a tiny transformer with fixed-seed random weights generates greedily "
                                   "for a batch of prompts; prefill and every decode step use "
                                   "reshape_and_cache, lightning_indexer and adv_step_flash. Runs in "
                                   "PyTorch eager, torch.compile, MindSpore PyNative and MindSpore Graph "
                                   "mode, checks that each produces exactly the tokens of a dense NumPy "
                                   "reference, and prints tokens/s and a per-op time breakdown. Exit "
                                   "status 1 if a mode fails or disagrees (a mode whose framework or "
                                   "adapter is missing is skipped, with the reason).")
    default = Config()
    p.add_argument("--steps", type=int, default=default.steps,
                   help=f"decode steps (default {default.steps}; each sequence yields steps + 1 tokens)")
    p.add_argument("--mode", action="append", choices=_MODES, help="only this mode (repeatable; default: all four)")
    p.add_argument("--prompt-lens", type=int, nargs="+", metavar="N",
                   help=f"prompt lengths, one sequence each (default {' '.join(map(str, default.prompt_lens))})")
    p.add_argument("--sparse-count", type=int, default=default.sparse_count,
                   help=f"the indexer's top-k (default {default.sparse_count})")
    p.add_argument("--seed", type=int, default=default.seed, help=f"weights and prompts seed (default {default.seed})")
    p.add_argument("--kv-cache-dtype", default="auto", choices=KV_CACHE_DTYPES,
                   help="auto: float32 caches (default); int8: 8-bit latent / rope caches with static scales "
                        "(reshape_and_cache's int8 mode) and 8-bit indexer keys with a scale per token "
                        "(indexer_k_quant_and_cache), compared with a reference that stores the same codes")
    p.add_argument("--torch-backend", default="inductor", choices=("inductor", "aot_eager"),
                   help="torch.compile backend (default inductor)")
    p.add_argument("--plot", metavar="FILE.png", type=Path, help="write the time breakdown as a chart")
    p.set_defaults(func=run_demo)
