"""The laws' table of cases, law_cases.json: what each hypothesis law of the checks is graded on.

The table was drawn once by hypothesis from the strategies in strategies.py (draw.py), then
committed and reviewed like code; grading only reads it, so a grade never depends on hypothesis,
on the modules a process imported or on an edit elsewhere, and grading never imports hypothesis.
Each law's cases are sorted simplest first (the lesson's machines and models before made-up ones,
then shorter numbers), and a law reports the first case that fails: no shrinking.

The file is data only: per law a list of cases, each a list (read back as a tuple) of numbers,
strings, such lists and the dataclasses of domain.py, written as ``{"GpuSpec": {field: value}}``;
nothing in it is executed, and anything else is refused with one line naming the file.

    python -m autograder.lessons.why17.cases            # what the table holds, law by law
    python -m autograder.lessons.why17.cases --write    # draw it again (then review the diff)
"""
from __future__ import annotations

import argparse
import dataclasses
import functools
import json
import math
import sys
from collections.abc import Callable
from pathlib import Path

from autograder.core.errors import GraderError
from autograder.lessons.why17.domain import TYPES

FILE = Path(__file__).with_name("law_cases.json")
SCHEMA = "why17-law-cases/1"
COMMAND = "python -m autograder.lessons.why17.cases --write"


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


def encode(value):
    """``value`` as the table's JSON data; TypeError for anything but what a case may hold."""
    if isinstance(value, str) or _number(value):
        return value
    if isinstance(value, tuple):
        return [encode(v) for v in value]
    name = type(value).__name__
    if TYPES.get(name) is type(value):
        return {name: {f.name: encode(getattr(value, f.name)) for f in dataclasses.fields(value)}}
    raise TypeError(f"a case holds a {name}, which {FILE.name} cannot store")


def decode(data):
    """The case ``encode`` wrote as ``data``; TypeError for anything else (no other type is built)."""
    if isinstance(data, str) or _number(data):
        return data
    if isinstance(data, list):
        return tuple(decode(v) for v in data)
    if isinstance(data, dict) and len(data) == 1:
        (name, fields), = data.items()
        cls = TYPES.get(name)
        if cls is not None and isinstance(fields, dict):
            return _build(cls, fields)
    raise TypeError(f"not a case: {json.dumps(data)[:80]}")


def _build(cls: type, fields: dict):
    """``cls`` from ``fields``: exactly its fields, each of its annotated kind."""
    declared = {f.name: f.type for f in dataclasses.fields(cls)}
    if set(fields) != set(declared):
        raise TypeError(f"a {cls.__name__} needs the fields {', '.join(declared)}, got {', '.join(fields)}")
    values = {k: decode(v) for k, v in fields.items()}
    for name, kind in declared.items():
        value = values[name]
        ok = {"float": _number(value), "int": _number(value) and isinstance(value, int),
              "str": isinstance(value, str)}.get(kind, isinstance(value, TYPES.get(kind, ())))
        if not ok:
            raise TypeError(f"{cls.__name__}.{name} must be a {kind}, got {value!r}")
    return cls(**values)


def _number(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def dumps(laws: dict[str, list]) -> str:
    """The table's text from law name -> cases: one case per line, so a diff shows each case."""
    lines = [f'{{"schema": "{SCHEMA}",', f' "about": "cases of the laws of checks/predict_laws.py and '
             f'checks/predict_errors.py, drawn by {COMMAND}, simplest first",', ' "laws": {']
    for i, (law, rows) in enumerate(laws.items()):
        body = ",\n".join("    " + json.dumps(encode(case)) for case in rows)
        lines.append(f"  {json.dumps(law)}: [\n{body}\n  ]" + ("," if i < len(laws) - 1 else ""))
    return "\n".join(lines) + "\n}}\n"


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
