"""Do the per-call limits from the reference's time change any verdict? Grade every fixture.

    .venv/bin/python bench/verdicts.py [--kinds wrong,good,hostile,...] [--device sim|cpu]

Each fixture (autograder/lessons/why17/fixtures/<kind>/<name>, overlaid on the reference) is graded
in full with course.yml's limits (a multiple of the reference's time for the same call, with a
floor: autograder/sandbox/calltime.py). A limit can only differ from the old fixed 60 s for a call
that ran past the floor, so every such call is listed, and each fixture that had one is graded
again with the fixed limit (``time_limit_s=60``, the old rule) and its verdicts compared check by
check. Prints the fixtures, the slow calls, and any verdict that differs. Figures only.
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

from autograder.core import course, lesson  # noqa: E402
from autograder.grading.grade import grade_submission  # noqa: E402
from autograder.lessons.why17.fixtures import build  # noqa: E402
from autograder.sandbox import calltime, forkserver  # noqa: E402

KINDS = ("wrong", "good", "hostile", "gpu", "measurements", "class", "public_wrong", "attacks")
#: The old rule: one fixed limit per call (course.yml's time_limit_s before derived limits).
OLD_FIXED_S = 60.0


def verdicts(results: dict) -> dict[str, str]:
    return {t["check"]: t["status"] for t in results["tests"]}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--kinds", default=",".join(KINDS))
    p.add_argument("--device", default=None)
    args = p.parse_args(argv)
    consulted: list[tuple[str, float]] = []
    original = calltime.ReferenceTimer.limit_s

    def limit_s(self, request):            # record every call that ran past the floor
        limit = original(self, request)
        consulted.append((f"{request['module']}.{request.get('function', '(import)')}", limit))
        return limit

    calltime.ReferenceTimer.limit_s = limit_s
    asg = course.load().assignment("why17")
    forkserver.ensure(**lesson.server_imports(asg))
    print(f"limits: {asg.time_limit_multiple:g}x the reference, floor {asg.time_limit_floor_s:g} s, "
          f"ceiling {asg.time_limit_s:g} s; old rule: {OLD_FIXED_S:g} s per call; load {os.getloadavg()[0]:.1f}")
    work = Path(tempfile.mkdtemp(prefix="why17-verdicts-"))
    graded = differ = 0
    started = time.monotonic()
    for kind in args.kinds.split(","):
        for folder in sorted(p for p in (build.HERE / kind).iterdir() if p.is_dir()):
            name = folder.name
            try:
                sub = build.overlay(kind, name, work / kind / name)
            except Exception as exc:  # a fixture that is not an overlay (e.g. baseline)
                print(f"{kind}/{name}: skipped ({type(exc).__name__}: {exc})")
                continue
            del consulted[:]
            t0 = time.monotonic()
            new = grade_submission(sub, device=args.device)
            graded += 1
            slow = list(consulted)
            line = f"{kind}/{name}: {new['score']:g}/{new['max_score']:g} in {time.monotonic() - t0:.1f} s"
            if not slow:
                print(line)
                continue
            if all(limit >= OLD_FIXED_S for _call, limit in slow):   # the old limit, by construction
                print(line + "; past the floor: " + ", ".join(call for call, _limit in slow)
                      + f" (limit {OLD_FIXED_S:g} s: as the old rule)")
                continue
            old = grade_submission(sub, device=args.device, time_limit_s=OLD_FIXED_S)
            changed = {c: (verdicts(old).get(c), v) for c, v in verdicts(new).items() if verdicts(old).get(c) != v}
            differ += bool(changed)
            print(line + "; past the floor: " + ", ".join(f"{call} (limit {limit:.1f} s)" for call, limit in slow)
                  + (f"; VERDICTS DIFFER (old, new): {changed}" if changed else "; verdicts as with 60 s"))
    print(f"{graded} fixtures graded in {time.monotonic() - started:.0f} s; {differ} with a verdict that differs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
