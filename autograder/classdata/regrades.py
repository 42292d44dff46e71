"""OUT/regrades.csv: every change a grade-all run made to a stored result, and why.

One row per changed check score and one per changed total (``check`` = ``(total)``): ``run``
(when the run started, ISO 8601 UTC), ``student``, ``check``, ``old_score``, ``new_score``
(points) and ``reason``: ``changed submission`` (its content hash differs), ``changed check
<id> (<module>)`` (the grader's code of that check differs), ``changed <files or settings>``
(the grading key differs: the files that decide a verdict, course.yml's settings, the device, a
time limit, named as OUT/.grading-keys.json describes each key), else ``regraded (--force or
--student), nothing changed``. A first
grading is not a regrade and writes nothing. The file is appended to, never rewritten, so it is
the semester's record; the class summary lists the students whose totals changed. It is
spreadsheet-safe (autograder/core/csvsafe.py); ``read`` gives back the values as they were.
"""
from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from autograder.core import csvsafe
from autograder.core.atomic import atomic_write

NAME = "regrades.csv"
FIELDS = ("run", "student", "check", "old_score", "new_score", "reason")
TOTAL = "(total)"
#: Score differences below this many points are rounding, not a change.
EPSILON = 1e-6


def check_scores(results: dict) -> dict[str, float]:
    """Points per check id (a check tested on several functions sums its tests)."""
    scores: dict[str, float] = {}
    for test in results.get("tests", []):
        check = test.get("check") or test.get("name")
        scores[check] = scores.get(check, 0.0) + float(test.get("score") or 0.0)
    return scores


def fingerprints_of(results: dict) -> dict:
    info = results.get("grade_all") if isinstance(results.get("grade_all"), dict) else {}
    return info.get("fingerprints") or {}


def reason_for(check: str, old_record, digest: str, key: str, before_fps: dict, now_fps: dict,
               out: Path | None = None) -> str:
    """Why ``check``'s score changed between the stored grading (``old_record``) and this one;
    ``out``: where the grading keys' descriptions are kept (``key_change``)."""
    if old_record.hash != digest:
        return "changed submission"
    before = before_fps.get(check)
    now = now_fps.get(check)
    if before and now and before != now:
        return f"changed check {check} ({now.split(':', 1)[0]})"
    if old_record.key != key:
        return key_change(out, old_record.key, key)
    return "regraded (--force or --student), nothing changed"


#: Where OUT keeps what each grading key was made of (``remember_key``): a file, so OUT's folders
#: stay the students'.
KEYS = ".grading-keys.json"
#: Files named in one reason at most.
SHOWN = 4


def remember_key(out: Path, key: str, files: dict[str, str], settings: dict) -> None:
    """Keep in OUT/.grading-keys.json what grading key ``key`` was made of: ``files`` (each
    deciding file's hash) and ``settings`` (course.yml's keys, device, time limit, --checks)."""
    path = Path(out) / KEYS
    known = _keys(out)
    if key not in known:
        known[key] = {"files": files, "settings": settings}
        atomic_write(path, json.dumps(known, sort_keys=True) + "\n")


def key_change(out: Path | None, old: str, new: str) -> str:
    """What differs between grading keys ``old`` and ``new`` in words: the files that decide a
    verdict (``changed shared/simgpu/judging.py``) and the settings (``changed course.yml
    tasks``); the general words when OUT does not describe both."""
    known = _keys(out) if out is not None else {}
    a, b = known.get(old), known.get(new)
    if not isinstance(a, dict) or not isinstance(b, dict):
        return "changed grading key (course.yml, device, time limit or a file that decides verdicts)"
    parts = []
    for what in ("files", "settings"):
        x, y = a.get(what) or {}, b.get(what) or {}
        names = sorted(n for n in set(x) | set(y) if x.get(n) != y.get(n))
        if names:
            parts.append("changed " + ", ".join(names[:SHOWN])
                         + (f" and {len(names) - SHOWN} more" if len(names) > SHOWN else ""))
    return "; ".join(parts) or "changed grading key"


def _keys(out: Path) -> dict:
    try:
        data = json.loads((Path(out) / KEYS).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def changes(run: str, student: str, old: dict, new: dict, old_record, digest: str, key: str,
            compare_total: bool = True, out: Path | None = None) -> list[dict]:
    """The log rows for one student whose stored result ``old`` becomes ``new``. Only checks
    ``new`` graded are compared (a partial run does not remove the others). ``out``: OUT, whose
    grading keys' descriptions name what changed."""
    if old_record is None:
        return []
    before, after = check_scores(old), check_scores(new)
    fps = (fingerprints_of(old), fingerprints_of(new), out)
    rows = []
    for check, score in after.items():
        was = before.get(check)
        if was is None or abs(was - score) > EPSILON:
            rows.append({"run": run, "student": student, "check": check,
                         "old_score": "" if was is None else _fmt(was), "new_score": _fmt(score),
                         "reason": reason_for(check, old_record, digest, key, *fps)})
    old_total, new_total = sum(before.values()), sum(after.values())   # raw: before any late penalty
    if compare_total and abs(old_total - new_total) > EPSILON:
        reasons = sorted({r["reason"] for r in rows}) or [
            reason_for(TOTAL, old_record, digest, key, *fps)]
        rows.append({"run": run, "student": student, "check": TOTAL, "old_score": _fmt(old_total),
                     "new_score": _fmt(new_total), "reason": "; ".join(reasons)})
    return rows


def _fmt(x: float) -> csvsafe.Number:
    return csvsafe.number(x, 4)


def append(out: Path, rows: list[dict]) -> None:
    """Append ``rows`` to OUT/regrades.csv (the header once, when the file is new)."""
    if not rows:
        return
    path = Path(out) / NAME
    new = not path.exists() or path.stat().st_size == 0
    buf = io.StringIO()
    writer = csvsafe.DictWriter(buf, FIELDS)
    if new:
        writer.writeheader()
    writer.writerows(rows)
    with open(path, "a", encoding="utf-8") as f:
        f.write(buf.getvalue())
        f.flush()


def read(out: Path) -> list[dict]:
    """Every row of OUT/regrades.csv, oldest first ([] when there is none), each cell as it was
    before the file was made spreadsheet-safe."""
    try:
        text = (Path(out) / NAME).read_text(encoding="utf-8")
    except OSError:
        return []
    return [{k: csvsafe.restore(v) if isinstance(v, str) else v for k, v in row.items()}
            for row in csv.DictReader(io.StringIO(text))]


def total_changes(out: Path) -> list[dict]:
    """The ``(total)`` rows, newest first: the students whose totals a regrade changed."""
    return [r for r in reversed(read(out)) if r.get("check") == TOTAL]
