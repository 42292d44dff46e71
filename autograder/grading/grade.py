"""Grade one submission: run every registered check in a sandbox, build the results dict.

``grade_submission(path, assignment=None, device=None) -> dict`` is the plain Python API (the
batch grader calls it; ``python -m autograder grade`` is a thin wrapper). Each task's points from
course.yml go to its checks as the task's ``checks`` mapping says (autograder/core/points.py; by
weight when it has none); a check passes (all its points) or fails (zero). A file whose checks
need another student file runs with a stand-in for it when the student's is broken
(autograder/grading/fallback.py), so one mistake is charged once.
"""
from __future__ import annotations

import importlib
import os
import pkgutil
import sys
import time
import traceback
from contextlib import contextmanager
from pathlib import Path

from autograder.core import course, points, results, submission
from autograder.core.errors import GraderError, StudentError, StudentRaised, UsageError
from autograder.core.registry import REGISTRY, Check, CheckFailed
from autograder.gpu import seed
from autograder.grading import fallback
from autograder.grading import reference as kept_reference
from autograder.grading.context import GradingContext
from autograder.sandbox import calltime, forkserver, isolation
from autograder.sandbox.parent import Limits, Sandbox
from autograder.sandbox.perfile import PerFileSandbox

#: Time limit of a reference call relative to the student's (the reference is trusted, not slow).
REFERENCE_TIME_FACTOR = 2.0
#: Wall-clock budget of one grading, in per-call limits (course.yml time_limit_s): below
#: grade-all's 20 (autograder/batch/run.py BUDGET_CALLS), so that a grading over budget ends here,
#: its remaining checks charged to the student, before grade-all's backstop kills the worker.
BUDGET_CALLS = 18
#: The budget's floor, in seconds: a short per-call limit (tests, quick trial runs) must not turn
#: an ordinary grading on a busy machine into checks not run.
MIN_BUDGET_S = 300.0


def load_checks(asg: course.Assignment | None = None) -> dict[str, Check]:
    """Import every module of the assignment's ``<grader>.checks`` package (each registers its
    checks); its checks by id. None: the first assignment of course.yml."""
    asg = asg or course.load().assignment()
    try:
        package = importlib.import_module(f"{asg.grader}.checks")
    except ImportError as exc:
        raise UsageError(f"assignment {asg.name!r}: its grader package {asg.grader!r} "
                         f"has no checks ({exc})") from None
    with _without_hypothesis_plugins():
        for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
            importlib.import_module(f"{package.__name__}.{info.name}")
    return REGISTRY.get(asg.grader, {})


@contextmanager
def _without_hypothesis_plugins():
    """Import the checks without running the "hypothesis" entry points of installed packages.

    Hypothesis runs them when first imported, which is when a property check's module is. The
    only one installed is trio's (selenium needs trio, for the HTML report's browser test): it
    imports trio and pytest, 0.3 CPU s of every cold grading, to register strategies for trio's
    types, which no check draws. HYPOTHESIS_NO_PLUGINS skips them (hypothesis/entry_points.py):
    hypothesis has no other switch, and reads it once, at its own first import. It is set only
    while the checks import (the only importers of hypothesis in a grading), so no process the
    grader starts inherits it.
    """
    before = os.environ.get("HYPOTHESIS_NO_PLUGINS")
    os.environ["HYPOTHESIS_NO_PLUGINS"] = "1"
    try:
        yield
    finally:
        if before is None:
            del os.environ["HYPOTHESIS_NO_PLUGINS"]
        else:
            os.environ["HYPOTHESIS_NO_PLUGINS"] = before


def checks_for(assignment: course.Assignment, only: set[str] | None = None) -> list[tuple[course.Task, list[Check]]]:
    """Each task with its checks, in course.yml order, then registration order."""
    registry = load_checks(assignment)
    out = []
    for task in assignment.tasks:
        mine = [c for c in registry.values() if c.task == task.id and (only is None or c.id in only)]
        out.append((task, mine))
    return out


