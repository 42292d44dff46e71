"""Benchmark: wall and CPU seconds of the student's command, ``python -m shared.simgpu``.

    .venv/bin/python bench/simgpu_student.py [--rounds 3] [--before DIR] [FOLDER ...]

Runs the command on each FOLDER (default: the reference, solutions/why17) once per round and
prints, per folder, the median over the rounds of its wall seconds and of its CPU seconds (user +
system of the command and every process it started), beside a bare ``python -c 'import torch'``
(the floor any run of torch code pays) and the machine's load average. ``--before DIR`` runs, in
every round, the same command from another checkout of the project (say, an export of an earlier
commit: ``git archive HEAD~1 | tar -x -C DIR``), so a change is measured before and after in one
run. Figures only: timing belongs here, never in a test.
"""
from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def timed(argv: list[str], cwd: Path) -> tuple[float, float, int]:
    """(wall seconds, CPU seconds of the command and its children, exit code) of one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, done.returncode


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("folders", nargs="*", type=Path, default=[ROOT / "solutions" / "why17"],
                   help="folders holding bw.py / flops.py (default: the reference)")
    p.add_argument("--rounds", type=int, default=3, help="runs of each command (default 3)")
    p.add_argument("--before", type=Path, default=None,
                   help="another checkout of the project to run the same command from")
    args = p.parse_args()
    runs = {"import torch": ([sys.executable, "-c", "import torch"], ROOT)}
    for folder in args.folders:
        folder = folder.resolve()
        runs[f"now     {folder.name}"] = ([sys.executable, "-m", "shared.simgpu", str(folder)], ROOT)
        if args.before is not None:
            runs[f"before  {folder.name}"] = ([sys.executable, "-m", "shared.simgpu", str(folder)],
                                              args.before.resolve())
    results: dict[str, list[tuple[float, float, int]]] = {name: [] for name in runs}
    loads = []
    for _ in range(args.rounds):
        loads.append(os.getloadavg()[0])
        for name, (argv, cwd) in runs.items():
            results[name].append(timed(argv, cwd))
    print(f"python -m shared.simgpu, median of {args.rounds} rounds "
          f"(load average {min(loads):.1f}-{max(loads):.1f}, {os.cpu_count()} CPUs)")
    print(f"  {'run':<44} {'wall s':>7} {'CPU s':>7}  exit  every round's wall s")
    for name, rows in results.items():
        wall = statistics.median(r[0] for r in rows)
        cpu = statistics.median(r[1] for r in rows)
        codes = sorted({r[2] for r in rows})
        each = " ".join(f"{r[0]:.1f}" for r in rows)
        print(f"  {name:<44} {wall:>7.2f} {cpu:>7.2f}  {','.join(map(str, codes)):>4}  {each}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
