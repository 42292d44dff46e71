"""The executor interface: where grade-all's submissions are graded.

grade-all (autograder/batch/run.py) plans the jobs, builds the executor chosen on the command line
from a ``Setup`` (what an executor needs of the run: OUT's store, the assignment, the budget...)
and records each ``Outcome`` the moment ``grade`` yields it, so a crash or Ctrl-C mid-batch keeps
every finished student. Two executors implement it: ``local.LocalExecutor`` (worker processes on
this machine) and ``slurm.executor.SlurmExecutor`` (one Slurm job array whose tasks save each
student into OUT themselves).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Generator, Protocol, TextIO

from autograder.batch.progress import Progress
from autograder.classdata.store import Store
from autograder.core.course import Assignment


@dataclass
class Job:
    """One submission to grade: ``key`` is the student (their folder name under OUT); ``payload``
    goes to the worker as is; ``digest`` is the content hash planned (what the store records);
    ``attempts``: times it was sent to a worker."""

    key: str
    payload: dict
    digest: str = ""
    attempts: int = 0


@dataclass
class Outcome:
    """What came back for one job: ``results`` from the worker, or ``failure`` (a reason), after
    ``seconds`` of wall clock (``cpu_s``: CPU seconds, when the worker said). ``saved``: the
    executor already saved the student's files in OUT (a Slurm array task did, with the store's
    commit marker) and ``results`` are the ones saved; grade-all only counts it."""

    job: Job
    results: dict | None
    failure: str | None
    seconds: float
    cpu_s: float | None = None
    saved: bool = False


@dataclass(frozen=True)
class Setup:
    """What an executor is built with, once OUT is open: its ``store`` (autograder/classdata/store.py),
    the ``assignment`` (course.yml's), ``workers`` (the --jobs processes), ``budget_s`` (wall-clock
    seconds one submission may take), ``log`` (OUT/grade-all.log, the workers' stderr), the
    ``progress`` bar (autograder/batch/progress.py), the ``stream`` messages go to and the
    ``course_file`` the assignment is read from (each worker process is given it)."""

    store: Store
    assignment: Assignment
    workers: int
    budget_s: float
    log: Path
    progress: Progress
    stream: TextIO
    course_file: Path


class Incomplete(Exception):
    """Raised by ``Executor.grade`` after its last outcome when it left some jobs ungraded; the
    message is the line grade-all prints (its exit status is then 1; a rerun grades the rest)."""


class Executor(Protocol):
    """Grades jobs somewhere and yields each one's Outcome as it finishes."""

    def grade(self, jobs: list[Job]) -> Generator[Outcome, None, None]:
        """Grade ``jobs``, yielding each Outcome as it finishes; Incomplete at the end when some
        were left ungraded. grade-all closes the generator when it stops early (an error, Ctrl-C):
        the executor then stops grading (workers killed, the job array cancelled)."""
        ...


#: What grade-all's options name: an executor built from the run's Setup (LocalExecutor itself,
#: or a SlurmExecutor with the instructor's cluster options bound).
ExecutorFactory = Callable[[Setup], Executor]
