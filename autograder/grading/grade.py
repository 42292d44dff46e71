"""Grade one submission: run every registered check in a sandbox, build the results dict.

``grade_submission(path, assignment=None, device=None) -> dict`` is the plain Python API (the
batch grader calls it; ``python -m autograder grade`` is a thin wrapper). It runs four steps, each
usable alone: ``plan`` (the course, the limits, the submission's private copy, its checks in run
order: grading/schedule.py), ``open_sandboxes`` (the student's children and the reference's),
``run_checks`` (each check's results entry; files that share no student file side by side:
grading/lanes.py) and ``finish`` (course.yml order, the real-GPU tier,
the overview). Each task's points from course.yml go to its checks as the task's ``checks``
mapping says (autograder/core/points.py; by weight when it has none); a check passes (all its
points) or fails (zero). A file whose checks need another student file runs with a stand-in for
it when the student's is broken (autograder/grading/fallback.py), so one mistake is charged once.
"""
from __future__ import annotations

import importlib
import pkgutil
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from autograder.core import course, handin, lesson, points, results, submission
from autograder.core.errors import UsageError
from autograder.core.lesson import Lesson
from autograder.core.registry import REGISTRY, Check
from autograder.grading import budget, real_gpu, schedule
from autograder.grading import lanes as side
from autograder.grading import reference as kept_reference
from autograder.grading import simseed as seed
from autograder.grading.checkrun import Ran, run_tasks
from autograder.grading.context import GradingContext
from autograder.sandbox import calltime, forkserver, isolation, policy
from autograder.sandbox.parent import Limits, Sandbox
from autograder.sandbox.perfile import PerFileSandbox

#: Time limit of a reference call relative to the student's (the reference is trusted, not slow).
REFERENCE_TIME_FACTOR = 2.0

#: Whether a check runs on the simulated GPU (as it declares): schedule.on_gpu.
_on_gpu = schedule.on_gpu


def load_checks(of: course.Assignment | Lesson) -> dict[str, Check]:
    """The checks of an assignment's Lesson (or of ``of`` itself, a Lesson) by id: every module of
    its ``checks`` package imported (each registers its checks), in the order of their names.

    Raises:
        UsageError: the grader package is not a checked Lesson (autograder/core/lesson.py), or two
            of its modules register the same check id.
    """
    declared = of if isinstance(of, Lesson) else lesson.of(of)
    package = importlib.import_module(declared.checks)
    found: dict[str, Check] = {}
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
        name = f"{package.__name__}.{info.name}"
        importlib.import_module(name)
        for check_id, registered in REGISTRY.get(name, {}).items():
            if check_id in found:
                raise UsageError(f"grader package {declared.package!r}: check id {check_id!r} is registered "
                                 f"by two modules ({name} and another)")
            found[check_id] = registered
    return found


def checks_for(assignment: course.Assignment, only: set[str] | None = None) -> list[tuple[course.Task, list[Check]]]:
    """Each task with its checks, in course.yml order, then registration order."""
    registry = load_checks(assignment)
    out = []
    for task in assignment.tasks:
        mine = [c for c in registry.values() if c.task == task.id and (only is None or c.id in only)]
        out.append((task, mine))
    return out


