"""How much one CPU measurement varies from run to run on this machine: the reference copy_bandwidth,
repeated, as a student's laptop would run it between other work.

    python bench/cpu_spread.py [--runs N] [--mib M] [--iters K]

Prints each run's GB/s, then min, median and max and the max/min ratio. Figures only; nothing is
asserted. The student README quotes the spread measured with it (on a busy machine), so that a
laptop user knows why their numbers move and why the notebook quotes the median with its min-max.
"""
from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "solutions" / "why17"))

import bw  # noqa: E402  the reference solution's copy_bandwidth


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--runs", type=int, default=10)
    p.add_argument("--mib", type=int, default=256, help="buffer size in MiB (default 256)")
    p.add_argument("--iters", type=int, default=10, help="copies timed per run (default 10)")
    args = p.parse_args()
    runs = []
    for i in range(args.runs):
        gbs = bw.copy_bandwidth(args.mib * 2**20, iters=args.iters, device="cpu")
        runs.append(gbs)
        print(f"run {i + 1:2}: {gbs:8.2f} GB/s", flush=True)
    low, mid, high = min(runs), statistics.median(runs), max(runs)
    print(f"copy_bandwidth({args.mib} MiB, iters={args.iters}) on the CPU, {args.runs} runs: "
          f"min {low:.2f}, median {mid:.2f}, max {high:.2f} GB/s; max/min {high / low:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
