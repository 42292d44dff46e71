"""Students' regrade requests: each shown with the checks and feedback it concerns, and the TA's
decision written to OUT/overrides.csv.

The requests are a CSV with the columns ``student`` (the folder name, SID, email, name or LMS id),
``item`` (or ``check`` or ``task``: a check id, a task id, a manual item, or ``total``/empty for
the whole grade) and ``message`` (the student's words). A row naming an unknown student or item
is one line naming the file and the row; the other requests are still shown and decided.

A decision is one overrides.csv row for (student, item): accepted, the item's new ``points`` (or
``+N``/``-N``, a ``delta``, refused and asked again when it would take the item's points as
graded outside 0..its points); rejected, ``delta`` 0, which changes no score and puts the reason
on the student's feedback page. The reason starts ``regrade request accepted:`` or ``...
rejected:``. A request whose (student, item) already has a row is shown as decided, with that
row, and not asked again, so deciding resumes where it stopped.
"""
from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from pathlib import Path

from autograder.classdata import overrides
from autograder.core import csvsafe
from autograder.core.errors import UsageError
from autograder.people import ledger, roster
from autograder.people.console import Console, Stop

#: Column names accepted for what a request is about.
ITEM_COLUMNS = ("item", "check", "task")
#: Lines of a check's feedback shown under it.
OUTPUT_LINES = 4


@dataclass(frozen=True)
class Request:
    """One row of the requests file: ``row`` (its line number), ``student`` (folder name),
    ``item`` and the student's ``message``."""

    row: int
    student: str
    item: str
    message: str


def read(path: Path, lay, asg, check_ids) -> tuple[list[Request], list[str]]:
    """The requests of ``path`` and a line per bad row; UsageError when the file cannot be read
    or its header lacks a column."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        why = getattr(exc, "strerror", None) or exc
        raise UsageError(f"{path}: cannot read the regrade requests ({why})") from None
    reader = csv.DictReader(io.StringIO(text))
    header = [(f or "").strip().lower() for f in reader.fieldnames or []]
    item_col = next((c for c in ITEM_COLUMNS if c in header), None)
    if "student" not in header or item_col is None or "message" not in header:
        raise UsageError(f"{path}: the header must name student, item (or check, task) and message; "
                         f"got {', '.join(header) or 'nothing'}")
    names, known = roster.names(lay), overrides.items_of(asg, check_ids)
    found, bad = [], []
    for row_no, raw in enumerate(reader, start=2):
        row = {(k or "").strip().lower(): csvsafe.restore((v or "").strip()) for k, v in raw.items() if k}
        if not any(row.values()):
            continue
        who, item = row.get("student", ""), row.get(item_col, "") or overrides.TOTAL
        if who not in names:
            bad.append(f"{path} row {row_no}: no student {who!r} in the graded class (give the folder "
                       f"name, SID, email, name or LMS id of gradebook.csv)")
        elif item not in known:
            bad.append(f"{path} row {row_no}: {item!r} is not a check, task or manual item of "
                       f"{asg.name}, nor 'total'")
        else:
            found.append(Request(row_no, names[who], item, row.get("message", "")))
    return found, bad


def concerned(results: dict | None, item: str) -> list[dict]:
    """The tests of ``results`` a request about ``item`` concerns: the check's own, a task's or
    manual item's, or (the total) every test that lost points."""
    tests = (results or {}).get("tests", [])
    if item == overrides.TOTAL:
        return [t for t in tests if float(t.get("score") or 0) < float(t.get("max_score") or 0)]
    return [t for t in tests if item in (t.get("check"), t.get("task"))]