@dataclass(frozen=True)
class GradingPlan:
    """What one grading does, settled before any child starts (``plan``).

    Attributes:
        assignment: the assignment graded.
        device: 'sim', 'cpu' or 'cuda'.
        limits: each student call's limits (time_limit_s in seconds, memory_limit_mb in MiB).
        fixed_limit: the caller gave time_limit_s: one fixed limit for every call instead of a
            multiple of the reference's time (autograder/sandbox/calltime.py).
        budget_s: wall-clock seconds the whole grading may take.
        started: time.monotonic() when the grading began (the budget counts from it).
        submission: the private copy of the submission (removed when the grading ends).
        checks: each task with its checks to run, in course.yml order, then registration order.
        order: the same tasks in the order they run (schedule.run_order).
        early: the ids of the tasks moved first (they run while the fork server imports torch).
        shares: points of every check of the assignment, by check id (autograder/core/points.py).
        needs: student module -> the student modules its checks also need (the Lesson's ``depends``).
        torch_files: student modules that import torch (the Lesson's ``torch_files``).
        plot_files: student modules that draw with matplotlib (the Lesson's ``plot_files``).
        only: the check ids asked for; None: all.
        lanes: how many groups of files grade side by side once torch is in (grading/lanes.py).
    """

    assignment: course.Assignment
    device: str
    limits: Limits
    fixed_limit: bool
    budget_s: float
    started: float
    submission: submission.Submission
    checks: schedule.TaskChecks
    order: schedule.TaskChecks
    early: set[str]
    shares: dict[str, float]
    needs: dict[str, tuple[str, ...]]
    torch_files: frozenset[str]
    plot_files: frozenset[str]
    only: set[str] | None
    lanes: int = 1

    @property
    def gpu(self) -> bool:
        """Whether a GPU check runs (the reference then starts with the first task not moved first)."""
        return any(_on_gpu(c) for _task, cs in self.checks for c in cs)

    @property
    def light(self) -> bool:
        """Whether the student's children may skip torch and the simulated GPU (seconds to import):
        a partial grading (tests, benchmarks) that needs no torch_files module (the Lesson's) and no GPU check."""
        return self.only is not None and not schedule.needs_torch(self.checks, self.torch_files)



def grade_submission(path, assignment: course.Assignment | str | None = None, device: str | None = None, *,
                     course_file: Path | str | None = None, time_limit_s: float | None = None,
                     only: set[str] | None = None, budget_s: float | None = None,
                     lanes: int | None = None) -> dict:
    """Grade the folder or .zip at ``path``; the Gradescope results dict.

    Args:
        path: a submission folder or .zip.
        assignment: the assignment (as the command line loaded it), or its name in the course
            file; None: the course file's first.
        device: 'sim', 'cpu' or 'cuda'; None takes course.yml's default.
        course_file: the course.yml to read when ``assignment`` is a name or None (default: the
            nearest course.yml upward, else the checkout's: ``course.find``).
        time_limit_s: one fixed limit in seconds for every call, instead of course.yml's (a
            multiple of the reference's time for the same call, with a floor and time_limit_s
            as the ceiling: autograder/sandbox/calltime.py).
        only: grade just these check ids (tests and benchmarks); None grades all.
        budget_s: wall-clock seconds the whole grading may take (None: autograder/grading/budget.py
            ``grading_s``). Past it, no student call outlives it and each check left fails with one
            line saying so ("outcome": "error"); the grading still ends with results.
        lanes: groups of student files graded side by side (grading/lanes.py); None: one per
            CPU this process may use, at most lanes.MAX_LANES.

    Raises:
        UsageError: unknown assignment or device; SubmissionError (a UsageError) for a path
            that cannot be graded safely (missing, unreadable zip, symlinks, absurd sizes).
        GraderError: the grader itself failed (a check raised, the reference failed): no grade.
    """
    p = plan(path, assignment, device, course_file=course_file, time_limit_s=time_limit_s,
             only=only, budget_s=budget_s, lanes=lanes)
    with p.submission, open_sandboxes(p) as (student, reference):
        # The checks of files that need no torch run first, in children that start as fresh
        # interpreters while the fork server still imports torch; the other children fork from
        # the server once it is ready.
        secret = seed.course_secret(p.assignment.root)
        ctx = GradingContext(student, reference, seed=p.submission.seed, device=p.device,
                             submission_dir=p.submission.folder, sim_profile=p.assignment.sim_profile,
                             secret=secret, deadline=p.started + p.budget_s)
        tests, notes = run_checks(p, ctx, student, reference, more=student.beside)
        tests, output = finish(p, tests, notes, student, secret)
    return results.build(tests, output=output, execution_time=time.monotonic() - p.started,
                         visibility=p.assignment.visibility)


