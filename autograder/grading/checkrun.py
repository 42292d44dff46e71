"""Running checks: one check's pass or fail (``run_check``), its results entry, and a list of
tasks' checks run in order (``run_tasks``), each module that needs a broken one run with its
stand-in (autograder/grading/fallback.py). grade.py runs the lists, side by side where it may
(grading/lanes.py)."""
from __future__ import annotations

import sys
import traceback

from autograder.core import results
from autograder.core.errors import GraderError, StudentError, StudentRaised
from autograder.core.registry import Check, CheckFailed
from autograder.grading import fallback


class NotRun(str):
    """A failure message from a check that never saw a value: the student's code raised, hung,
    crashed or was missing. grade-all's class summary counts these as
    'code did not run', not as the lesson mistake the check looks for; results carry it as
    "outcome": "error" (a plain failed check is "outcome": "failed")."""


def run_check(ctx, check: Check) -> tuple[bool, str]:
    """(passed, message) of one check. A student's failure is a message; any other exception is
    the grader's own (a check that trips on a value it should have judged), never a grade.

    Raises:
        GraderError: the check raised something other than CheckFailed or a StudentError.
    """
    try:
        for name in check.files:
            if "." in name:
                if not ctx.has(name):
                    return False, NotRun(f"the submission has no {name}")
            else:
                ctx.require(name)
        message = check.fn(ctx)
        return True, message or "passed"
    except CheckFailed as exc:
        return False, str(exc) or "failed"
    except StudentError as exc:
        return False, NotRun(describe(exc))
    except GraderError:
        raise
    except Exception as exc:
        print(f"grader: check {check.id} raised {type(exc).__name__}: {exc}", file=sys.stderr)
        traceback.print_exc(limit=3, file=sys.stderr)
        raise GraderError(f"check {check.id} raised {type(exc).__name__}: {exc}") from exc


def over_budget(budget_s: float) -> str:
    """The line of a check the grading's budget left no time for."""
    return (f"not run: grading this submission took its whole budget of {budget_s:g} s "
            "(slow or hanging calls of your code used it up)")


def describe(exc: StudentError) -> str:
    """A student error in one line: 'predict_decode raised NotImplementedError: task3.1: ...'."""
    if isinstance(exc, StudentRaised):
        who = getattr(exc, "function", None) or "your code"
        return f"{who} raised {exc.exc_type}: {exc.message}"
    return str(exc)


class Ran:
    """The checks run so far: their results entries in the order they ran (``fallback.why_broken``
    reads them), the stand-in lines, each check's files and each module's stand-in lines."""

    def __init__(self):
        self.tests: list[dict] = []
        self.notes: list[str] = []
        self.files_of: dict[str, tuple[str, ...]] = {}
        self.stood_in: dict[str, list[str]] = {}
        self.since = (0, 0)           # (entries, notes) there when this was copied

    def copy(self) -> "Ran":
        """A copy a lane goes on from (what it adds is ``add``ed back)."""
        out = Ran()
        out.tests = [*self.tests]
        out.notes = [*self.notes]
        out.files_of = {**self.files_of}
        out.stood_in = {**self.stood_in}
        out.since = (len(self.tests), len(self.notes))
        return out

    def add(self, lane: "Ran") -> None:
        """The entries and notes ``lane`` (a ``copy`` of this) added."""
        self.tests.extend(lane.tests[lane.since[0]:])
        self.notes.extend(lane.notes[lane.since[1]:])


def run_tasks(plan, ctx, student, tasks: list, done: Ran) -> None:
    """Run the checks of ``tasks`` ([(task, checks), ...]) in order, for grading ``plan``
    (grade.GradingPlan) in ``ctx`` with the student's ``student`` sandbox; add them to ``done``."""
    for task, task_checks in tasks:
        for check in task_checks:
            for module in set(check.files) & set(plan.needs) - set(done.stood_in):
                folder, done.stood_in[module] = fallback.with_stand_ins(
                    ctx, plan.submission, plan.assignment.grader, module, plan.needs[module], done.tests,
                    done.files_of)
                if done.stood_in[module]:
                    student.sources[module] = folder
                done.notes.extend(done.stood_in[module])
            done.files_of[check.id] = check.files
            lines = [line for m in check.files for line in done.stood_in.get(m, ())]
            done.tests.append(test_entry(plan, ctx, task, check, lines))


def test_entry(plan, ctx, task, check: Check, stand_in_lines: list[str]) -> dict:
    """The results entry of ``check`` of ``task`` in grading ``plan``, run now unless the grading's
    budget is spent; its message ends with ``stand_in_lines``. "outcome" tells a mistake seen
    ("failed") from code that never gave a value ("error"), for grade-all's summary."""
    share = plan.shares[check.id]
    if ctx.budget_left() > 0:
        passed, message = run_check(ctx, check)
    else:
        passed, message = False, NotRun(over_budget(plan.budget_s))
    if stand_in_lines:
        message = type(message)("\n".join([message, *stand_in_lines]))
    entry = results.test_entry(task_id=task.id, check_id=check.id, title=check.name,
                               score=share if passed else 0.0, max_score=share, passed=passed,
                               output=message, visibility=check.visibility or plan.assignment.visibility)
    entry["outcome"] = "passed" if passed else "error" if isinstance(message, NotRun) else "failed"
    return entry
