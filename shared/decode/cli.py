"""``python -m shared.decode_bench``: measured decode tokens/s against bandwidth / bytes per step.

The results go to stdout; each phase's progress, with the time left, to stderr (``--quiet``: none).
Without ``--tokens`` a CPU run times CPU_TOKENS steps, a GPU run GPU_TOKENS: a CPU step of the
default 1B model in fp32 (the CPU's default dtype) takes a few seconds on a 2-core laptop
(docs/decode-benchmark.md has the measured times).

Exit 0 after a run, 1 if the tensor count and the formula disagree (a bug), 2 with one line on bad
arguments or a model that does not fit in free memory.
"""
from __future__ import annotations

import argparse
import math
import sys

from shared import tables
from shared.decode import config
from shared.decode.bytes import DTYPE_BYTES

#: Timed steps per stream without --tokens, on a GPU and on a CPU.
GPU_TOKENS = 64
CPU_TOKENS = 16


#: What the report says when a CPU run took the default dtype.
CPU_DTYPE_NOTE = ("dtype        fp32, the default on a CPU: many CPUs have no bf16 matmul, so torch emulates it "
                  "and the decode runs far below the memory's speed (pass --dtype bf16 to time it anyway)")


def default_dtype(device: str) -> str:
    """The benchmark's dtype without --dtype: bf16 on a GPU (as the lesson's numbers), fp32 on a CPU."""
    return "bf16" if device == "cuda" else "fp32"


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit 2, without the usage block
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        raise SystemExit(2)


def _count(minimum: int):
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}, got {value}")
        return value
    return parse


def _gbs(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected GB/s as a number, got {text!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive number of GB/s, got {text!r}")
    return value


def parser() -> argparse.ArgumentParser:
    p = _Parser(prog="python -m shared.decode_bench",
                description="Time greedy decode of a random-weight Llama-architecture model built from "
                            "shared/data/models.yml and compare it with bandwidth / bytes read per step.")
    p.add_argument("--model", default="llama-3.2-1b",
                   help=f"a key of shared/data/models.yml: {', '.join(tables.models())} (default llama-3.2-1b)")
    p.add_argument("--batch", type=_count(1), default=1, help="streams decoded together (default 1)")
    p.add_argument("--context", type=_count(0), default=512,
                   help="tokens already in each stream's KV cache (default 512)")
    p.add_argument("--tokens", type=_count(1), default=None,
                   help=f"tokens generated per stream (default {GPU_TOKENS} on a GPU, {CPU_TOKENS} on a CPU)")
    p.add_argument("--dtype", choices=sorted(DTYPE_BYTES), default=None,
                   help="weights, activations and KV cache (default: bf16 on a GPU, fp32 on a CPU, where "
                        "bf16 matmuls are emulated)")
    p.add_argument("--device", choices=("cpu", "cuda"), default=None,
                   help="default: cuda when available, else cpu")
    p.add_argument("--bw-gbs", type=_gbs, default=None,
                   help="bandwidth in GB/s for the ceiling instead of measuring it in this run")
    p.add_argument("--threads", type=_count(1), default=None,
                   help="CPU threads for torch (default: torch's choice, one per core)")
    p.add_argument("--seed", type=_count(0), default=0, help="random weights' seed (default 0)")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr (the results are on stdout)")
    return p


def main(argv=None) -> int:
    args = parser().parse_args(argv)
    prog = "python -m shared.decode_bench"
    try:
        cfg = config.from_table(args.model)
    except KeyError as exc:
        print(f"{prog}: error: --model: {exc.args[0]}", file=sys.stderr)
        return 2
    import torch  # after parsing, so that a bad argument gets its line at once

    from shared.decode import bench, progress
    if args.device == "cuda" and not torch.cuda.is_available():
        print(f"{prog}: error: --device cuda: no CUDA device is available here", file=sys.stderr)
        return 2
    device = args.device or ("cuda" if torch.cuda.is_available() else "cpu")
    tokens = args.tokens or (GPU_TOKENS if device == "cuda" else CPU_TOKENS)
    dtype = args.dtype or default_dtype(device)
    try:
        result = bench.run(cfg, dtype=dtype, device=device, batch=args.batch,
                           context=args.context, tokens=tokens, bw_gbs=args.bw_gbs, seed=args.seed,
                           threads=args.threads, report_to=None if args.quiet else progress.Progress())
    except bench.DoesNotFit as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return 2
    print(bench.report(result))
    if args.dtype is None and device == "cpu":
        print(CPU_DTYPE_NOTE)
    if not result.bytes_agree:
        print(f"{prog}: bytes counted from the tensors and from the formula disagree (a bug)", file=sys.stderr)
        return 1
    return 0
