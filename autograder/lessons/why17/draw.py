"""Drawing law_cases.json: hypothesis draws each law's cases from strategies.py, once.

A maintainer's tool (``python -m autograder.lessons.why17.cases --write``), never run by grading.
For each law of ``strategies.laws()`` hypothesis draws a pool of cases (public API: ``given``,
``settings`` and ``seed``, the seed taken from the law's name, so two laws with one strategy get
different cases and a rerun draws the same pool while the strategies and hypothesis stay the
same). The table keeps the pool's first distinct cases, as many as the law asks for, adds the
first cases that bring in any of the lesson's machines and models (shared/data) not yet among
them, and sorts them simplest first. Then it is reviewed and committed like code: nothing checks
it against the strategies afterwards.
"""
from __future__ import annotations

import dataclasses
import json
import zlib
from pathlib import Path

from hypothesis import HealthCheck, Phase, Verbosity, given, seed, settings

from autograder.core.atomic import atomic_write
from autograder.lessons.why17 import casefile as table
from autograder.lessons.why17 import strategies as S
from autograder.lessons.why17.domain import GpuSpec, ModelShape

#: Cases hypothesis draws per law before the table's are picked from them.
POOL = 2000
DRAWING = settings(database=None, deadline=None, phases=(Phase.generate,),
                   suppress_health_check=list(HealthCheck), verbosity=Verbosity.quiet)


def write(path: Path) -> None:
    """Draw every law's cases and write the table to ``path``."""
    laws = {law: pick(law, pool(law, strategy), n) for law, (strategy, n) in S.laws().items()}
    atomic_write(path, table.dumps(laws))
    path.chmod(0o644)          # readable by whoever grades (atomic_write's temporary file is 0600)


def pool(law: str, strategy) -> list:
    """Up to POOL cases of ``strategy``, in the order hypothesis draws them for ``law``."""
    drawn: list = []

    @seed(zlib.crc32(law.encode()))
    @settings(DRAWING, max_examples=POOL)
    @given(strategy)
    def collect(case):
        drawn.append(case)
    collect()
    return drawn


def pick(law: str, drawn: list, n: int) -> list:
    """The first ``n`` distinct cases of ``drawn``, then the first that bring in a missing table
    machine or model, simplest first; ValueError when the pool lacks one of them."""
    first: dict[str, object] = {}
    for case in drawn:
        first.setdefault(_text(case), case)
    distinct = list(first.values())
    chosen, missing = distinct[:n], _rows_needed(drawn)
    missing -= {name for case in chosen for name in _rows_in(case)}
    for case in distinct[n:]:
        if missing & _rows_in(case):
            chosen.append(case)
            missing -= _rows_in(case)
    if missing:
        raise ValueError(f"law {law}: {POOL} draws never held {', '.join(sorted(missing))}")
    return sorted(chosen, key=simplest)


def simplest(case) -> tuple:
    """Sort key: fewer made-up machines and models first, then fewer characters of numbers
    outside the table's rows (batch 2 before batch 2825), then of all numbers."""
    made_up = sum(1 for p in _leaves(case) if _is_made_up(p))
    return made_up, _digits(case, rows=False), _digits(case, rows=True), _text(case)


def _digits(case, rows: bool) -> int:
    """Characters of the numbers in ``case`` (those inside table rows only when ``rows``)."""
    if isinstance(case, (int, float)) and not isinstance(case, bool):
        return len(repr(case))
    if isinstance(case, (GpuSpec, ModelShape)) and not rows and not _is_made_up(case):
        return 0
    return sum(_digits(item, rows) for item in _children(case))


def _rows_needed(drawn: list) -> set[str]:
    """The lesson's machines and models a law's table must hold: those of the kinds its cases hold."""
    kinds = {type(p) for case in drawn for p in _leaves(case)}
    out = set()
    if GpuSpec in kinds:
        out |= {g.name for g in S.table_gpus()}
    if ModelShape in kinds:
        out |= {m.name for m in S.table_models()}
    return out


def _rows_in(case) -> set[str]:
    return {p.name for p in _leaves(case) if isinstance(p, (GpuSpec, ModelShape)) and not _is_made_up(p)}


def _is_made_up(p) -> bool:
    return isinstance(p, (GpuSpec, ModelShape)) and p.name == type(p).name


def _leaves(case):
    """``case`` and every tuple item and dataclass field inside it, depth first."""
    yield case
    for item in _children(case):
        yield from _leaves(item)


def _children(case) -> list:
    if isinstance(case, tuple):
        return list(case)
    if dataclasses.is_dataclass(case):
        return [getattr(case, f.name) for f in dataclasses.fields(case)]
    return []


def _text(case) -> str:
    return json.dumps(table.encode(case))
