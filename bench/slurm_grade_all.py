"""Benchmark grade-all --executor slurm against the local executor on a single-node cluster.

    python bench/slurm_grade_all.py [-n 20] [--students-per-task 5] [--checks ID,ID]

Starts a one-node Slurm cluster on this machine (tests/batch/slurm/cluster.py: Debian's slurmctld,
slurmd and munge, as root), generates a class without hangs (autograder/lessons/why17/fixtures/classes.py), grades
it with the local executor (--jobs = this machine's cores) and with the Slurm executor (one CPU
per array task), and prints wall seconds, submissions per minute and whether the two gradebooks
are byte for byte the same. Figures only; nothing here asserts a time.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from autograder.lessons.why17.fixtures.classes import KINDS, make_class  # noqa: E402
from tests.batch.slurm.cluster import Cluster  # noqa: E402


def _grade(src: Path, out: Path, checks: str, extra: list[str], env: dict) -> float:
    started = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "autograder", "grade-all", str(src), "--out", str(out),
                           "--checks", checks, *extra], cwd=ROOT, env=env, capture_output=True, text=True)
    seconds = time.monotonic() - started
    if proc.returncode != 0:
        sys.exit(f"grade-all {' '.join(extra)} exited {proc.returncode}: {proc.stderr.strip()[-500:]}")
    return seconds


def _rows(out: Path) -> list[dict]:
    """The class's rows (a --checks run is partial: partial.csv), without the time they were graded."""
    import csv
    rows = []
    for name in ("gradebook.csv", "partial.csv"):
        if (out / name).exists():
            rows += [{k: v for k, v in r.items() if k != "graded_at"} for r in csv.DictReader((out / name).open())]
    return rows


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("-n", type=int, default=20, help="submissions in the class (default 20)")
    p.add_argument("--students-per-task", type=int, default=5)
    p.add_argument("--checks", default="bytes_counted_twice,measure_file")
    args = p.parse_args()
    cores = os.cpu_count() or 1
    with tempfile.TemporaryDirectory(prefix="bench-slurm-") as tmp:
        tmp = Path(tmp)
        make_class(tmp / "class", args.n, kinds=tuple(k for k in KINDS if k != "hang"))
        with Cluster(tmp / "cluster") as cluster:
            env = cluster.env()
            local = _grade(tmp / "class", tmp / "local", args.checks, ["--jobs", str(cores)], env)
            slurm = _grade(tmp / "class", tmp / "slurm", args.checks,
                           ["--executor", "slurm", "--students-per-task", str(args.students_per_task)], env)
        same = _rows(tmp / "local") == _rows(tmp / "slurm")
    tasks = -(-args.n // args.students_per_task)
    print(f"{args.n} submissions, checks {args.checks}, {cores} cores")
    print(f"local  --jobs {cores}: {local:7.1f} s  {args.n / local * 60:6.1f} submissions/min")
    print(f"slurm  {tasks} tasks x 1 CPU: {slurm:7.1f} s  {args.n / slurm * 60:6.1f} submissions/min")
    print(f"gradebooks identical: {same}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
