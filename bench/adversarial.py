"""Grade the adversarial GPU-timing set and print each verdict beside what its manifest expects.

    .venv/bin/python bench/adversarial.py [--set DIR] [--only good,wrong,forged] [--names a,b] [--secrets s1,s2]

The set (autograder/lessons/why17/fixtures/adversarial/, written by a reviewer who read only the
docs and shared/) holds correct timing styles (good/: every GPU check passes), single mistakes
(wrong/: exactly the manifest's check fails) and forgeries (forged/: no GPU check passes). Each is
graded by the real grader on the GPU checks alone. Prints one line per submission and the count
of verdicts that match; figures only (tests/lessons/why17/test_gpu_adversarial.py asserts the same outcomes).
``--secrets`` grades every entry under each of these simulator secrets in turn (each draws another
seeded device, probe and order): a verdict that holds under one secret only shows as BAD there.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from autograder.core import course, lesson, settings  # noqa: E402
from autograder.grading.grade import grade_submission  # noqa: E402
from autograder.lessons.why17.fixtures import adversarial  # noqa: E402
from autograder.sandbox import forkserver  # noqa: E402


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--set", type=Path, default=adversarial.HERE, help="the set's folder (with manifest.yml)")
    p.add_argument("--only", default="good,wrong,forged", help="kinds to grade")
    p.add_argument("--names", default="", help="grade only these names (comma-separated)")
    p.add_argument("--secrets", default="", help="grade under each of these simulator secrets (comma-separated; "
                                                 "default: the one in force)")
    args = p.parse_args(argv)
    secrets = [s for s in args.secrets.split(",") if s] or [None]
    kinds = set(args.only.split(","))
    names = set(filter(None, args.names.split(",")))
    entries = [e for e in adversarial.entries(args.set) if e.kind in kinds and (not names or e.name in names)]
    forkserver.start(**lesson.server_imports(course.load().assignment()))
    right = 0
    started = time.monotonic()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for entry in entries:
                folder = adversarial.build(entry, Path(tmp) / entry.kind / entry.name, args.set)
                for secret in secrets:
                    if secret is not None:
                        os.environ[settings.SIM_SECRET.name] = secret
                    results = grade_submission(folder, only=adversarial.checks(entry, args.set))
                    ok, what = adversarial.judge(entry, results)
                    right += ok
                    under = "" if secret is None else f" [{secret}]"
                    known = f" [open: {entry.open}]" if entry.open and not ok else ""
                    print(f"{'ok ' if ok else 'BAD'} {entry.kind}/{entry.name:34} {what}{under}{known}", flush=True)
    finally:
        forkserver.stop()
    total = len(entries) * len(secrets)
    print(f"{right} of {total} verdicts as expected ({time.monotonic() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
