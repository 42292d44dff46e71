"""Benchmark: CPU seconds and memory to simulate the lesson's sweep and matmul on each profile.

    python bench/simgpu_sweep.py [--profile h100] [--repeat 3]

Runs the reference bandwidth_sweep (8 MiB to 8192 MiB, 50 copies each) plus
matmul_tflops(8192) on the simulated GPU, and prints per profile the CPU seconds (best of
--repeat, and of the first run, which pays torch's lazy set-up), the simulated GB/s and TFLOP/s, \
and the process's peak RSS before and after (MiB).
The issue's target: well under a second of CPU and under 200 MB beyond the torch import.
Figures, never assertions: timing belongs here, not in tests.
"""
from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "solutions" / "why17")]

from shared import simgpu  # noqa: E402

simgpu.install()
import bw  # noqa: E402
import flops  # noqa: E402


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def cpu_s() -> float:
    return time.process_time.__wrapped__()    # the real clock, not the dispatcher


def one(profile: str) -> tuple[float, dict, float, dict]:
    cfg = simgpu.config(profile)
    start = cpu_s()
    with simgpu.active(cfg):
        sweep = bw.bandwidth_sweep()
        tflops = flops.matmul_tflops(8192)
    return cpu_s() - start, sweep, tflops, simgpu.trace()


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--profile", action="append", help="profile key (default: every GPU profile)")
    p.add_argument("--repeat", type=int, default=3)
    args = p.parse_args(argv)
    profiles = args.profile or simgpu.gpu_keys()
    before = peak_rss_mib()
    print(f"peak RSS after importing torch and the simulator: {before:.0f} MiB")
    print(f"{'profile':<10} {'CPU s':>6} {'first':>6} {'ops':>5}  sweep GB/s (8 ... 8192 MiB)"
          f"{'':<19} TFLOP/s")
    for profile in profiles:
        runs = [one(profile) for _ in range(args.repeat)]
        best, sweep, tflops, trace = min(runs, key=lambda r: r[0])
        cells = " ".join(f"{sweep[s]:>6.0f}" if s in sweep else f"{'-':>6}" for s in (8, 32, 128, 512, 2048, 8192))
        print(f"{profile:<10} {best:>6.3f} {runs[0][0]:>6.3f} {trace['ops']:>5}  {cells}   {tflops:>7.1f}")
    after = peak_rss_mib()
    print(f"peak RSS at the end: {after:.0f} MiB (+{after - before:.0f} MiB for all the simulations)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
