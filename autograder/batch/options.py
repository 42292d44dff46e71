"""grade-all's options: the command line's flags (``BatchOptions``), and what they settle to once
course.yml is read and checked (``Settled``)."""
from __future__ import annotations

import os
from dataclasses import dataclass

from autograder.batch.executors.base import ExecutorFactory
from autograder.batch.executors.local import LocalExecutor
from autograder.classdata import moodle_dates
from autograder.core import course, late
from autograder.core.course import Assignment
from autograder.core.errors import UsageError
from autograder.grading import budget, preflight


@dataclass(frozen=True)
class BatchOptions:
    """grade-all's flags as given; None: course.yml's value or the default.

    ``jobs``: worker processes (default: the machine's cores); ``force``: regrade unchanged
    submissions too; ``student``: regrade this one (a folder name, or a member's sid, email, name
    or LMS id); ``assignment``: one of course.yml's (default: its first); ``device``: sim, cpu or
    cuda; ``budget_s``: seconds the grading of one submission may take (autograder/grading/budget.py:
    past it each check left fails with one line; grade-all's watchdog kills a worker only well past
    it); ``time_limit_s``: seconds per call of a student
    function; ``only``: grade these check ids (merged into each stored full result: autograder/classdata/partial.py);
    ``extensions``: a CSV of per-student extensions (autograder/core/late.py); ``similarity``: also
    write OUT/similarity/ (autograder/similarity); ``moodle_worksheet``: Moodle's grading
    worksheet, whose ``Last modified (submission)`` dates a Moodle download's students, its local
    times in ``moodle_timezone`` (default: course.yml's ``late.timezone``:
    autograder/classdata/moodle_dates.py); ``executor``: where the grading runs
    (autograder/batch/executors/base.py: LocalExecutor, or a SlurmExecutor with its options).
    """

    jobs: int | None = None
    force: bool = False
    student: str | None = None
    assignment: str | None = None
    device: str | None = None
    budget_s: float | None = None
    time_limit_s: float | None = None
    only: set[str] | None = None
    extensions: str | None = None
    similarity: bool = False
    moodle_worksheet: str | None = None
    moodle_timezone: str | None = None
    executor: ExecutorFactory = LocalExecutor


@dataclass(frozen=True)
class Settled:
    """``options`` with course.yml's values filled in: the course, the assignment, the device, the
    worker processes, the grading budget of one submission (seconds of wall clock: budget.py
    ``grading_s``; the watchdog's is ``budget.watchdog_s`` of it) and the submission
    times of Moodle's worksheet (participant id -> when; None without --moodle-worksheet)."""

    options: BatchOptions
    course: course.Course
    asg: Assignment
    device: str
    jobs: int
    budget_s: float
    moodle_times: dict | None = None


def settle(options: BatchOptions, the_course: course.Course) -> Settled:
    """The options settled against ``the_course`` and checked before OUT is touched: a bad
    --device or --jobs, a course unfit to grade with (autograder/grading/preflight.py) or a bad
    --extensions file is a UsageError (exit 2, nobody graded)."""
    asg = the_course.assignment(options.assignment)
    device = options.device or asg.device
    if device not in course.DEVICES:
        raise UsageError(f"--device {device!r}: expected one of {', '.join(course.DEVICES)}")
    jobs = options.jobs or os.cpu_count() or 1
    if jobs < 1:
        raise UsageError(f"--jobs {jobs}: must be at least 1")
    limit = float(options.time_limit_s or asg.time_limit_s)
    budget_s = budget.grading_s(limit, options.budget_s)
    preflight.check(the_course, asg)
    if options.extensions:
        late.load_extensions(options.extensions)   # a bad file is refused before OUT is touched
    return Settled(options, the_course, asg, device, jobs, budget_s, _moodle_times(options, asg))


def _moodle_times(options: BatchOptions, asg: Assignment) -> dict | None:
    """The worksheet's submission times (``moodle_dates.read``), read before OUT is touched; a
    zone that is not given or not known is a UsageError."""
    sheet, zone = options.moodle_worksheet, options.moodle_timezone
    if sheet is None:
        if zone is not None:
            raise UsageError("--moodle-timezone is the zone of --moodle-worksheet's times; give the worksheet too")
        return None
    where = "--moodle-timezone"
    if zone is None and asg.late is not None and asg.late.timezone:
        zone, where = asg.late.timezone, f"course.yml {asg.name}.late.timezone"
    if not zone:
        raise UsageError(f"--moodle-worksheet {sheet}: its times are the local times of the Moodle "
                         f"profile that downloaded it; give their zone with --moodle-timezone ZONE "
                         f"(e.g. Europe/London) or course.yml's late.timezone")
    return moodle_dates.read(sheet, late.zone_named(zone, where))
