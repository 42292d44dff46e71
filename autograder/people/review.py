"""Review of the hand-graded answers, student by student, written to OUT/overrides.csv.

How the answers weigh: the notebook's hand-graded cells carry 0 points in nbgrader and course.yml's
task points are all autograded, so only course.yml's ``manual:`` items give these answers points
(they add to the assignment's total). The rule, one unit (one overrides.csv row) at a time:

- a manual item whose ``id`` is a question's grade id (``explain-it-back-2``) scores that
  question alone, out of its own points;
- the questions left are scored together by one manual item (``--item ID``, or the only manual
  item that names no question), each question weighing the same, ``points / number of
  questions``; the row holds their sum and a reason per question (``Q1 1/1: ...; Q2 0.5/1: ...``);
- a course without a manual item is refused in one line saying what to add to course.yml.

A unit whose row is already in overrides.csv (the student by any name grade-all knows) is
skipped, so a review stopped (``q``, the end of the input) resumes where it stopped; each unit's
row is written the moment its last question is scored.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from autograder.core.errors import UsageError
from autograder.people import answers as nb_answers
from autograder.people import ledger, roster
from autograder.people.console import Console, Stop


@dataclass(frozen=True)
class Unit:
    """One overrides.csv row per student: the manual ``item`` (``points``, its most) and the
    ``questions`` it scores."""

    item: str
    points: float
    questions: tuple[nb_answers.Question, ...]

    def weight(self) -> float:
        """The most points one of its questions gives."""
        return self.points / len(self.questions)


def units(asg, questions, item: str | None = None) -> list[Unit]:
    """How ``questions`` are scored by ``asg``'s manual items (the rule above); UsageError when
    course.yml gives them no points or ``item`` is not a manual item."""
    manual = {m.id: m for m in asg.manual}
    if not manual:
        raise UsageError(
            f"course.yml gives the hand-graded answers of {asg.name} no points (its tasks are all "
            f"autograded): add a manual item, e.g. 'manual: [{{id: explain, title: \"Explain It Back "
            f"answers\", points: 5}}]' (docs/semester.md)")
    if item is not None and item not in manual:
        raise UsageError(f"--item {item}: not a manual item of {asg.name} in course.yml "
                         f"({', '.join(manual)})")
    found = [Unit(q.grade_id, manual[q.grade_id].points, (q,)) for q in questions if q.grade_id in manual]
    left = tuple(q for q in questions if q.grade_id not in manual)
    if left:
        free = [m for m in manual if m not in {q.grade_id for q in questions}]
        chosen = item or (free[0] if len(free) == 1 else None)
        if chosen is None:
            raise UsageError(f"course.yml has {len(free)} manual items of {asg.name} that name no "
                             f"question ({', '.join(free) or 'none'}): say which scores the answers "
                             f"with --item")
        found.append(Unit(chosen, manual[chosen].points, left))
    return found


@dataclass
class Tally:
    """What a session did: rows ``written``, units ``skipped`` (already scored) and ``left``."""

    written: int = 0
    skipped: int = 0
    left: int = 0


def review(out: Path, layout, asg, grader: str, console: Console, *, student: str | None = None,
           item: str | None = None) -> Tally:
    """Ask ``console`` for every unscored unit of every student of ``layout`` (or ``student``
    alone: any name grade-all knows), writing a row to OUT/overrides.csv per unit."""
    qs = nb_answers.questions(asg)
    plan = units(asg, qs, item)
    done = ledger.existing(out, layout, asg)
    subs = _chosen(layout, student)
    tally = Tally()
    todo = [(sub, u) for sub in subs for u in plan if (sub.student, u.item) not in done]
    tally.skipped = len(subs) * len(plan) - len(todo)
    tally.left = len(todo)
    console.say(f"{len(todo)} to score ({tally.skipped} already in overrides.csv), "
                f"{len(subs)} student(s), {len(qs)} question(s)")
    shown = None
    for sub, unit in todo:
        try:
            if shown != sub.student:
                given = None if sub.problem else sub.path
                found = nb_answers.answers_of(given, asg, qs)
                shown = sub.student
                console.say(f"\n=== {sub.student} ({subs.index(sub) + 1}/{len(subs)}) ===")
            row = _score(console, unit, found)
        except Stop:
            break
        if row is None:
            continue
        ledger.append(out, {"student": sub.student, "item": unit.item, "points": ledger.points_cell(row[0]),
                            "reason": row[1], "grader": grader}, layout)
        tally.written += 1
        tally.left -= 1
    return tally


def _chosen(layout, student: str | None) -> list:
    subs = list(layout.submissions)
    if student is None:
        return subs
    folder = roster.names(layout).get(student)
    if folder is None:
        raise UsageError(f"--student {student}: no such student in the submissions (give the folder "
                         f"name, SID, email or name)")
    return [sub for sub in subs if sub.student == folder]


def _score(console: Console, unit: Unit, found: dict) -> tuple[float, str] | None:
    """Ask for each question of ``unit``: (points, reason) for the row, or None when skipped."""
    total, reasons = 0.0, []
    for q in unit.questions:
        answer = found[q.grade_id]
        console.say(f"\n[{unit.item}] Q{q.number} ({unit.weight():g} point(s)): {q.text}")
        if answer.missing:
            console.say(f"  (no answer: {answer.missing})")
        else:
            console.say("\n".join(f"  | {line}" for line in answer.text.splitlines()))
        points = console.points(unit.weight())
        if points is None:
            console.say("  skipped: nothing written for this student's " + unit.item)
            return None
        reason = console.reason()
        total += points
        reasons.append(reason if len(unit.questions) == 1 else f"Q{q.number} {points:g}/{unit.weight():g}: {reason}")
    return round(total, 4), "; ".join(reasons)
