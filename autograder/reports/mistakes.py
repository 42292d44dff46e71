"""The lesson's classic mistakes (mistakes.yml) and which of them one student's results show.

A student made a mistake when at least one of its checks failed by a verdict (``outcome`` is
"failed": the check ran the code and saw the mistake) and every check it ``requires`` passed. A
check that failed because the code never gave a value (``outcome`` "error": raised, hung, crashed,
missing) counts under ``NOT_RUN`` instead, so an unfinished submission is not blamed for every
mistake at once. ``also_failed`` (optional) names checks that must have failed by a verdict too:
where two mistakes trip the same check, the other checks they fail tell them apart.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import yaml

from autograder.core.errors import UsageError
from shared import yamlfile

#: The pseudo-mistake for checks whose code never ran (raised, hung, crashed, missing).
NOT_RUN = "code_did_not_run"
_KEYS = {"id": str, "title": str, "explain": str, "lesson": str, "checks": list}


@dataclass(frozen=True)
class Mistake:
    id: str
    title: str
    explain: str
    lesson: str
    checks: tuple[str, ...]
    requires: tuple[str, ...] = ()
    also_failed: tuple[str, ...] = ()
    #: optional: the one-line fix the feedback page's "What went wrong" box gives
    fix: str = ""


@lru_cache(maxsize=4)
def load(path: Path | str) -> tuple[Mistake, ...]:
    """Parse and validate the mistakes file; UsageError names the entry and the file."""
    path = Path(path)
    try:
        data = yamlfile.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError):
        raise UsageError(f"{path}: not a readable YAML file") from None
    entries = data.get("mistakes") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        raise UsageError(f"{path}: expected a top-level 'mistakes' list")
    out, seen = [], set()
    for i, raw in enumerate(entries):
        where = f"{path}: mistakes[{i}]"
        if not isinstance(raw, dict):
            raise UsageError(f"{where} must be a mapping")
        for key, kind in _KEYS.items():
            if not isinstance(raw.get(key), kind):
                raise UsageError(f"{where}.{key} must be a {kind.__name__}")
        unknown = set(raw) - set(_KEYS) - {"requires", "also_failed", "fix"}
        if unknown:
            raise UsageError(f"{where}: unknown key {sorted(unknown)[0]!r}")
        if raw["id"] in seen or raw["id"] == NOT_RUN:
            raise UsageError(f"{where}.id {raw['id']!r} is used twice or reserved")
        seen.add(raw["id"])
        requires, also = raw.get("requires", []), raw.get("also_failed", [])
        if not isinstance(requires, list) or not isinstance(also, list):
            raise UsageError(f"{where}.requires and .also_failed must be lists")
        if not isinstance(raw.get("fix", ""), str):
            raise UsageError(f"{where}.fix must be a str")
        out.append(Mistake(id=raw["id"], title=raw["title"], explain=raw["explain"],
                           lesson=raw["lesson"], checks=tuple(map(str, raw["checks"])),
                           requires=tuple(map(str, requires)), also_failed=tuple(map(str, also)),
                           fix=raw.get("fix", "")))
    return tuple(out)


def outcome(test: dict) -> str:
    """'passed', 'failed' (a verdict) or 'error' (the code never ran) for one results test."""
    if test.get("status") == "passed":
        return "passed"
    return "error" if test.get("outcome") == "error" else "failed"


def of(asg) -> tuple[Mistake, ...]:
    """The catalogue of assignment ``asg`` (its grader package's mistakes.yml); () without one."""
    from autograder.core import lesson

    path = lesson.mistakes_file(asg)
    return load(path) if path else ()


def made(results: dict, catalogue: tuple[Mistake, ...]) -> list[str]:
    """Ids of the mistakes ``results`` shows, in catalogue order, plus NOT_RUN when any check's
    code never ran."""
    by_check = {t.get("check"): outcome(t) for t in results.get("tests", []) if t.get("check")}
    out = []
    for m in catalogue:
        if (any(by_check.get(c) == "failed" for c in m.checks)
                and all(by_check.get(c) == "passed" for c in m.requires)
                and all(by_check.get(c) == "failed" for c in m.also_failed)):
            out.append(m.id)
    if any(o == "error" for o in by_check.values()):
        out.append(NOT_RUN)
    return out
