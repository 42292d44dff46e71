"""Where one `python -m autograder grade` spends its CPU, process by process: the grader, the fork
server, each sandboxed child's tree (the jail's launcher, its init and reaper, the runner) and the
children started as fresh interpreters. Figures only; nothing here asserts a time.

    sudo .venv/bin/python bench/grade_processes.py [--rounds 3] [--before DIR] [FOLDER]

Every process records its CPU seconds when it exits through the kernel's process accounting
(acct(2), BSD version 3 records: user and system time in 10 ms ticks, the parent's pid, whether it
exec'd), switched on for this run only; so it needs root and a kernel built with
CONFIG_BSD_PROCESS_ACCT, and says so in one line otherwise. The machine's other processes are
recorded too and left out: only the tree below this script counts. ``--before DIR`` grades the
same folder with another checkout's code in every round, so a change is measured before and after
in one run. Each figure is the median over the rounds.
"""
from __future__ import annotations

import argparse
import ctypes
import os
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: One acct_v3 record: flag, version, tty, exit code, uid, gid, pid, ppid, start, elapsed (float),
#: then comp_t user and system ticks (AHZ = 100 a second); the command name is the last 16 bytes.
RECORD = struct.Struct("<BBHIIIIIIfHH")
RECORD_BYTES = 64
AFORK = 0x01     # forked and never exec'd
AHZ = 100


def _comp(value: int) -> int:
    """A comp_t (13-bit mantissa, 3-bit base-8 exponent) as an integer."""
    return (value & 0x1FFF) << (3 * (value >> 13))


def records(raw: bytes) -> list[dict]:
    """The accounting file's records: pid, ppid, CPU seconds, forked-only, elapsed seconds."""
    out = []
    for at in range(0, len(raw) - RECORD_BYTES + 1, RECORD_BYTES):
        flag, _v, _t, _x, _u, _g, pid, ppid, _b, etime, ut, st = RECORD.unpack_from(raw, at)
        out.append({"pid": pid, "ppid": ppid, "cpu": (_comp(ut) + _comp(st)) / AHZ,
                    "forked": bool(flag & AFORK), "life": etime / AHZ})
    return out


def roles(recs: list[dict], root: int) -> dict[str, list[float]]:
    """CPU seconds by role in the tree below ``root`` (the grade command's process):
    ``grader``; ``fork server``; ``forked child`` and ``fresh child`` (one figure per sandboxed
    child: its whole tree, launcher, init/reaper and runner)."""
    below = defaultdict(list)
    for r in recs:
        below[r["ppid"]].append(r)

    def tree(r) -> float:
        return r["cpu"] + sum(tree(k) for k in below.get(r["pid"], []))

    out: dict[str, list[float]] = defaultdict(list)
    for grader in below.get(root, []):
        out["grader"].append(grader["cpu"])
        for kid in below.get(grader["pid"], []):
            grandkids = below.get(kid["pid"], [])
            if sum(g["forked"] for g in grandkids) >= 2:   # the fork server: a child per launch
                out["fork server"].append(kid["cpu"])
                for launched in grandkids:
                    out["forked child"].append(tree(launched))
            else:
                out["fresh child"].append(tree(kid))
    return out


def accounted(argv: list[str], cwd: Path, scratch: Path) -> dict[str, list[float]]:
    """Run ``argv`` with process accounting on; CPU seconds by role (``roles``)."""
    libc = ctypes.CDLL(None, use_errno=True)
    path = scratch / "acct"
    path.write_bytes(b"")
    if libc.acct(str(path).encode()) != 0:
        raise SystemExit(f"bench/grade_processes.py: acct(2) refused: {os.strerror(ctypes.get_errno())}"
                         " (needs root and a kernel with CONFIG_BSD_PROCESS_ACCT)")
    try:
        done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True)
        time.sleep(0.2)      # the last exits' records
    finally:
        libc.acct(None)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv[1:4])} exited {done.returncode}:\n{done.stderr[-2000:]}")
    return roles(records(path.read_bytes()), os.getpid())


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("folder", nargs="?", type=Path, default=ROOT / "solutions" / "why17")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--before", type=Path, action="append", default=[],
                   help="another checkout whose grade runs in every round too (repeatable)")
    args = p.parse_args(argv)
    if args.rounds < 1:
        p.error(f"--rounds must be at least 1, got {args.rounds}")
    trees = [ROOT, *args.before]
    load0 = os.getloadavg()
    by_tree: dict[Path, list[dict]] = {t: [] for t in trees}
    with tempfile.TemporaryDirectory(prefix="why17-procs-") as scratch:
        for _ in range(args.rounds):
            for tree in trees:
                by_tree[tree].append(accounted([sys.executable, "-m", "autograder", "grade", str(args.folder.resolve()),
                                                "--out", f"{scratch}/r.json"], tree, Path(scratch)))
    print(f"load average before {load0[0]:.1f}, after {os.getloadavg()[0]:.1f}; {args.rounds} round(s), medians")
    print(f"{'checkout':<28} {'role':<14} {'count':>5} {'CPU s':>7}  per process")
    for tree, runs in by_tree.items():
        name = "this checkout" if tree == ROOT else str(tree)
        total = statistics.median(sum(sum(v) for v in run.values()) for run in runs)
        for role in ("grader", "fork server", "forked child", "fresh child"):
            sums = [sum(run.get(role, [])) for run in runs]
            each = " ".join(f"{x:.2f}" for x in sorted(runs[0].get(role, []), reverse=True)[:8])
            print(f"{name:<28} {role:<14} {len(runs[0].get(role, [])):>5} {statistics.median(sums):>7.2f}  {each}")
        print(f"{name:<28} {'total':<14} {'':>5} {total:>7.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
