"""How long grading one submission may take, in seconds: the grading's own budget and grade-all's
watchdog past it.

``grading_s``: the grading's budget (autograder/grading/grade.py). Past it no student call outlives
it and each check left fails with one line saying so: the grading ends itself, with results.

``watchdog_s``: when grade-all kills a worker (autograder/batch/executors/local.py). It is there
for a grading that does not end itself (the grader stuck, not the student), so it lies well past
the budget. A watchdog at or below the budget zeroes a hanging submission whose grading, given
the time, charges each check on its own; and since a busy machine stretches the grading's wall
time, whether it fires would depend on the load.
"""
from __future__ import annotations

#: The grading's budget, in per-call time limits (course.yml time_limit_s).
CALLS = 18
#: The budget's floor, in seconds: a short per-call limit (tests, quick trial runs) must not turn
#: an ordinary grading on a busy machine into checks not run.
MIN_S = 300.0
#: The watchdog, in grading budgets: room for the grading's last call, which may run its limit in
#: CPU seconds on a starved machine (autograder/sandbox/cputime.py), and for writing results.
WATCHDOG_BUDGETS = 2.0


def grading_s(time_limit_s: float, budget_s: float | None = None) -> float:
    """Seconds a grading with per-call limit ``time_limit_s`` may take: ``budget_s`` when given,
    else CALLS limits, at least MIN_S."""
    if budget_s is not None:
        return float(budget_s)
    return max(CALLS * float(time_limit_s), MIN_S)


def watchdog_s(grading_budget_s: float) -> float:
    """Seconds after which grade-all kills a worker grading one submission whose budget is
    ``grading_budget_s`` (CPU seconds when starved: autograder/batch/executors/local.py)."""
    return WATCHDOG_BUDGETS * float(grading_budget_s)