class NotRun(str):
    """A failure message from a check that never saw a value: the student's code raised, hung,
    crashed or was missing (or the grader slipped). grade-all's class summary counts these as
    'code did not run', not as the lesson mistake the check looks for; results carry it as
    "outcome": "error" (a plain failed check is "outcome": "failed")."""


def _on_gpu(check: Check) -> bool:
    """Whether ``check`` is a GPU sanity check (a ``<grader>.checks.gpu_*`` module: simulated GPU + reference)."""
    return check.fn.__module__.rsplit(".", 1)[-1].startswith("gpu_")


def run_check(ctx: GradingContext, check: Check) -> tuple[bool, str]:
    """(passed, message) of one check; student failures and grader slips both end as one message."""
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
        raise                               # the grader's own failure: never a student's score
    except Exception as exc:  # a check that trips on an odd value must not stop grading
        print(f"grader: check {check.id} raised {type(exc).__name__}: {exc}", file=sys.stderr)
        traceback.print_exc(limit=3, file=sys.stderr)
        return False, NotRun(f"the grader could not interpret your result ({type(exc).__name__}); "
                             "check that your function returns the type and units its docstring names")


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


def grade_submission(path, assignment: str | None = None, device: str | None = None, *,
                     course_file: Path | str | None = None, time_limit_s: float | None = None,
                     only: set[str] | None = None, budget_s: float | None = None) -> dict:
    """Grade the folder or .zip at ``path``; the Gradescope results dict.

    Args:
        path: a submission folder or .zip.
        assignment: an assignment name in course.yml; None: its first.
        device: 'sim', 'cpu' or 'cuda'; None takes course.yml's default.
        course_file: another course.yml (tests use one with a short time limit).
        time_limit_s: one fixed limit in seconds for every call, instead of course.yml's (a
            multiple of the reference's time for the same call, with a floor and time_limit_s
            as the ceiling: autograder/sandbox/calltime.py).
        only: grade just these check ids (tests and benchmarks); None grades all.
        budget_s: wall-clock seconds the whole grading may take (None: BUDGET_CALLS per-call
            limits, at least MIN_BUDGET_S). Past it, no student call outlives it and each check left fails with one
            line saying so ("outcome": "error"); the grading still ends with results.

    Raises:
        UsageError: unknown assignment or device; SubmissionError (a UsageError) for a path
            that cannot be graded safely (missing, unreadable zip, symlinks, absurd sizes).
    """
    started = time.monotonic()
    the_course = course.load(course_file) if course_file else course.load()
    asg = the_course.assignment(assignment)
    device = device or asg.device
    if device not in course.DEVICES:
        raise UsageError(f"unknown device {device!r}; expected one of: {', '.join(course.DEVICES)}")
    limit = float(time_limit_s or asg.time_limit_s)
    limits = Limits(time_limit_s=limit, memory_limit_mb=asg.memory_limit_mb)
    budget = float(budget_s if budget_s is not None else max(BUDGET_CALLS * limit, MIN_BUDGET_S))
    sub = submission.load(path, expected=_handed_in(asg))
    forkserver.ensure()   # one process imports torch once and forks every child of the process
    # torch and the simulated GPU cost seconds to import; a partial grading (tests, benchmarks)
    # that needs neither bw.py, flops.py nor a GPU check starts a lighter child.
    grader = importlib.import_module(asg.grader)
    torch_files = set(getattr(grader, "TORCH_FILES", ()))
    plot_files = set(getattr(grader, "PLOT_FILES", ()))
    plan = checks_for(asg, only)
    light = only is not None and not any(set(c.files) & torch_files or _on_gpu(c)
                                         for _task, cs in plan for c in cs)
    # A fresh child per student file (autograder/sandbox/perfile.py): one file's crash costs only its checks.
    # The reference serves the GPU checks (bw.py, flops.py): torch, no matplotlib to import.
    reference = kept_reference.sandbox(asg.solutions_dir, Limits(time_limit_s=limit * REFERENCE_TIME_FACTOR,
                                                                 memory_limit_mb=asg.memory_limit_mb))
    # Each student call may take a multiple of the reference's time for the same call (asked
    # only when a call runs past the floor), capped by the per-call limit (calltime.py); an
    # explicit time_limit_s is one fixed limit for every call instead.
    timer = None if time_limit_s else calltime.ReferenceTimer(
        reference, multiple=asg.time_limit_multiple, floor_s=asg.time_limit_floor_s, ceiling_s=limit)
    student = PerFileSandbox(sub.folder, limits, heavy=tuple(sorted(torch_files)),
                             plots=tuple(sorted(plot_files)),
                             preload=("matplotlib.figure",) if light else ("torch",),
                             simgpu=not light, timer=timer)
    gpu = any(_on_gpu(c) for _task, cs in plan for c in cs)
    try:
        needs = fallback.depends(asg.grader)
        order, early = _run_order(plan, torch_files, needs)
        notes = [f"{task.id} ({task.title}): no checks are registered yet; its {task.points:g} points are not graded"
                 for task, task_checks in plan if not task_checks and only is None]
        # The checks of files that need no torch run first, in children that start as fresh
        # interpreters while the fork server still imports torch (the first of them now); the
        # other children fork from the server once it is ready.
        first = next((f for _task, cs in order for c in cs for f in c.files), None)
        student.start(first)
        secret = seed.course_secret(asg.root)
        ctx = GradingContext(student, reference, seed=sub.seed, device=device,
                             submission_dir=sub.folder, sim_profile=asg.sim_profile, secret=secret,
                             deadline=started + budget)
        tests = []   # in the order the checks ran (fallback.why_broken reads the results so far)
        shares = points.of_checks(asg, checks_for(asg))
        files_of, stood_in = {}, {}
        for task, task_checks in order:
            if gpu and task.id not in early and reference.starts == 0:
                reference.start()   # the GPU checks compare with it: it imports while the student's child does
            for check in task_checks:
                share = shares[check.id]
                for module in set(check.files) & set(needs) - set(stood_in):
                    stood_in[module] = _stand_in(ctx, student, sub, asg, module, needs[module], tests, files_of)
                    notes.extend(stood_in[module])
                files_of[check.id] = check.files
                if time.monotonic() < ctx.deadline:
                    passed, message = run_check(ctx, check)
                else:
                    passed, message = False, NotRun(over_budget(budget))
                lines = [line for m in check.files for line in stood_in.get(m, ())]
                if lines:
                    message = type(message)("\n".join([message, *lines]))
                tests.append(results.test_entry(
                    task_id=task.id, check_id=check.id, title=check.name,
                    score=share if passed else 0.0, max_score=share, passed=passed, output=message,
                    visibility=check.visibility or asg.visibility))
                # grade-all's summary tells a mistake seen (failed) from code that never ran (error).
                tests[-1]["outcome"] = ("passed" if passed else
                                        "error" if isinstance(message, NotRun) else "failed")
        position = {c.id: i for i, c in enumerate(c for _task, cs in plan for c in cs)}
        tests.sort(key=lambda t: position[t["check"]])   # results in course.yml order
        if device == "cuda":   # informational real-GPU checks (autograder/grading/real_gpu.py)
            tests = _real_gpu(tests, plan, asg, sub, limits, notes)
        if gpu:
            notes.append(f"The simulated GPU's profile was seeded with the grader's secret ({secret.source}).")
        output = _overview(device, asg, sub, student, notes)
    finally:
        student.close()
        kept_reference.release(reference)
        sub.cleanup()
    return results.build(tests, output=output, execution_time=time.monotonic() - started,
                         visibility=asg.visibility)