def plan(path, assignment: course.Assignment | str | None = None, device: str | None = None, *,
         course_file: Path | str | None = None, time_limit_s: float | None = None,
         only: set[str] | None = None, budget_s: float | None = None, lanes: int | None = None) -> GradingPlan:
    """The plan of grading ``path`` (the arguments are ``grade_submission``'s): the submission
    copied, its checks loaded and put in run order. It also starts this process's fork server, so
    that torch imports there while the checks load here. The caller removes ``submission``.

    Raises:
        UsageError: as ``grade_submission``.
    """
    started = time.monotonic()
    asg = assignment if isinstance(assignment, course.Assignment) else \
        course.load(course.find(course_file)).assignment(assignment)
    declared = lesson.of(asg)
    device = device or asg.device
    if device not in course.DEVICES:
        raise UsageError(f"unknown device {device!r}; expected one of: {', '.join(course.DEVICES)}")
    limit = float(time_limit_s or asg.time_limit_s)
    grading_budget = budget.grading_s(limit, budget_s)
    sub = submission.load(path, expected=handed_in(asg))
    try:
        if only is None:   # every check: torch imports there while the checks load here
            fork_server(asg, None)
        torch_files = frozenset(declared.torch_files)
        checks = checks_for(asg, only)
        if only is not None:
            fork_server(asg, checks)
        needs = dict(declared.depends)
        order, early = schedule.run_order(checks, torch_files, needs)
        shares = points.of_checks(asg, checks_for(asg))
    except BaseException:
        sub.cleanup()
        raise
    return GradingPlan(
        assignment=asg, device=device,
        limits=Limits(time_limit_s=limit, memory_limit_mb=asg.memory_limit_mb,
                      hide=policy.course_secrets(asg.root),
                      sim_profile=asg.sim_profile if device == "sim" else ""),   # its nvidia-smi
        fixed_limit=bool(time_limit_s), budget_s=grading_budget, started=started, submission=sub,
        checks=checks, order=order, early=early, shares=shares, needs=needs, torch_files=torch_files,
        plot_files=frozenset(declared.plot_files), only=only, lanes=side.count(lanes))


def fork_server(asg: course.Assignment, checks: schedule.TaskChecks | None) -> None:
    """This process's fork server, started for ``checks`` (None: all) of ``asg`` when there is
    none (schedule.server_imports; kept for every later grading: imported once per process,
    forked for every child). One that lacks a module these checks need is replaced, the kept
    reference children it forked stopped first."""
    imports = schedule.server_imports(asg, checks)
    server = forkserver.active()
    if server is not None and not server.covers(imports["preload"]):
        kept_reference.close_all()
        forkserver.stop()
    forkserver.ensure(**imports)


@contextmanager
def open_sandboxes(p: GradingPlan) -> Iterator[tuple[PerFileSandbox, Sandbox]]:
    """(the student's sandbox, the reference's) for grading ``p``, no child started yet; when the
    block ends the student's children stop and the reference is kept for the next grading."""
    limit = p.limits.time_limit_s
    # The reference serves the GPU checks (bw.py, flops.py): torch, no matplotlib to import.
    # One request at a time: the lanes (grading/lanes.py) share it.
    reference = side.Serial(kept_reference.sandbox(p.assignment.solutions_dir,
                                                   Limits(time_limit_s=limit * REFERENCE_TIME_FACTOR,
                                                          memory_limit_mb=p.limits.memory_limit_mb,
                                                          hide=p.limits.hide, sim_profile=p.limits.sim_profile)))
    # Each student call may take a multiple of the reference's time for the same call (asked
    # only when a call runs past the floor), capped by the per-call limit (calltime.py); an
    # explicit time_limit_s is one fixed limit for every call instead.
    timer = None if p.fixed_limit else calltime.ReferenceTimer(
        reference, multiple=p.assignment.time_limit_multiple, floor_s=p.assignment.time_limit_floor_s,
        ceiling_s=limit)
    # A fresh child per student file (autograder/sandbox/perfile.py): one file's crash costs only its checks.
    student = PerFileSandbox(p.submission.folder, p.limits, heavy=tuple(sorted(p.torch_files)),
                             plots=tuple(sorted(p.plot_files)),
                             preload=("matplotlib.figure",) if p.light else ("torch",),
                             simgpu=not p.light, timer=timer)
    try:
        yield student, reference
    finally:
        student.close()
        kept_reference.release(reference.box)


