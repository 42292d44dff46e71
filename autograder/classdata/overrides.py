"""OUT/overrides.csv: the scores a person gives, kept with the class and applied on every run.

The TA edits the file; grade-all never rewrites it (it writes the header once, when OUT has none).
Columns: ``student`` (the OUT folder name, an SID, email or name), ``item`` (a check id, a task id,
a manual item of course.yml's ``manual:``, or ``total``), ``points`` (the item's new score) or
``delta`` (points added to the grader's score, negative to take off, 0 to record a decision that
changes nothing, such as a rejected regrade request: one of the two per row; a delta that would
take the item below 0 or above its points counts as 0 or its points, with a warning each run
naming the file, row and student: grade-all's class files),
``reason`` (required: the student sees it) and ``grader`` (who decided). A manual item (an
Explain-It-Back answer, say) has no score until a row gives it one.

Every run validates the whole file first: each bad row is one line naming the file and the row,
and nothing is graded (exit 2). The overrides are applied to each student's results (after
grading, before the late penalty, which is charged on the overridden raw score): a check's own
test carries its new score and the grader's (``graded_score``); a task or the total gets an
adjustment entry; a manual item gets an entry of its own. results.json lists them under
``overrides``; the feedback page, gradebook.csv (``overrides`` column) and every export show them,
and regrades.csv logs each change. Applying is idempotent: ``strip`` gives back the grader's own
results, so a rerun or a changed file never stacks overrides.
"""
from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass
from pathlib import Path

from autograder.classdata import regrades, zero
from autograder.core import csvsafe
from autograder.core.atomic import atomic_write
from autograder.core.errors import UsageError

NAME = "overrides.csv"
FIELDS = ("student", "item", "points", "delta", "reason", "grader")
#: results.json key listing the overrides applied.
KEY = "overrides"
#: Marks on tests that overrides added (removed by ``strip``).
MANUAL, ADJUSTMENT, GRADED = "manual", "adjustment", "graded_score"
TOTAL = "total"
#: How a row names a whole group submission (``group:<folder name>``): a member's name is refused.
GROUP = "group:"


@dataclass(frozen=True)
class Override:
    """One row: ``points`` (the item's new score) or ``delta`` (points added), in points."""

    student: str
    item: str
    points: float | None
    delta: float | None
    reason: str
    grader: str
    row: int

    def target(self, graded: float) -> float:
        """The item's score given the grader's ``graded`` points."""
        return self.points if self.points is not None else graded + (self.delta or 0.0)


def ensure_template(out: Path) -> Path:
    """OUT/overrides.csv, written with its header only when OUT has none."""
    path = Path(out) / NAME
    if not path.exists():
        buf = io.StringIO()
        csvsafe.Writer(buf).writerow(FIELDS)
        atomic_write(path, buf.getvalue())
    return path


def items_of(asg, check_ids) -> dict[str, tuple[str, float]]:
    """Item name -> (kind, most points it can score): checks, tasks, manual items and the total."""
    found: dict[str, tuple[str, float]] = {}
    for task in asg.tasks:
        for check_id in check_ids.get(task.id, ()):
            found[check_id] = ("check", task.points_of(check_id) or task.points)
    for task in asg.tasks:
        found[task.id] = ("task", task.points)
    for item in asg.manual:
        found[item.id] = ("manual", item.points)
    found[TOTAL] = (TOTAL, asg.max_score)
    return found