def _run_order(plan, preloading: set[str], needs: dict[str, tuple[str, ...]]):
    """(the tasks of ``plan`` in the order their checks run, the ids of those moved first).

    A task moves first when none of its checks is a GPU check or needs a file in ``preloading``
    (TORCH_FILES), itself or through ``needs`` (fallback.depends), and every file it needs is
    graded by moved tasks only: its checks can then run while the fork server imports torch (a
    plot file's child imports matplotlib itself meanwhile), and a dependent file still runs after
    the files it needs. Otherwise course.yml order.
    """
    def files(checks) -> set[str]:
        mine = {f for c in checks for f in c.files}
        return mine | {n for f in mine for n in needs.get(f, ())}

    moved = {task.id for task, cs in plan
             if cs and not any(_on_gpu(c) for c in cs) and not files(cs) & preloading}
    while True:
        graded_elsewhere = {f for task, cs in plan if task.id not in moved for c in cs for f in c.files}
        stuck = {task.id for task, cs in plan if task.id in moved
                 and {n for c in cs for f in c.files for n in needs.get(f, ())} & graded_elsewhere}
        if not stuck:
            break
        moved -= stuck
    order = [tc for tc in plan if tc[0].id in moved] + [tc for tc in plan if tc[0].id not in moved]
    return order, moved


