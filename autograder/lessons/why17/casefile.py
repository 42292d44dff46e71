"""law_cases.json as a file: where it lies, and how a case is written to it and read back.

A case is a list (read back as a tuple) of numbers, strings, such lists and the dataclasses of
domain.py, written as ``{"GpuSpec": {field: value}}``; nothing else is written or built.
cases.py reads the table for grading and draw.py writes it; both use this module, and neither
the other.
"""
from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

from autograder.lessons.why17.domain import TYPES

FILE = Path(__file__).with_name("law_cases.json")
SCHEMA = "why17-law-cases/1"
COMMAND = "python -m autograder.lessons.why17.cases --write"


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