def show(console: Console, req: Request, results: dict | None) -> None:
    """The request, the student's score and each concerned check with its feedback."""
    console.say(f"\n=== {req.student}: {req.item} (request row {req.row}) ===")
    console.say(f"  asks: {req.message or '(no message)'}")
    if results is None:
        console.say("  (no results.json: the student has not been graded into this folder)")
        return
    console.say(f"  score {float(results.get('score') or 0):g} of {float(results.get('max_score') or 0):g}")
    tests = concerned(results, req.item)
    if not tests:
        console.say("  (no check of this item was graded for this student)")
    for t in tests:
        console.say(f"  - {t.get('name', t.get('check'))}: {float(t.get('score') or 0):g}/"
                    f"{float(t.get('max_score') or 0):g} {t.get('status', '')}")
        lines = str(t.get("output") or "").strip().splitlines()
        for line in lines[:OUTPUT_LINES]:
            console.say(f"      {line}")
        if len(lines) > OUTPUT_LINES:
            console.say(f"      ... ({len(lines) - OUTPUT_LINES} more line(s) on the feedback page)")


def scored(results: dict | None, item: str) -> float | None:
    """The points ``results`` give ``item`` now, overrides included (None: not graded)."""
    if results is None:
        return None
    tests = results.get("tests", [])
    if item != overrides.TOTAL:
        tests = [t for t in tests if item in (t.get("check"), t.get("task"))]
    return sum(float(t.get("score") or 0) for t in tests)


def _delta_outside(item: str, now: float | None, value: float, text: str, most: float) -> str | None:
    """Why adding ``value`` to ``item``'s ``now`` points leaves 0..``most``, else None."""
    if now is None or -1e-9 <= now + value <= most + 1e-9:
        return None
    return (f"  {item} has {now:g} of {most:g} points: {text} would make it {now + value:g}; give "
            f"+N / -N that keeps it from 0 to {most:g}, or the new points")


def decide(console: Console, req: Request, most: float, now: float | None = None) -> dict | None:
    """The overrides.csv row the TA decides for ``req`` (None: skipped). ``now``: the item's
    points as graded (overrides included), so a delta never takes it outside 0..``most``."""
    while True:
        choice = console.ask("accept (a), reject (r), skip (s), q quits: ").lower()
        if choice in ("a", "r", "s"):
            break
        console.say("  answer a, r, s or q")
    if choice == "s":
        return None
    row = {"student": req.student, "item": req.item}
    if choice == "r":
        row["delta"] = ledger.points_cell(0)
        row["reason"] = "regrade request rejected: " + console.reason()
        return row
    while True:
        text = console.ask(f"new points of {req.item} (0-{most:g}), or +N / -N added: ")
        try:
            value = float(text)
        except ValueError:
            console.say("  give a number")
            continue
        if text.startswith(("+", "-")) and value != 0:
            outside = _delta_outside(req.item, now, value, text, most)
            if outside is None:
                row["delta"] = ledger.points_cell(value)
                break
            console.say(outside)
            continue
        if 0 <= value <= most:
            row["points"] = ledger.points_cell(value)
            break
        console.say(f"  give a number from 0 to {most:g}, or +N / -N")
    row["reason"] = "regrade request accepted: " + console.reason()
    return row


def run(out: Path, requests: list[Request], lay, asg, check_ids, grader: str, console: Console,
        deciding: bool) -> int:
    """Show every request (and, ``deciding``, ask for each undecided one); rows written."""
    done = ledger.existing(out, lay, asg)
    known = overrides.items_of(asg, check_ids)
    written = 0
    for req in requests:
        results = roster.results(out, req.student)
        show(console, req, results)
        prior = done.get((req.student, req.item))
        if prior is not None:
            console.say(f"  decided: overrides.csv row {prior.row}: {prior.reason}")
            continue
        if not deciding:
            continue
        try:
            row = decide(console, req, known[req.item][1], scored(results, req.item))
        except Stop:
            break
        if row is not None:
            ledger.append(out, {**row, "grader": grader}, lay)
            done = ledger.existing(out, lay, asg)   # read back: the row as grade-all will read it
            written += 1
    return written
