"""Benchmark grade-all: generate a mixed class, grade it, print submissions per minute, CPU seconds
per submission and peak memory per worker. Figures only; nothing here asserts a time.

    python bench/grade_all.py                      # 200 submissions, --jobs 2, every check
    python bench/grade_all.py -n 40 --checks quick # the 40-submission demonstration, quick checks
    python bench/grade_all.py -n 20 --no-forkserver  # the same workers without the fork server
    python bench/grade_all.py -n 2 --mix cycle --rounds 3 --before DIR  # before and after, in turn

The class mixes the kinds of autograder/lessons/why17/fixtures/classes.py in MIX_200's proportions: the reference
(folders and zips), classic mistakes, stubs, entries with nothing gradable, crashes, memory hogs
and hangs.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from autograder.core import settings  # noqa: E402
from autograder.lessons.why17.fixtures.classes import (  # noqa: E402
    KINDS,
    QUICK_CHECKS,
    ta_kinds,
    write_student,
)


def class_kinds(n: int, mix: str) -> list[str]:
    """The kind of each of ``n`` students: MIX_200 spread evenly ('ta'), or KINDS in turn ('cycle')."""
    if mix == "cycle":
        return [KINDS[i % len(KINDS)] for i in range(n)]
    return ta_kinds(n)


def _timed(cmd: list[str], tree: Path, env: dict) -> tuple[float, float, subprocess.CompletedProcess]:
    """(wall s, CPU s of grade-all and all it reaped, the process) of ``cmd`` run in checkout ``tree``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    proc = subprocess.run(cmd, cwd=tree, env=env, capture_output=True, text=True)
    wall = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), proc


def _compare(runs: dict[Path, list[tuple[float, float]]]) -> None:
    """Each checkout's wall and CPU seconds, by round and their medians, and its CPU seconds minus
    this checkout's in the same round (the machine's load drifts between rounds more than within)."""
    mine = [cpu for _wall, cpu in runs[ROOT]]
    print(f"{'checkout':<32} {'wall s':>7} {'CPU s':>7}  CPU s by round; minus this checkout's, median")
    for tree, rows in runs.items():
        cpus = [cpu for _wall, cpu in rows]
        paired = [c - m for c, m in zip(cpus, mine)]
        name = "this checkout" if tree == ROOT else str(tree)
        print(f"{name:<32} {statistics.median(w for w, _c in rows):>7.1f} {statistics.median(cpus):>7.1f}  "
              f"{' '.join(f'{c:.1f}' for c in cpus)}; {statistics.median(paired):+.2f}")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("-n", type=int, default=200, help="submissions to generate (default 200)")
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--checks", default=None,
                   help="'quick' for the tests' check subset, a comma list of ids, or all (default)")
    p.add_argument("--time-limit-s", type=float, default=None, help="per-call limit (default course.yml)")
    p.add_argument("--no-forkserver", action="store_true", help="start each sandboxed child with exec")
    p.add_argument("--keep", type=Path, default=None, help="grade into this folder and keep it")
    p.add_argument("--before", type=Path, action="append", default=[],
                   help="another checkout (a git worktree of an earlier commit, or one with a speed trick "
                        "taken out): the same class is graded with its code in every round too (repeatable)")
    p.add_argument("--rounds", type=int, default=1, help="grade the class this many times per checkout, in turn")
    p.add_argument("--mix", choices=("ta", "cycle"), default="ta",
                   help="ta: MIX_200's proportions (default); cycle: every kind in turn, as the tests")
    args = p.parse_args(argv)
    work = args.keep or Path(tempfile.mkdtemp(prefix="why17-bench-"))
    src, out = work / "submissions", work / "out"
    kinds_list = class_kinds(args.n, args.mix)
    if not src.exists():
        src.mkdir(parents=True)
        for i, kind in enumerate(kinds_list):
            write_student(src, f"s{i:03d}", kind)
    kinds = Counter(kinds_list)
    cmd = [sys.executable, "-m", "autograder", "grade-all", str(src), "--out", str(out),
           "--jobs", str(args.jobs), "--force"]
    if args.checks:
        cmd += ["--checks", ",".join(QUICK_CHECKS) if args.checks == "quick" else args.checks]
    if args.time_limit_s:
        cmd += ["--time-limit-s", str(args.time_limit_s)]
    env = dict(os.environ)
    if args.no_forkserver:
        env[settings.FORKSERVER.name] = "0"
    load_before = os.getloadavg()[0]
    trees = [ROOT, *args.before]
    runs: dict[Path, list[tuple[float, float]]] = {tree: [] for tree in trees}
    for _ in range(args.rounds):
        for tree in trees:
            wall, cpu, proc = _timed(cmd, tree, env)
            if proc.returncode != 0:
                print(f"{tree}: grade-all exited {proc.returncode}\n{proc.stderr[-3000:]}", file=sys.stderr)
                return proc.returncode
            runs[tree].append((wall, cpu))
            if tree == ROOT:
                last = (wall, cpu, proc)
    wall, cpu, proc = last
    workers = re.findall(r"worker \d+: ([\d.]+) CPU s, peak memory (\d+) MiB "
                         r"\(largest process it started: (\d+) MiB\)", proc.stderr)
    summary = json.loads((out / "summary.json").read_text())
    graded = len([d for d in out.iterdir() if (d / "results.json").is_file()])
    print(f"class: {args.n} submissions ({', '.join(f'{k} {v}' for k, v in sorted(kinds.items()))})")
    print(f"command: {' '.join(cmd[1:])}{f'  [{settings.FORKSERVER.name}=0]' if args.no_forkserver else ''}")
    print(f"machine: {os.cpu_count()} CPUs; 1-minute load average {load_before:.1f} before, "
          f"{os.getloadavg()[0]:.1f} after (other work on the machine slows the wall clock, not "
          f"the CPU seconds)")
    print(f"graded: {graded} results; mean {summary['mean_total']} / {summary['max_score']:g}")
    print(f"wall: {wall:.1f} s -> {args.n / wall * 60:.1f} submissions per minute")
    print(f"CPU: {cpu:.1f} s in all -> {cpu / args.n:.2f} CPU s per submission")
    for i, (cpu_s, rss, child) in enumerate(workers, 1):
        print(f"worker {i}: {cpu_s} CPU s; peak memory {rss} MiB (largest process under it {child} MiB)")
    print("mistakes counted: " + ", ".join(f"{m['id']} {m['students']}" for m in summary["mistakes"]
                                           if m["students"]))
    if len(trees) > 1 or args.rounds > 1:
        _compare(runs)
    print(f"outputs in {out}" if args.keep else f"(deleted {work}; --keep DIR keeps it)")
    if not args.keep:
        import shutil
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
