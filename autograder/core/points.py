"""Each check's points: course.yml's ``checks`` mapping of its task, else the task's points split
by the checks' weights.

The mapping must name every check registered for the task and nothing else (course.py has already
checked that it sums to the task's points), so a renamed or new check cannot silently go unpaid.
"""
from __future__ import annotations

from autograder.core.errors import UsageError


def of_checks(asg, plan) -> dict[str, float]:
    """Check id -> points, for every check of ``plan`` (each task with all its registered checks).

    Raises UsageError naming course.yml's key when a task's ``checks`` names an unknown check or
    leaves a registered one out.
    """
    out: dict[str, float] = {}
    for task, checks in plan:
        ids = [c.id for c in checks]
        if task.check_points:
            named = dict(task.check_points)
            key = f"assignments.{asg.name}.tasks[{task.id}].checks"
            unknown = sorted(set(named) - set(ids))
            if unknown:
                raise UsageError(f"course.yml: {key} names {', '.join(unknown)}, not a check of {task.id} "
                                 f"(its checks: {', '.join(ids) or 'none'})")
            unpaid = [i for i in ids if i not in named]
            if unpaid:
                raise UsageError(f"course.yml: {key} gives no points to {', '.join(unpaid)}; "
                                 f"give every check of {task.id} its points")
            out.update(named)
        else:
            total = sum(c.weight for c in checks)
            out.update({c.id: task.points * c.weight / total for c in checks} if total else {})
    return out
