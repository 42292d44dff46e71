"""Decode benchmark on this machine's CPU: tokens/s against bandwidth / bytes per step.

    python bench/decode_cpu.py [--tokens N] [--threads N]

Prints one row per configuration (the tiny test config and Llama 3.2 1B, in bf16 and fp32, at batch
1 and 4): bytes read per step, bandwidth measured in the same run, ceiling, measured tokens/s, and
the % of ceiling. Figures only; nothing is asserted.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from shared.decode import bench, config

RUNS = [("tiny", "bf16", 1), ("tiny", "fp32", 1), ("llama-3.2-1b", "bf16", 1), ("llama-3.2-1b", "fp32", 1),
        ("llama-3.2-1b", "bf16", 4)]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--tokens", type=int, default=16)
    p.add_argument("--context", type=int, default=512)
    p.add_argument("--threads", type=int, default=None)
    args = p.parse_args()
    print(f"{'model':14} {'dtype':5} {'batch':>5} {'GB/step':>8} {'GB/s':>6} {'ceiling':>8} "
          f"{'tok/s':>7} {'total':>7} {'%':>6}")
    for key, dtype, batch in RUNS:
        cfg = config.from_table(key)
        try:
            r = bench.run(cfg, dtype=dtype, device="cpu", batch=batch, context=args.context,
                          tokens=args.tokens, threads=args.threads)
        except bench.DoesNotFit as exc:
            print(f"{key:14} {dtype:5} {batch:>5} skipped: {exc}")
            continue
        print(f"{key:14} {dtype:5} {batch:>5} {r.step_bytes.total / 1e9:8.4f} {r.bw_gbs:6.1f} "
              f"{r.ceiling_tokens_per_s:8.2f} {r.tokens_per_s:7.2f} {r.tokens_per_s * batch:7.2f} "
              f"{100 * r.fraction_of_ceiling:5.1f}%", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
