"""Do replayed laws grade exactly as hypothesis does? Grade every fixture both ways and compare.

    .venv/bin/python bench/replay_verdicts.py [--kinds wrong,good,hostile,...]

The hypothesis laws (autograder/lessons/why17/strategies.run_law) draw their cases once per
process and replay them; only a law that fails goes back through hypothesis. Each fixture
(autograder/lessons/why17/fixtures/<kind>/<name>, built on the reference) is graded with the
replay and again with every law run through hypothesis alone, as before the replay; each
check's status and message are compared (numbers masked: the checks of bw.py and flops.py quote
what the code measured, which varies from run to run). Prints each fixture, its times both ways,
and any check that differs. Figures only; nothing here asserts a time.
"""
from __future__ import annotations

import argparse
import re
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from autograder.core import course, lesson  # noqa: E402
from autograder.grading.grade import grade_submission  # noqa: E402
from autograder.lessons.why17 import strategies  # noqa: E402
from autograder.lessons.why17.fixtures import build  # noqa: E402
from autograder.sandbox import forkserver  # noqa: E402

KINDS = ("wrong", "good", "hostile", "gpu", "measurements", "class", "public_wrong", "attacks")


#: A number in a message: checks of bw.py and flops.py quote what the code measured on this CPU,
#: which differs from run to run whichever way the laws run.
NUMBER = re.compile(r"\d[\d.,]*(?:e[+-]?\d+)?")


def outcomes(results: dict) -> dict[str, tuple[str, str]]:
    """Check id -> (status, message with its numbers masked) of a graded submission."""
    return {t["check"]: (t["status"], NUMBER.sub("#", t["output"])) for t in results["tests"]}


def plain_hypothesis(strategy, body, max_examples=strategies.MAX_EXAMPLES):
    """run_law as it was before the replay: every law through hypothesis."""
    strategies._hypothesis(strategy, body, max_examples)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--kinds", default=",".join(KINDS))
    args = p.parse_args(argv)
    forkserver.ensure(**lesson.server_imports(course.load().assignment()))
    replay = strategies.run_law
    work = Path(tempfile.mkdtemp(prefix="why17-replay-"))
    graded = differ = 0
    totals = {"replay": 0.0, "hypothesis": 0.0}
    for kind in args.kinds.split(","):
        for folder in sorted(p for p in (build.HERE / kind).iterdir() if p.is_dir()):
            try:
                sub = build.overlay(kind, folder.name, work / kind / folder.name)
            except Exception as exc:  # a fixture that is not an overlay (e.g. baseline)
                print(f"{kind}/{folder.name}: skipped ({type(exc).__name__}: {exc})")
                continue
            seen, took = {}, {}
            for how, law in (("replay", replay), ("hypothesis", plain_hypothesis)):
                strategies.run_law = law
                t0 = time.monotonic()
                seen[how] = outcomes(grade_submission(sub))
                took[how] = time.monotonic() - t0
                totals[how] += took[how]
            strategies.run_law = replay
            graded += 1
            changed = sorted(c for c in seen["replay"] if seen["replay"][c] != seen["hypothesis"].get(c))
            differ += bool(changed)
            print(f"{kind}/{folder.name}: replay {took['replay']:.1f} s, hypothesis {took['hypothesis']:.1f} s"
                  + (f"; DIFFER: {', '.join(changed)}" if changed else "; same status and message in every check"))
    print(f"{graded} fixtures; {differ} with a check that differs; grading time replay {totals['replay']:.0f} s, "
          f"hypothesis {totals['hypothesis']:.0f} s "
          f"(ratio {totals['replay'] / max(totals['hypothesis'], 1e-9):.2f})")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