def _number(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def load(path: Path, asg, students: dict[str, str], check_ids,
         unknown: list[str] | None = None, groups: dict | None = None) -> dict[str, list[Override]]:
    """The overrides in ``path`` by student folder name ({} when there is no file). ``students``:
    every name a student may be given by (folder name, SID, email, name) -> folder name;
    ``check_ids``: task id -> its check ids. UsageError with one line per bad row; a row naming
    no student of ``students`` goes to ``unknown`` (its line) instead, when that list is given
    (a student absent from the download is not an error in the file). ``groups``: folder name
    -> its members, of each group submission: a row naming a member is refused (the group has one
    grade; changing it is asked for by ``group:<folder>``)."""
    path = Path(path)
    if not path.exists():
        return {}
    reader = _reader(path)
    known = items_of(asg, check_ids)
    found: dict[str, list[Override]] = {}
    seen: dict[tuple[str, str], int] = {}
    errors = []
    for row_no, raw in enumerate(reader, start=2):
        row = {(k or "").strip(): csvsafe.restore((v or "").strip()) for k, v in raw.items() if k}
        if not any(row.values()):
            continue
        where = f"{path} row {row_no}"
        try:
            override = _override(row, row_no, where, asg, students, known, groups or {})
        except _NoStudent as exc:
            (unknown if unknown is not None else errors).append(str(exc))
            continue
        except ValueError as exc:
            errors.append(str(exc))
            continue
        key = (override.student, override.item)
        if key in seen:
            errors.append(f"{where}: {override.item} of {override.student} is already overridden on row {seen[key]}")
            continue
        seen[key] = row_no
        found.setdefault(override.student, []).append(override)
    if errors:
        raise UsageError("\n".join(errors))
    return found


class _NoStudent(ValueError):
    """A row naming no student the class knows."""


def _reader(path: Path) -> csv.DictReader:
    """The rows of ``path`` (UsageError when it cannot be read or its header lacks a column)."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path}: cannot read the overrides ({getattr(exc, 'strerror', None) or exc})") from None
    reader = csv.DictReader(io.StringIO(text))
    header = [(f or "").strip() for f in reader.fieldnames or []]
    missing = [f for f in ("student", "item", "reason") if f not in header]
    if missing or not {"points", "delta"} & set(header):
        raise UsageError(f"{path}: the header must name student, item, points and/or delta, reason "
                         f"(and grader); got {', '.join(header) or 'nothing'}")
    return reader


def _override(row: dict, row_no: int, where: str, asg, students: dict[str, str], known: dict,
              groups: dict) -> Override:
    """One row as an Override; ValueError with the line naming ``where`` and what is wrong."""
    name, item = row.get("student", ""), row.get("item", "")
    points_text, delta_text = row.get("points", ""), row.get("delta", "")
    student = students.get(name)
    if student is None:
        raise _NoStudent(f"{where}: no student {name!r} in the submissions (give the folder name, SID, "
                         f"email or name)")
    if student in groups and not name.startswith(GROUP):
        raise ValueError(f"{where}: {name!r} handed in with a group ({', '.join(groups[student])}): one "
                         f"submission, one grade, so this override would change every member's; to "
                         f"change the group's grade write student {GROUP}{student}")
    if item not in known:
        raise ValueError(f"{where}: {item!r} is not a check, task or manual item of {asg.name}, nor 'total'")
    kind, most = known[item]
    if bool(points_text) == bool(delta_text):
        raise ValueError(f"{where}: give points (the {kind}'s new score) or delta (points added), "
                         f"{'not both' if points_text else 'one of them'}")
    points = delta = None
    if points_text:
        points = _number(points_text)
        if points is None or not 0 <= points <= most:
            raise ValueError(f"{where}: points must be a number from 0 to {most:g} ({kind} {item}), "
                             f"got {points_text!r}")
    else:
        delta = _number(delta_text)
        if delta is None:   # 0 changes no score and records a decision (a rejected regrade request)
            raise ValueError(f"{where}: delta must be a number of points, got {delta_text!r}")
    reason = row.get("reason", "")
    if not reason:
        raise ValueError(f"{where}: no reason (the student sees it on their feedback page)")
    return Override(student, item, points, delta, reason, row.get("grader", ""), row_no)


def strip(results: dict) -> dict:
    """``results`` as the grader gave them: every override taken back (unchanged when none)."""
    tests = results.get("tests", [])
    if KEY not in results and not any(t.get(MANUAL) or t.get(ADJUSTMENT) or GRADED in t for t in tests):
        return results
    out = dict(results)
    kept = []
    for t in tests:
        if t.get(MANUAL) or t.get(ADJUSTMENT):
            continue
        if GRADED in t:
            graded = t[GRADED]
            t = {k: v for k, v in t.items() if k not in (GRADED, KEY)}
            t["score"] = graded
        kept.append(t)
    out["tests"] = kept
    out.pop(KEY, None)
    if out.get("score") is not None:
        out["score"] = round(sum(float(t.get("score") or 0.0) for t in kept), 6)
    return out


def apply(results: dict, rows: list[Override], asg) -> dict:
    """``results`` with ``rows`` applied (checks, then tasks, manual items, the total) on the
    grader's own results. A grader failure takes none (it has no score to override)."""
    base = strip(results)
    if not rows or zero.is_grader_failure(base):
        return base
    tests = [dict(t) for t in base.get("tests", [])]
    kinds = {m.id: "manual" for m in asg.manual} | {t.id: "task" for t in asg.tasks} | {TOTAL: TOTAL}
    order = {"check": 0, "task": 1, "manual": 2, TOTAL: 3}
    applied = []
    visibility = base.get("visibility", "visible")
    for row in sorted(rows, key=lambda r: (order[kinds.get(r.item, "check")], r.row)):
        kind = kinds.get(row.item, "check")
        note = {"item": row.item, "kind": kind, "set": row.points, "delta": row.delta, "reason": row.reason,
                "grader": row.grader, "row": row.row}
        if kind == "check":
            mine = [t for t in tests if t.get("check") == row.item]
            if not mine:
                applied.append({**note, "graded": None, "points": None,
                                "note": "not applied: this result did not grade the check"})
                continue
            graded = sum(float(t.get("score") or 0.0) for t in mine)
            new, note = _within(row.target(graded), sum(float(t.get("max_score") or 0.0) for t in mine), note)
            first = mine[0]
            first[GRADED] = first.get("score")
            first["score"] = round(float(first.get("score") or 0.0) + new - graded, 4)
            first[KEY] = {"reason": row.reason, "grader": row.grader}
        elif kind == "manual":
            item = next(m for m in asg.manual if m.id == row.item)
            graded = None
            new, note = _within(row.target(0.0), float(item.points), note)
            tests.append({"name": f"{item.id} {item.title} [scored by a person]", "score": round(new, 4),
                          "max_score": item.points, "status": "passed", "output": _said(row),
                          "visibility": visibility, "task": item.id, "check": item.id, MANUAL: True})
        else:
            in_scope = [t for t in tests if kind == TOTAL or t.get("task") == row.item]
            graded = sum(float(t.get("score") or 0.0) for t in in_scope)
            most = asg.max_score if kind == TOTAL else next(t.points for t in asg.tasks if t.id == row.item)
            new, note = _within(row.target(graded), float(most), note)
            tests.append({"name": f"{row.item} override [{'total' if kind == TOTAL else 'task'}]",
                          "score": round(new - graded, 4), "max_score": 0.0, "status": "passed",
                          "output": _said(row), "visibility": visibility,
                          "task": row.item if kind == "task" else TOTAL, "check": f"override:{row.item}",
                          ADJUSTMENT: True})
        applied.append({**note, "graded": None if graded is None else round(graded, 4), "points": round(new, 4)})
    out = dict(base)
    out["tests"] = tests
    out["score"] = round(sum(float(t.get("score") or 0.0) for t in tests), 6)
    out[KEY] = applied
    return out


def decisions(results: dict | None) -> list[Override]:
    """The rows whose overrides ``results`` carry (to keep them where OUT/overrides.csv was not
    read: a Slurm task saving a grading)."""
    return [Override("", o["item"], o.get("set"), o.get("delta"), o["reason"], o.get("grader", ""), o["row"])
            for o in (results or {}).get(KEY) or [] if o.get("set") is not None or o.get("delta") is not None]


def _within(new: float, most: float, note: dict) -> tuple[float, dict]:
    """``new`` kept within 0..``most`` (a delta may push past either end, points past a weighted
    check's share); ``note`` then records the score the row asked for (``asked``) and ``most``."""
    kept = min(max(new, 0.0), most)
    if abs(kept - new) <= 1e-9:
        return new, note
    return kept, {**note, "asked": round(new, 4), "most": most}


def clamped(results: dict) -> list[dict]:
    """The overrides of ``results`` that asked for a score outside the item's points (a delta, or
    points past a weighted check's share)."""
    return [o for o in results.get(KEY) or [] if o.get("asked") is not None]


def asking(applied: dict) -> str:
    """What an applied override's row gave: 'delta +3' or 'points 8'."""
    return f"delta {applied['delta']:+g}" if applied.get("delta") is not None else f"points {applied['set']:g}"


def _said(row: Override) -> str:
    who = f" ({row.grader})" if row.grader else ""
    return f"Scored by the course staff{who}: {row.reason}"


def describe(results: dict) -> str:
    """The overrides of ``results`` in one cell: 'task1 31 (regrade accepted); total +2 (...)'."""
    parts = []
    for o in results.get(KEY) or []:
        if o.get("points") is None:
            parts.append(f"{o['item']} {o.get('note', '')}")
        else:
            was = [] if o.get("graded") is None else [f"was {o['graded']:g}"]
            if o.get("asked") is not None:
                was.append(f"{asking(o)} kept within 0 to {o['most']:g}")
            was = f" ({'; '.join(was)})" if was else ""
            parts.append(f"{o['item']} {o['points']:g}{was}: {o['reason']}")
    return "; ".join(parts)


def log_rows(run: str, student: str, old: dict | None, new: dict) -> list[dict]:
    """regrades.csv rows for the overrides that changed between ``old`` and ``new`` results."""
    if old is None:
        return []
    before = {o["item"]: o for o in old.get(KEY) or []}
    after = {o["item"]: o for o in new.get(KEY) or []}
    rows = []
    for item in sorted(set(before) | set(after)):
        b, a = before.get(item), after.get(item)
        if _decision(b) == _decision(a):   # the same row on a regraded result: not a new decision
            continue
        if a is None:
            reason = f"{NAME}: override removed (was row {b['row']}: {b['reason']})"
        else:
            reason = f"{NAME} row {a['row']}: {a['reason']}" + (f" ({a['grader']})" if a.get("grader") else "")
        old_score = "" if b is None or b.get("points") is None else csvsafe.number(b["points"], 4)
        new_score = ("" if a is None or a.get("points") is None else csvsafe.number(a["points"], 4))
        rows.append({"run": run, "student": student, "check": f"override {item}", "old_score": old_score,
                     "new_score": new_score, "reason": reason})
    if rows:
        was, now = _raw(old), _raw(new)
        if abs(was - now) > regrades.EPSILON:
            rows.append({"run": run, "student": student, "check": regrades.TOTAL,
                         "old_score": csvsafe.number(was, 4), "new_score": csvsafe.number(now, 4),
                         "reason": f"{NAME} changed"})
    return rows


def _decision(applied: dict | None) -> dict | None:
    return None if applied is None else {k: v for k, v in applied.items() if k != "graded"}


def _raw(results: dict) -> float:
    return sum(float(t.get("score") or 0.0) for t in results.get("tests", []))
