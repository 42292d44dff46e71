"""Do the laws' tables catch what hypothesis catches? Grade every fixture's laws both ways and compare.

    .venv/bin/python bench/law_verdicts.py [--kinds wrong,good,hostile,...] [--examples 100]

The hypothesis laws grade from their table of cases (autograder/lessons/why17/law_cases.json,
cases.run_law). Each fixture (autograder/lessons/why17/fixtures/<kind>/<name>, built on the
reference) has its law checks graded with the table and again with cases hypothesis draws afresh
from the same strategies (strategies.run_fresh, derandomized); each check's status is compared
(the messages quote different cases by design). Prints each fixture and any check whose status
differs: a law that fails only on fresh draws has a table too weak for it. Exits 1 when one
differs.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, Phase, settings

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from autograder.core import course, lesson  # noqa: E402
from autograder.grading.grade import grade_submission, load_checks  # noqa: E402
from autograder.lessons.why17 import LESSON, cases  # noqa: E402
from autograder.lessons.why17 import strategies as S  # noqa: E402
from autograder.lessons.why17.fixtures import build  # noqa: E402
from autograder.sandbox import forkserver  # noqa: E402

KINDS = ("wrong", "good", "hostile", "gpu", "measurements", "class", "public_wrong", "attacks")


def statuses(folder: Path, only: set[str]) -> dict[str, str]:
    """Check id -> status of the law checks of a graded submission."""
    return {t["check"]: t["status"] for t in grade_submission(folder, device="cpu", only=only)["tests"]}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--kinds", default=",".join(KINDS))
    p.add_argument("--examples", type=int, default=100, help="cases hypothesis draws per law (default 100)")
    args = p.parse_args(argv)
    profile = settings(derandomize=True, deadline=None, database=None, max_examples=args.examples,
                       phases=(Phase.explicit, Phase.generate), suppress_health_check=list(HealthCheck))
    laws = {c.id for c in load_checks(LESSON).values() if c.id.startswith(("law_", "errors_"))}
    forkserver.ensure(**lesson.server_imports(course.load().assignment()))
    table = cases.run_law
    work = Path(tempfile.mkdtemp(prefix="why17-laws-"))
    graded = differ = 0
    for kind in args.kinds.split(","):
        for folder in sorted(p for p in (build.HERE / kind).iterdir() if p.is_dir()):
            try:
                sub = build.overlay(kind, folder.name, work / kind / folder.name)
            except Exception as exc:  # a fixture that is not an overlay (e.g. baseline)
                print(f"{kind}/{folder.name}: skipped ({type(exc).__name__}: {exc})")
                continue
            seen = {"table": statuses(sub, laws)}
            cases.run_law = lambda law, body: S.run_fresh(law, body, profile)
            try:
                seen["fresh"] = statuses(sub, laws)
            finally:
                cases.run_law = table
            graded += 1
            changed = sorted(c for c in seen["table"] if seen["table"][c] != seen["fresh"].get(c))
            differ += bool(changed)
            print(f"{kind}/{folder.name}: " + (
                "; ".join(f"DIFFER {c}: table {seen['table'][c]}, fresh draws {seen['fresh'].get(c)}" for c in changed)
                or "same status in every law check"))
    print(f"{graded} fixtures; {differ} with a law check whose status differs")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
