"""Grade the adversarial GPU-timing set and print each verdict beside what its manifest expects.

    .venv/bin/python bench/adversarial.py [--set DIR] [--only good,wrong,forged] [--names a,b] [--secrets s1,s2]

The set (autograder/lessons/why17/fixtures/adversarial/, written by a reviewer who read only the
docs and shared/) holds correct timing styles (good/: every GPU check passes), single mistakes
(wrong/: exactly the manifest's check fails) and forgeries (forged/: no GPU check passes). Each is
graded by the real grader on the GPU checks alone. Prints one line per submission and the count
of verdicts that match; figures only (tests/lessons/why17/test_gpu_adversarial.py asserts the same outcomes).
``--secrets`` grades every entry under each of these simulator secrets in turn (each draws another
seeded device, probe and order): a verdict that holds under one secret only shows as BAD there.
``--busy N`` keeps N busy loops running meanwhile (each in a session of its own, as the kernel's
autogroups share a core between sessions first), and ``--beside N`` grades a generated class of N
students with grade-all, round after round, beside the set: what a TA grading two classes at once
on a loaded machine does. A verdict that changes with the load shows as BAD; the class's totals of
every round are printed too, so a round that differs from the first shows.
"""
from __future__ import annotations

import argparse
import csv
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from autograder.core import course, lesson, settings  # noqa: E402
from autograder.grading.grade import grade_submission  # noqa: E402
from autograder.lessons.why17.fixtures import adversarial  # noqa: E402
from autograder.lessons.why17.fixtures.classes import KINDS, write_student  # noqa: E402
from autograder.sandbox import forkserver  # noqa: E402


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--set", type=Path, default=adversarial.HERE, help="the set's folder (with manifest.yml)")
    p.add_argument("--only", default="good,wrong,forged", help="kinds to grade")
    p.add_argument("--names", default="", help="grade only these names (comma-separated)")
    p.add_argument("--secrets", default="", help="grade under each of these simulator secrets (comma-separated; "
                                                 "default: the one in force)")
    p.add_argument("--busy", type=int, default=0, help="busy loops to keep running meanwhile")
    p.add_argument("--beside", type=int, default=0, help="grade a class of this many students beside, again and again")
    args = p.parse_args(argv)
    secrets = [s for s in args.secrets.split(",") if s] or [None]
    kinds = set(args.only.split(","))
    names = {name.split("/")[-1] for name in args.names.split(",") if name}      # "forged/x" or "x"
    every = adversarial.entries(args.set)
    unknown = sorted(kinds - {e.kind for e in every}) + sorted(names - {e.name for e in every})
    if unknown:         # a typo would otherwise grade nothing and print "0 of 0 verdicts as expected"
        p.error(f"no such kind or entry in {args.set / 'manifest.yml'}: {', '.join(unknown[:5])}")
    entries = [e for e in every if e.kind in kinds and (not names or e.name in names)]
    # a `kill` unwinds as Ctrl-C does, so the busy loops and the class graded beside stop with it
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    forkserver.start(**lesson.server_imports(course.load().assignment()))
    right = 0
    started = time.monotonic()
    loads = []
    with tempfile.TemporaryDirectory() as tmp, Load(args.busy, args.beside, Path(tmp) / "beside") as load:
        try:
            for entry, secret, results, ok, what in gradings(entries, secrets, args.set, Path(tmp)):
                right += ok
                loads.append(os.getloadavg()[0])
                under = "" if secret is None else f" [{secret}]"
                known = f" [open: {entry.open}]" if entry.open and not ok else ""
                print(f"{'ok ' if ok else 'BAD'} {entry.kind}/{entry.name:34} {what}{under}{known}", flush=True)
                if not ok:      # each check's line, so that a verdict that moved under load says why
                    for test in results["tests"]:
                        line = (test["output"] or "").split("\n")[0][:160]
                        print(f"      {test['status']:6} {test['check']}: {line}")
        finally:
            forkserver.stop()
        load.report()
    total = len(entries) * len(secrets)
    print(f"{right} of {total} verdicts as expected ({time.monotonic() - started:.0f} s)")
    if loads:
        print(f"1-minute load average after each grading: min {min(loads):.1f}, median "
              f"{sorted(loads)[len(loads) // 2]:.1f}, max {max(loads):.1f} on {os.cpu_count()} CPUs")
    return 0


def gradings(entries: list, secrets: list, set_folder: Path, tmp: Path):
    """(entry, secret, results, right, what) for each entry under each simulator secret in turn
    (None: the one in force), graded by the real grader on the entry's GPU checks, with
    ``adversarial.judge``'s verdict; the caller runs the fork server."""
    for entry in entries:
        folder = adversarial.build(entry, tmp / entry.kind / entry.name, set_folder)
        for secret in secrets:
            if secret is not None:
                os.environ[settings.SIM_SECRET.name] = secret
            results = grade_submission(folder, only=adversarial.checks(entry, set_folder))
            ok, what = adversarial.judge(entry, results)
            yield entry, secret, results, ok, what


class Load:
    """Busy loops and a class graded round after round beside the set, stopped on exit."""

    def __init__(self, busy: int, beside: int, work: Path):
        self.busy, self.beside, self.work = busy, beside, work
        self.loops: list[subprocess.Popen] = []
        self.grader: subprocess.Popen | None = None

    def __enter__(self):
        self.loops = [subprocess.Popen([sys.executable, "-c", "while True: pass"], start_new_session=True)
                      for _ in range(self.busy)]
        if self.beside:
            src = self.work / "submissions"
            src.mkdir(parents=True)
            for i in range(self.beside):
                write_student(src, f"s{i:03d}", KINDS[i % len(KINDS)])
            rounds = (f"for i in $(seq 1 1000); do {sys.executable} -m autograder grade-all {src} "
                      f"--out {self.work}/out$i --jobs 1 >/dev/null 2>&1 || exit 1; done")
            self.grader = subprocess.Popen(["bash", "-c", rounds], cwd=ROOT, start_new_session=True)
        return self

    def __exit__(self, *exc):
        for proc in self.loops + ([self.grader] if self.grader else []):
            try:
                os.killpg(proc.pid, 9)
            except ProcessLookupError:
                pass
            proc.wait()

    def report(self):
        """Print each finished round's totals beside the class; a round unlike the first shows."""
        if not self.beside:
            return
        totals = []
        for out in sorted(self.work.glob("out*"), key=lambda p: int(p.name[3:])):
            book = out / "gradebook.csv"
            if book.is_file():
                with book.open(newline="") as f:
                    totals.append(sorted((r["student"], r["total"]) for r in csv.DictReader(f)))
        same = sum(t == totals[0] for t in totals) if totals else 0
        print(f"beside: {len(totals)} finished grade-all rounds of {self.beside} students, "
              f"{same} with the first round's totals; busy loops: {self.busy}")


if __name__ == "__main__":
    sys.exit(main())
