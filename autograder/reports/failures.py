"""What went wrong in one student's results, most costly first: the feedback page's top box.

Failed checks that say the same thing (every Measure-table check when measurements.json is missing,
every check of a function that still raises NotImplementedError) make one row, with their points
added up. Each row names its checks, the points they cost, the one-line fix and the lesson section:

- the fix is the classic mistake's ``fix`` (mistakes.yml) when one of the row's checks failed by a
  verdict and reveals a mistake whose ``requires`` checks passed (so a missing file is not blamed
  on the numbers in it); for code that never ran (an "error" outcome, or a stub's
  NotImplementedError, which some checks report as a failed verdict), "make it run first" with what
  it raised; else empty, and the row shows what the check saw (its message);
- the row says the first line of the check's message (later lines are notes, such as a stand-in
  file's); the section is that line's ``Reread: ...``, else the mistake's ``lesson``, else the task's.

Points are course points (results' ``max_score - score``). Passed checks never appear here.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from autograder.reports import mistakes

_REREAD = re.compile(r"\s*Reread:\s*(.+?)\.?\s*$")


@dataclass(frozen=True)
class Failure:
    """One row of the box: ``points`` lost (course points), the ``checks`` behind it, ``what`` went
    wrong (a mistake's title or the first check's name), ``fix`` ('' when none is known), what the
    check ``saw`` (its message without the section) and the ``lesson`` section to reread."""

    task: str
    points: float
    checks: tuple[str, ...]
    what: str
    fix: str
    saw: str
    lesson: str
    ran: bool          # False when the code never ran (raised, hung, crashed, missing)


def split_reread(message: str) -> tuple[str, str]:
    """(message without its trailing 'Reread: X.', X) -- X is '' when the message names no section."""
    found = _REREAD.search(message)
    if not found:
        return message.strip(), ""
    return message[:found.start()].strip(), found.group(1).strip()


def _name(test: dict) -> str:
    """A check's name without its leading task id and trailing [check id]."""
    name = str(test.get("name", "")).strip()
    task = str(test.get("task", ""))
    if task and name.startswith(task + " "):
        name = name[len(task) + 1:]
    return re.sub(r"\s*\[[^\]]*\]$", "", name) or str(test.get("check", ""))


#: What an untouched stub raises (the release's stubs: NotImplementedError("task1.1: copy_bandwidth")).
STUB = "NotImplementedError"


def _saw_the_code_run(test: dict) -> bool:
    """A failed verdict on code that ran: not an error outcome, and not a stub's NotImplementedError."""
    return mistakes.outcome(test) == "failed" and STUB not in str(test.get("output", ""))


def _mistake_for(checks: list[str], passed: set[str], catalogue) -> mistakes.Mistake | None:
    for m in catalogue:
        if set(checks) & set(m.checks) and all(c in passed for c in m.requires):
            return m
    return None


def ranked(results: dict, assignment, catalogue=None) -> list[Failure]:
    """The rows of ``results`` for ``assignment``, most points lost first (then course order)."""
    catalogue = mistakes.of(assignment) if catalogue is None else catalogue
    tests = [t for t in results.get("tests", []) if isinstance(t, dict)]
    passed = {str(t.get("check")) for t in tests if mistakes.outcome(t) == "passed"}
    lessons = {task.id: task.lesson for task in assignment.tasks}
    order = {task.id: i for i, task in enumerate(assignment.tasks)}
    groups: dict[tuple[str, str], list[dict]] = {}
    for t in tests:
        if mistakes.outcome(t) != "passed":
            groups.setdefault((str(t.get("task", "")), str(t.get("output", "")).strip()), []).append(t)
    rows = []
    for index, ((task, message), members) in enumerate(groups.items()):
        checks = [str(t.get("check", "")) for t in members]
        lost = sum(max(0.0, float(t.get("max_score") or 0) - float(t.get("score") or 0)) for t in members)
        said, section = split_reread(message.splitlines()[0] if message else "")
        verdicts = [str(t.get("check", "")) for t in members if _saw_the_code_run(t)]
        mistake = _mistake_for(verdicts, passed, catalogue)
        ran = bool(verdicts)
        if mistake and mistake.fix:
            fix = mistake.fix
        else:
            fix = "" if ran else f"Make it run first: {said}"
        rows.append((index, Failure(
            task=task, points=lost, checks=tuple(checks),
            what=mistake.title if mistake else _name(members[0]), fix=fix, saw=said,
            lesson=section or (mistake.lesson if mistake else lessons.get(task, "")), ran=ran)))
    rows.sort(key=lambda pair: (-pair[1].points, order.get(pair[1].task, len(order)), pair[0]))
    return [row for _index, row in rows]
