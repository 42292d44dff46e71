"""The cases the hypothesis laws draw, shipped with the grader in drawn_cases.json.

``strategies.run_law`` replays a law's cases without hypothesis once it knows them. A process
learns them from its first run of each law, so until now every fresh process (one ``grade``, a
Gradescope container, a notebook's task cells, each grade-all worker's first submission) paid
hypothesis's own work for every law: about a CPU second of a cold grading, while the fork server
imports torch on the same cores. This file gives a fresh process the cases at once.

The file is written from a grading of the reference by ``python -m autograder.lessons.why17.drawn``
(``--check`` exits 1 when it is stale; tests/lessons/why17/test_drawn_cases.py runs that check). A law's cases
depend on its strategy, its example count and, through hypothesis's derandomized seed, on the code
that runs it; the file therefore holds, and a process uses only when all of them match:

- hypothesis's version, Python's major.minor and a digest of strategies.py (the one ``law`` that
  every law runs in, whose source seeds hypothesis): any change ignores the whole file;
- a digest of each law's module: an edited module's laws go back through hypothesis;
- per law, its module, qualified name, strategy (by repr: the table rows it samples included) and
  example count, the key ``run_law`` looks it up by.

A law the file does not hold, for whatever reason, goes through hypothesis as before: a stale or
missing file costs time, never a verdict. Data only: tuples, lists, numbers, strings and the
strategies' own dataclasses, decoded by name from a fixed list; nothing in it is executed.
"""
from __future__ import annotations

import argparse
import dataclasses
import hashlib
import importlib.util
import json
import sys
from contextlib import contextmanager
from pathlib import Path

SCHEMA = "why17-drawn-cases/1"
FILE = Path(__file__).with_name("drawn_cases.json")
STRATEGIES_FILE = Path(__file__).with_name("strategies.py")
#: The command that rewrites FILE (named in the stale file's messages).
COMMAND = "python -m autograder.lessons.why17.drawn"

_loaded: dict | None = None
_enabled = True
_digests: dict[str, str | None] = {}


