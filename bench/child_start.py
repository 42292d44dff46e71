"""What one sandboxed child of a torch file costs in CPU, from its launch to its end: the grader's
side (its policy, the launch, the requests), the fork server's child (the jail's launcher, its
init and the bare reaper, the runner with the simulated GPU installed) and the import of the
reference's bw.py. Figures only; nothing here asserts a time.

    .venv/bin/python bench/child_start.py [--children 30] [--rounds 3] [--before DIR ...]

A fork server with the lesson's preload is started as ``grade`` starts it; one child is started and
stopped first (the driver's libraries get built, the caches warm), then ``--children`` children,
one after another, each asked ``has("bw")`` and closed. Each figure is (this process's CPU + the
server's, its reaped children's included) over the children, in ms. ``--before DIR`` runs the same
in another checkout (a git worktree of an earlier commit) in every round, the checkouts in turn,
and prints the paired differences by round.
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


def _server_cpu(pid: int) -> float:
    """CPU seconds of process ``pid`` and of the children it reaped (/proc/PID/stat fields 14-17)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return sum(int(x) for x in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def measure(tree: Path, children: int) -> float:
    """CPU ms per child in checkout ``tree`` (run in a process of its own: ``--tree``)."""
    sys.path.insert(0, str(tree))
    os.chdir(tree)
    from autograder.core import course, lesson
    from autograder.sandbox import forkserver
    from autograder.sandbox.launch import Limits
    from autograder.sandbox.parent import Sandbox

    asg = course.load(tree / "course.yml").assignment(None)
    forkserver.start(preload=lesson.server_imports(asg)["preload"], wait=True, huge_pages=False, later=())
    try:
        server = forkserver.active()
        limits = Limits(time_limit_s=60, memory_limit_mb=asg.memory_limit_mb, sim_profile=asg.sim_profile)
        source = tree / "solutions" / "why17"

        def one() -> None:
            box = Sandbox(source, limits, preload=("torch",))
            try:
                box.has("bw")
            finally:
                box.close()

        one()
        mine = resource.getrusage(resource.RUSAGE_SELF)
        before = mine.ru_utime + mine.ru_stime + _server_cpu(server.pid)
        for _ in range(children):
            one()
        time.sleep(0.3)      # the last child's exit reaped and counted
        mine = resource.getrusage(resource.RUSAGE_SELF)
        return (mine.ru_utime + mine.ru_stime + _server_cpu(server.pid) - before) / children * 1000
    finally:
        forkserver.stop()


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--children", type=int, default=30, help="children per checkout and round (default 30)")
    p.add_argument("--rounds", type=int, default=3, help="rounds, the checkouts in turn (default 3)")
    p.add_argument("--before", type=Path, action="append", default=[], help="another checkout (repeatable)")
    p.add_argument("--tree", type=Path, default=None, help=argparse.SUPPRESS)   # one measurement, in-process
    args = p.parse_args(argv)
    if args.children < 1 or args.rounds < 1:
        p.error(f"--children and --rounds must be at least 1, got {args.children} and {args.rounds}")
    if args.tree is not None:
        print(f"{measure(args.tree.resolve(), args.children):.2f}")
        return 0
    for before in args.before:
        if not (before / "autograder" / "__main__.py").is_file():
            p.error(f"--before {before}: not a checkout of this project (no autograder/__main__.py)")
    trees = [ROOT, *(b.resolve() for b in args.before)]
    load0 = os.getloadavg()
    figures: dict[Path, list[float]] = {t: [] for t in trees}
    for _ in range(args.rounds):
        for tree in trees:
            done = subprocess.run([sys.executable, __file__, "--tree", str(tree), "--children", str(args.children)],
                                  capture_output=True, text=True)
            if done.returncode != 0:
                raise SystemExit(f"bench/child_start.py: {tree} failed:\n{done.stderr[-2000:]}")
            figures[tree].append(float(done.stdout.split()[-1]))
    print(f"load average before {load0[0]:.1f}, after {os.getloadavg()[0]:.1f}; {args.children} children, "
          f"{args.rounds} round(s)")
    for tree, values in figures.items():
        name = "this checkout" if tree == ROOT else str(tree)
        rounds = " ".join(f"{v:.1f}" for v in values)
        print(f"{name:<32} CPU ms per child: median {statistics.median(values):.1f} (rounds {rounds})")
        if tree != ROOT:
            diffs = [a - b for a, b in zip(figures[ROOT], values, strict=True)]
            print(f"{'':<32} this checkout minus it, by round: {' '.join(f'{d:+.1f}' for d in diffs)}; "
                  f"median {statistics.median(diffs):+.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