def _handed_in(asg: course.Assignment) -> tuple[str, ...]:
    """The file names a submission of ``asg`` holds: each task's modules and ``files`` (course.yml),
    plus the grader's ``checks.HANDED_IN`` when it declares any."""
    extra = getattr(importlib.import_module(f"{asg.grader}.checks"), "HANDED_IN", ())
    return tuple(sorted(set(asg.handed_in) | set(extra)))


def _stand_in(ctx, student: PerFileSandbox, sub: submission.Submission, asg: course.Assignment,
              module: str, needs: tuple[str, ...], tests: list[dict], files_of: dict) -> list[str]:
    """Before ``module``'s first check: point its child at a copy of the submission in which each
    broken file it needs is the grader's stand-in (never the reference's); the lines saying so
    (none when all are sound)."""
    lines, folder = [], sub.folder
    for need in needs:
        reason = fallback.why_broken(ctx, need, tests, files_of)
        if reason is not None:
            folder = fallback.stand_in(folder, need, asg.grader, sub.scratch(f"{module}-with-{need}"))
            lines.append(fallback.note(module, need, reason))
    if lines:
        student.sources[module] = folder
    return lines


def _real_gpu(tests: list[dict], plan, asg: course.Assignment, sub: submission.Submission,
              limits: Limits, notes: list[str]) -> list[dict]:
    """``tests`` plus the real-GPU checks '[<check>/cuda]' (0 points) when this machine has a
    GPU; the line saying what ran (or that there is no GPU) goes first in ``notes``."""
    from autograder.grading import real_gpu as realgpu

    gpu_checks = {c.id: (task, c) for task, cs in plan for c in cs if _on_gpu(c)}
    if not gpu_checks:
        return tests

    def entry(check_id: str, passed: bool, message: str) -> dict:
        task, check = gpu_checks[check_id.split("/")[0]]
        e = results.test_entry(task_id=task.id, check_id=check_id, title=check.name + " (real GPU)",
                               score=0.0, max_score=0.0, passed=passed, output=message,
                               visibility=check.visibility or asg.visibility)
        e["outcome"] = "passed" if passed else "failed"
        return e

    extra, line = realgpu.tests_for(asg, sub.folder, limits, entry)
    notes.insert(0, line)
    return tests + [e for e in extra if e["check"].split("/")[0] in gpu_checks]


def _overview(device: str, asg: course.Assignment, sub: submission.Submission, student: Sandbox,
              notes: list[str]) -> str:
    gpu = f"GPU sanity checks on the simulated GPU (profile {asg.sim_profile})"
    if device == "cuda":   # the graded GPU checks stay simulated; the notes say what the real GPU did
        gpu += ", graded; real-GPU checks: see below"
    lines = [f"Graded with --device {device}: CPU checks on the grading machine's CPU; {gpu}.",
             f"Files graded: {', '.join(sub.files) or '(none)'}."]
    if sub.found_in:
        lines.insert(1, f"Your files were found in {sub.found_in}/ inside the submission and graded from there.")
    lines.append(isolation.describe(student.limits))   # the protection in force, as probed
    if student.starts > 1:
        lines.append(f"Your code was restarted {student.starts - 1} time(s) after a crash or a time limit.")
    lines.extend(notes)
    return "\n".join(lines)
