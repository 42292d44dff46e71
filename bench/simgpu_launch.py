"""Benchmark: CPU microseconds one launch costs on the simulated GPU, in the student's process.

    .venv/bin/python bench/simgpu_launch.py [--rounds 3] [--launches 20000] [--before DIR]

A launch-heavy submission (many small copies or matmuls) is graded at the simulator's cost per
launch, not at the GPU's 2-3 us: it sets how long such a grading, and the adversarial set, take.
Each pattern runs in a fresh interpreter with the device active in-process (``simgpu.active``:
the dispatcher, the frontend and the device model in one process, as the student's command runs
them), after 100 launches of warm-up:

- ``same_chunk``: one 256 KiB slice copied again and again (a chunked copy over one chunk);
- ``chunks``: the slices of a 64 MiB buffer copied in turn, each 256 KiB (a chunked copy);
- ``small_matmul``: a 64x64 bf16 product again and again.

Prints, per pattern, the median over the rounds of CPU microseconds per launch and, with
``--before DIR`` (another checkout of the project, e.g. ``git worktree add DIR HEAD~1``), the same
from there in the same rounds, taken in turn, and their ratio. Figures only, never a test.
"""
from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

PROGRAM = """
import resource, sys
import torch
from shared import simgpu
from shared.simgpu.clockbase import real_rusage   # the process's real CPU time: the simulator answers the clocks

def cpu():
    usage = real_rusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime
pattern, n = sys.argv[1], int(sys.argv[2])
simgpu.install()
with simgpu.active(simgpu.config()):
    if pattern == "small_matmul":
        a = torch.empty(64, 64, dtype=torch.bfloat16, device="cuda")
        b, c = torch.empty_like(a), torch.empty_like(a)
        step = lambda i: torch.mm(a, b, out=c)
    else:
        src = torch.empty(64 * 2**20, dtype=torch.uint8, device="cuda")
        dst = torch.empty_like(src)
        chunk = 2**18
        count = 1 if pattern == "same_chunk" else src.numel() // chunk
        pairs = [(dst[i * chunk:(i + 1) * chunk], src[i * chunk:(i + 1) * chunk]) for i in range(count)]
        step = lambda i: pairs[i % count][0].copy_(pairs[i % count][1])
    for i in range(100):
        step(i)
    torch.cuda.synchronize()
    t = cpu()
    for i in range(n):
        step(i)
    torch.cuda.synchronize()
    print((cpu() - t) / n * 1e6)
"""
PATTERNS = ("same_chunk", "chunks", "small_matmul")


def per_launch(root: Path, pattern: str, launches: int) -> float:
    """CPU microseconds per launch of ``pattern`` with the checkout at ``root``."""
    out = subprocess.run([sys.executable, "-c", PROGRAM, pattern, str(launches)], cwd=root,
                         env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"},
                         capture_output=True, text=True, check=True)
    return float(out.stdout.split()[-1])


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--launches", type=int, default=20000)
    p.add_argument("--before", type=Path, help="another checkout, measured in the same rounds")
    args = p.parse_args(argv)
    roots = {"this": ROOT} | ({"before": args.before.resolve()} if args.before else {})
    seen = {(name, pattern): [] for name in roots for pattern in PATTERNS}
    for _ in range(args.rounds):
        for pattern in PATTERNS:
            for name, root in roots.items():
                seen[(name, pattern)].append(per_launch(root, pattern, args.launches))
    head = "".join(f"{name + ' us':>12}" for name in roots)
    print(f"{'pattern':<14}{head}" + ("   this/before" if args.before else ""))
    for pattern in PATTERNS:
        medians = [statistics.median(seen[(name, pattern)]) for name in roots]
        ratio = f"   {medians[0] / medians[1]:.2f}x" if args.before else ""
        print(f"{pattern:<14}" + "".join(f"{m:>12.1f}" for m in medians) + ratio)
    return 0


if __name__ == "__main__":
    sys.exit(main())
