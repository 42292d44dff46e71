"""The order one grading runs its checks in: the tasks whose children can start before torch is in.

A cold grading starts the fork server (which imports torch, seconds) and meanwhile runs the
checks of files that need neither torch nor the simulated GPU, in children that start as fresh
interpreters (autograder/sandbox/perfile.py). ``run_order`` says which tasks those are; the
results keep course.yml's order whatever the run order (grading/grade.py). Once torch is in, the
GPU checks' simulated-GPU settings run one after another, each in a child of its own
(autograder/sandbox/perfile.py).
"""
from __future__ import annotations

from autograder.core import lesson
from autograder.core.course import Task
from autograder.core.registry import SIMULATED_GPU, Check

#: Each task with its checks, as grade.checks_for gives them.
TaskChecks = list[tuple[Task, list[Check]]]


def on_gpu(check: Check) -> bool:
    """Whether ``check`` declares the simulated GPU as its device (it runs beside the reference)."""
    return check.device == SIMULATED_GPU


def run_order(plan: TaskChecks, preloading: set[str],
              needs: dict[str, tuple[str, ...]]) -> tuple[TaskChecks, set[str]]:
    """(the tasks of ``plan`` in the order their checks run, the ids of those moved first).

    A task moves first when none of its checks is a GPU check or needs a file in ``preloading``
    (the Lesson's torch_files), itself or through ``needs`` (its depends), and every file it needs is
    graded by moved tasks only: its checks can then run while the fork server imports torch (a
    plot file's child imports matplotlib itself meanwhile), and a dependent file still runs after
    the files it needs. Otherwise course.yml order.
    """
    def files(checks) -> set[str]:
        mine = {f for c in checks for f in c.files}
        return mine | {n for f in mine for n in needs.get(f, ())}

    moved = {task.id for task, cs in plan
             if cs and not any(on_gpu(c) for c in cs) and not files(cs) & preloading}
    while True:
        graded_elsewhere = {f for task, cs in plan if task.id not in moved for c in cs for f in c.files}
        stuck = {task.id for task, cs in plan if task.id in moved
                 and {n for c in cs for f in c.files for n in needs.get(f, ())} & graded_elsewhere}
        if not stuck:
            break
        moved -= stuck
    order = [tc for tc in plan if tc[0].id in moved] + [tc for tc in plan if tc[0].id not in moved]
    return order, moved


def needs_torch(plan: TaskChecks, torch_files) -> bool:
    """Whether a check of ``plan`` runs on the simulated GPU or calls a module of ``torch_files``
    (the Lesson's): otherwise no student child needs torch or the simulator (grade.py's ``light``)."""
    return any(set(c.files) & set(torch_files) or on_gpu(c) for _task, cs in plan for c in cs)


def server_imports(asg, plan: TaskChecks | None) -> dict[str, tuple[str, ...]]:
    """What the fork server imports to grade ``plan`` (None: every check) of ``asg``: the Lesson's
    server_imports (autograder/core/lesson.py), less its preload when no check needs torch (no
    child then preloads any of it) and less its later when no check calls a plot file. A grading
    of a few torch-free checks (tests, a --checks run) then starts no torch import it never uses:
    seconds per grade-all worker (docs/performance.md)."""
    imports = lesson.server_imports(asg)
    if plan is None:
        return imports
    declared = lesson.of(asg)
    files = {f for _task, cs in plan for c in cs for f in c.files}
    files |= {n for f in files for n in declared.depends.get(f, ())}
    return {"preload": imports["preload"] if needs_torch(plan, declared.torch_files) else (),
            "later": imports["later"] if files & set(declared.plot_files) else ()}