def run_checks(p: GradingPlan, ctx: GradingContext, student: PerFileSandbox, reference: Sandbox,
               more: Callable[[], PerFileSandbox] | None = None) -> tuple[list[dict], list[str]]:
    """Run the checks of ``p`` in its run order: (their results entries in the order they ran, the
    lines of the stand-ins used). A module that needs a broken one gets its stand-in before its
    first check (fallback.py), and each of its checks' messages ends with the lines saying so.
    The tasks moved first run one after another; the others in up to ``p.lanes`` lanes side by
    side (grading/lanes.py), each lane after the first with a sandbox from ``more()`` (None: one lane)."""
    first = [tc for tc in p.order if tc[0].id in p.early]
    rest = [tc for tc in p.order if tc[0].id not in p.early]
    done = Ran()
    run_tasks(p, ctx, student, first, done)
    if p.gpu and rest and reference.starts == 0:
        reference.start()   # the GPU checks compare with it: it imports while the student's child does
    groups = side.split(rest, p.needs, p.lanes if more is not None else 1)
    boxes = [student] + [more() for _ in groups[1:]]

    def lane(i: int, tasks: schedule.TaskChecks) -> Ran:
        mine = done.copy()
        run_tasks(p, ctx if i == 0 else ctx.beside(boxes[i]), boxes[i], tasks, mine)
        return mine

    def stop() -> None:
        for box in boxes:
            box.close()

    ran = side.run(groups, lane, stop) if groups else []
    for lane_ran in ran:
        done.add(lane_ran)
    return done.tests, done.notes


def finish(p: GradingPlan, tests: list[dict], notes: list[str], student: Sandbox,
           secret: seed.Secret) -> tuple[list[dict], str]:
    """(the results' tests, the overview text above them): ``tests`` as ``run_checks`` ran them,
    back in course.yml order, then the real-GPU tier's under --device cuda; the overview says how
    the submission was graded, then the tasks with no checks, ``notes`` and the tier's line."""
    position = {c.id: i for i, c in enumerate(c for _task, cs in p.checks for c in cs)}
    tests = sorted(tests, key=lambda t: position[t["check"]])
    notes = [f"{task.id} ({task.title}): no checks are registered yet; its {task.points:g} points are not graded"
             for task, task_checks in p.checks if not task_checks and p.only is None] + notes
    if p.device == "cuda":   # informational real-GPU checks
        tests = real_gpu.add_tests(tests, p.checks, p.assignment, p.submission.folder, p.limits, notes)
    if p.gpu:
        notes.append(f"The simulated GPU's profile was seeded with the grader's secret ({secret.source}).")
    return tests, _overview(p, student, notes)


def handed_in(asg: course.Assignment) -> tuple[str, ...]:
    """The file names a submission of ``asg`` holds: each task's modules and ``files`` (course.yml),
    plus the Lesson's ``handed_in``."""
    return tuple(sorted(set(asg.handed_in) | set(lesson.of(asg).handed_in)))


def _overview(p: GradingPlan, student: Sandbox, notes: list[str]) -> str:
    """The text above the results: the device, the files graded, the protection, the restarts, ``notes``."""
    sub = p.submission
    gpu = f"GPU sanity checks on the simulated GPU (profile {p.assignment.sim_profile})"
    if p.device == "cuda":   # the graded GPU checks stay simulated; the notes say what the real GPU did
        gpu += ", graded; real-GPU checks: see below"
    lines = [f"Graded with --device {p.device}: CPU checks on the grading machine's CPU; {gpu}.",
             f"Files graded: {', '.join(sub.files) or '(none)'}."]
    if sub.found_in:
        lines.insert(1, f"Your files were found in {sub.found_in}/ inside the submission and graded from there.")
    books = any(f.lower().endswith(".ipynb") for f in sub.files)   # the names are asked only then
    notebook = handin.notebook_only(sub.files, handed_in(p.assignment)) if books else None
    if notebook:
        lines.insert(1, f"Nothing graded: {notebook}.")
    lines.append(isolation.describe(student.limits))   # the protection in force, as probed
    if student.starts > 1:
        lines.append(f"Your code was restarted {student.starts - 1} time(s) after a crash or a time limit.")
    lines.extend(notes)
    return "\n".join(lines)
