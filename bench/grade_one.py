"""How long one submission takes to grade: wall and CPU seconds for the reference and the stubs.

    .venv/bin/python bench/grade_one.py [--repeat N] [--device sim|cpu] [--checks ID,ID]

CPU seconds count the grader (parent) and the child processes that ran student code (the fork
server's import, then each child as it is reaped). The first run pays the fork server's import of
torch; later runs show what a grade-all worker pays per submission. Prints figures; asserts
nothing (the grader's tests never time anything).
"""
from __future__ import annotations

import argparse
import os
import resource
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from autograder.core import course  # noqa: E402
from autograder.grading.grade import grade_submission, load_checks  # noqa: E402
from autograder.lessons.why17 import LESSON  # noqa: E402
from autograder.sandbox import forkserver  # noqa: E402


def _cpu() -> tuple[float, float]:
    """(CPU s of this process, CPU s of its children): the children of the fork server that
    grade_submission keeps (forkserver.ensure) count once it reaped them, read from /proc."""
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    server = forkserver.active()
    forked = 0.0
    if server is not None:
        fields = Path(f"/proc/{server.pid}/stat").read_text().rsplit(")", 1)[1].split()
        forked = sum(int(f) for f in fields[11:15]) / os.sysconf("SC_CLK_TCK")
    return me.ru_utime + me.ru_stime, kids.ru_utime + kids.ru_stime + forked


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--device", default=None)
    p.add_argument("--checks", default=None, help="comma-separated check ids (default: all)")
    args = p.parse_args()
    only = set(args.checks.split(",")) if args.checks else None
    asg = course.load().assignment("why17")
    t0 = time.perf_counter()
    load_checks(LESSON)
    print(f"loading the checks (hypothesis, tables): {time.perf_counter() - t0:.2f} s wall, once per process")
    print(f"{'submission':<10} {'run':>3} {'wall s':>7} {'cpu grader':>11} {'cpu children':>13} "
          f"{'score':>13} {'tests':>6}")
    for label, folder in (("reference", asg.solutions_dir), ("stubs", asg.assignments_dir)):
        for run in range(1, args.repeat + 1):
            wall0, (me0, kids0) = time.perf_counter(), _cpu()
            res = grade_submission(folder, device=args.device, only=only)
            wall, (me1, kids1) = time.perf_counter() - wall0, _cpu()
            print(f"{label:<10} {run:>3} {wall:>7.2f} {me1 - me0:>11.2f} {kids1 - kids0:>13.2f} "
                  f"{res['score']:>6g}/{res['max_score']:<6g} {len(res['tests']):>6}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
