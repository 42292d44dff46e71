"""The laws' table of cases, law_cases.json: what each hypothesis law of the checks is graded on.

The table was drawn once by hypothesis from the strategies in strategies.py (draw.py), then
committed and reviewed like code; grading only reads it, so a grade never depends on hypothesis,
on the modules a process imported or on an edit elsewhere, and grading never imports hypothesis.
Each law's cases are sorted simplest first (the lesson's machines and models before made-up ones,
then shorter numbers), and a law reports the first case that fails: no shrinking.

The file is data only: per law a list of cases, each a list (read back as a tuple) of numbers,
strings, such lists and the dataclasses of domain.py, written as ``{"GpuSpec": {field: value}}``;
nothing in it is executed, and anything else is refused with one line naming the file (casefile.py
writes and reads a case; draw.py, which draws the cases, uses it too).

    python -m autograder.lessons.why17.cases            # what the table holds, law by law
    python -m autograder.lessons.why17.cases --write    # draw it again (then review the diff)
"""
from __future__ import annotations

import argparse
import functools
import json
import sys
from collections.abc import Callable
from pathlib import Path

from autograder.core.errors import GraderError
from autograder.lessons.why17.casefile import COMMAND, FILE, SCHEMA, decode


class CaseTableError(GraderError):
    """law_cases.json is missing, malformed, or lacks a law's cases: the grader's own failure,
    never a student's score (the engine stops the grading)."""


def run_law(law: str, body: Callable[[object], None]) -> None:
    """Check ``body(case)`` on each case of ``law`` in the table, in its order (simplest first).

    ``body`` raises CheckFailed with a plain-words message for a failing case: the first one
    ends the law with that message. A call that hangs, crashes or finds the module missing
    raises from ``body`` as it is. Cases are immutable (tuples, frozen dataclasses), so a body
    cannot change what the next submission sees.
    """
    for case in cases(law):
        body(case)


def cases(law: str) -> tuple:
    """The cases of ``law``; CaseTableError when the table has none."""
    laws = load()
    if law not in laws:
        raise CaseTableError(f"{FILE.name} has no cases for the law {law!r}; draw them with {COMMAND}")
    return laws[law]


def load(path: Path | None = None) -> dict[str, tuple]:
    """Law name -> its decoded cases from ``path`` (default FILE), read once per process;
    CaseTableError naming the file and the law when anything in it is not what this module writes."""
    return _load(path or FILE)


@functools.cache
def _load(path: Path) -> dict[str, tuple]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise CaseTableError(f"{path}: cannot read the laws' cases ({exc})") from None
    if not isinstance(data, dict) or data.get("schema") != SCHEMA or not isinstance(data.get("laws"), dict):
        raise CaseTableError(f"{path}: not a table of law cases (schema {SCHEMA!r} with a 'laws' object)")
    out = {}
    for law, rows in data["laws"].items():
        if not isinstance(rows, list) or not rows:
            raise CaseTableError(f"{path}: law {law!r} has no list of cases")
        try:
            out[law] = tuple(decode(row) for row in rows)
        except (TypeError, ValueError) as exc:
            raise CaseTableError(f"{path}: law {law!r}: {exc}") from None
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m autograder.lessons.why17.cases", description=(
        "Show the laws' table of cases (law_cases.json), or draw it again with --write."))
    parser.add_argument("--write", action="store_true",
                        help="draw every law's cases with hypothesis from strategies.py and rewrite the file")
    args = parser.parse_args(argv)
    try:
        if args.write:
            from autograder.lessons.why17 import draw  # hypothesis: a maintainer's tool, never grading
            draw.write(FILE)
            _load.cache_clear()
        laws = load()
    except (CaseTableError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    for law, rows in laws.items():
        print(f"{law}: {len(rows)} cases")
    return 0


if __name__ == "__main__":
    sys.exit(main())