def _digest(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()[:16]
    except OSError:
        return None


def fingerprint() -> dict:
    """What every law's cases depend on besides its own key."""
    import hypothesis
    return {"hypothesis": hypothesis.__version__, "python": "%d.%d" % sys.version_info[:2],
            "strategies": _digest(STRATEGIES_FILE)}


def module_digest(module: str) -> str | None:
    """A digest of ``module``'s source file, imported yet or not (cached per process); None when
    it has none."""
    if module not in _digests:
        try:
            path = getattr(importlib.util.find_spec(module), "origin", None)
        except (ImportError, ValueError):
            path = None
        _digests[module] = _digest(Path(path)) if path else None
    return _digests[module]


def _types() -> dict[str, type]:
    from autograder.lessons.why17 import strategies as S
    return {cls.__name__: cls for cls in (S.GpuSpec, S.ModelShape, S.DecodeConfig)}


def encode(value, types: dict[str, type]):
    """``value`` as JSON data; TypeError for anything but the types the laws draw."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, tuple):
        return {"tuple": [encode(v, types) for v in value]}
    if isinstance(value, list):
        return [encode(v, types) for v in value]
    name = type(value).__name__
    if dataclasses.is_dataclass(value) and types.get(name) is type(value):
        return {name: {f.name: encode(getattr(value, f.name), types) for f in dataclasses.fields(value)}}
    raise TypeError(f"a drawn case holds a {name}, which drawn_cases.json cannot store")


def decode(data, types: dict[str, type]):
    """The value ``encode`` gave ``data``; TypeError or KeyError for anything else."""
    if data is None or isinstance(data, (bool, int, float, str)):
        return data
    if isinstance(data, list):
        return [decode(v, types) for v in data]
    if isinstance(data, dict) and len(data) == 1:
        (name, inner), = data.items()
        if name == "tuple" and isinstance(inner, list):
            return tuple(decode(v, types) for v in inner)
        if isinstance(inner, dict):
            return types[name](**{k: decode(v, types) for k, v in inner.items()})
    raise TypeError(f"not a drawn case: {str(data)[:80]}")


def shipped() -> dict[tuple, tuple]:
    """law key -> its cases, from FILE: the laws whose fingerprint and module still match; {}
    when the file is missing, unreadable, of another schema or fingerprint, or turned off."""
    global _loaded
    if not _enabled:
        return {}
    if _loaded is None:
        _loaded = _read(FILE)
    return _loaded


def _read(path: Path) -> dict[tuple, tuple]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("schema") != SCHEMA or data.get("fingerprint") != fingerprint():
            return {}
        modules, types, laws = data["modules"], _types(), {}
        for law in data["laws"]:
            if modules.get(law["module"]) != module_digest(law["module"]):
                continue
            key = (law["module"], law["law"], law["strategy"], int(law["max_examples"]))
            laws[key] = tuple(decode(case, types) for case in law["cases"])
        return laws
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return {}


@contextmanager
def hypothesis_only():
    """Inside the block run_law ignores FILE and what this process drew before: every law goes
    through hypothesis and records its cases afresh. Yields (key -> cases of the laws that held,
    the keys of every law run)."""
    global _enabled
    from autograder.lessons.why17 import strategies as S

    before, S._DRAWN = S._DRAWN, {}
    key_of, tried = S._key, set()

    def noted(*args):
        key = key_of(*args)
        tried.add(key)
        return key
    S._key, _enabled = noted, False
    try:
        yield S._DRAWN, tried
    finally:
        S._key, _enabled, S._DRAWN = key_of, True, before


def record() -> dict:
    """FILE's contents from a grading of the reference in this process, every law through
    hypothesis. ValueError when the reference fails a law (its cases would not be kept)."""
    from autograder.core import course
    from autograder.grading.grade import grade_submission

    package = __package__       # also under python -m, where __name__ is "__main__"
    asg = next(a for a in course.load().assignments.values() if a.grader == package)
    with hypothesis_only() as (drawn, tried):
        grade_submission(asg.solutions_dir)
    if tried - set(drawn):
        names = sorted({law for _module, law, _strategy, _n in tried - set(drawn)})
        raise ValueError(f"the reference fails the law(s) {', '.join(names)}: their cases cannot be recorded")
    types = _types()
    laws = [{"module": module, "law": law, "strategy": strategy, "max_examples": n,
             "cases": [encode(case, types) for case in cases]}
            for (module, law, strategy, n), cases in sorted(drawn.items())]
    return {"schema": SCHEMA, "fingerprint": fingerprint(),
            "modules": {m: module_digest(m) for m in sorted({law["module"] for law in laws})},
            "laws": laws}


def dumps(data: dict) -> str:
    """FILE's text: one line per law, so a diff shows which laws changed."""
    head = {k: v for k, v in data.items() if k != "laws"}
    laws = ",\n".join(json.dumps(law, separators=(",", ":")) for law in data["laws"])
    return json.dumps(head)[:-1] + ', "laws": [\n' + laws + "\n]}\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog=COMMAND, description=(
        "Rewrite drawn_cases.json, the cases the hypothesis laws draw, from a grading of the "
        "reference; --check: exit 1 when the file differs from what the grader draws now."))
    parser.add_argument("--check", action="store_true", help="exit 1 when drawn_cases.json is stale")
    args = parser.parse_args(argv)
    try:
        text = dumps(record())
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.check:
        current = FILE.read_text(encoding="utf-8") if FILE.is_file() else ""
        if current != text:
            print(f"stale: {FILE.name} differs from the cases the laws draw now; run {COMMAND}",
                  file=sys.stderr)
            return 1
        return 0
    from autograder.core.atomic import atomic_write
    atomic_write(FILE, text)
    FILE.chmod(0o644)          # readable by whoever grades (atomic_write's temporary file is 0600)
    print(f"wrote {FILE.name}: {len(json.loads(text)['laws'])} laws")
    return 0


if __name__ == "__main__":
    # The module run_law imports, not this __main__ copy of it: its switch is the one that counts.
    from autograder.lessons.why17 import drawn
    sys.exit(drawn.main())
