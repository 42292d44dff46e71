"""What a hostile submission costs beside the reference, in one run: wall and CPU seconds of
grading the reference, then each hostile submission (an output flood, a memory hog, a huge
allocation, an endless loop, the reply attacks), and each one's extra over the reference.

    .venv/bin/python bench/hostile_cost.py [--rounds 2] [--only output_flood,memory_hog]

Graded as a grade-all worker grades them (in one process, children forked by the fork server,
course.yml's limits); the first grading pays the fork server's import and is not counted. Each
row is the median over the rounds. The machine's load average is printed beside the figures
(other work slows the wall clock, not the CPU). Figures only; asserts nothing.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from grade_one import _cpu  # noqa: E402

from autograder.core import course  # noqa: E402
from autograder.grading.grade import grade_submission, load_checks  # noqa: E402
from autograder.lessons.why17.fixtures import build  # noqa: E402

#: name -> (fixture kind, fixture name): hostile/ overlays, and attacks/ (the reference with their bw.py).
HOSTILE = {"output_flood": ("hostile", "output_flood"), "huge_allocation": ("hostile", "huge_allocation"),
           "endless_loop": ("hostile", "endless_loop"), "memory_hog": ("attacks", "memory_hog"),
           "reply_hash_keys": ("attacks", "reply_hash_keys"), "reply_many_lists": ("attacks", "reply_many_lists")}


def folder(name: str, where: Path) -> Path | None:
    """The submission ``name`` built under ``where`` (None: an attack this checkout lacks)."""
    kind, fixture = HOSTILE.get(name, ("", ""))
    if kind == "hostile":
        return build.overlay(kind, fixture, where / name)
    dest = where / name
    dest.mkdir(parents=True, exist_ok=True)
    for module in build.MODULES:
        (dest / f"{module}.py").write_bytes((build.REFERENCE / f"{module}.py").read_bytes())
    if kind == "attacks":
        attack = build.HERE / "attacks" / fixture / "bw.py"
        if not attack.is_file():
            return None
        (dest / "bw.py").write_bytes(attack.read_bytes())
    return dest


def grade(path: Path) -> tuple[float, float, float]:
    wall0, (me0, kids0) = time.perf_counter(), _cpu()
    grade_submission(path)
    wall, (me1, kids1) = time.perf_counter() - wall0, _cpu()
    return wall, me1 - me0, kids1 - kids0


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--only", default=",".join(HOSTILE), help="comma-separated names (default: all)")
    args = p.parse_args()
    names = [n for n in args.only.split(",") if n]
    course.load().assignment("why17")
    load_checks()
    with tempfile.TemporaryDirectory() as tmp:
        where = Path(tmp)
        subs = {"reference": folder("reference", where)}
        subs.update({n: folder(n, where) for n in names})
        subs = {n: f for n, f in subs.items() if f is not None}
        grade(subs["reference"])                                   # the fork server's import
        runs: dict[str, list[tuple[float, float, float]]] = {n: [] for n in subs}
        for _ in range(args.rounds):
            for name, path in subs.items():
                runs[name].append(grade(path))
    print(f"load average at the end: {os.getloadavg()[0]:.2f} (1 min); rounds: {args.rounds}")
    print(f"{'submission':<18} {'wall s':>7} {'cpu grader':>11} {'cpu children':>13} {'extra wall':>11} "
          f"{'extra cpu':>10}")
    med = {n: tuple(statistics.median(r[i] for r in rs) for i in range(3)) for n, rs in runs.items()}
    base = med["reference"]
    for name, (wall, me, kids) in med.items():
        print(f"{name:<18} {wall:>7.2f} {me:>11.2f} {kids:>13.2f} {wall - base[0]:>+11.2f} "
              f"{me + kids - base[1] - base[2]:>+10.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
