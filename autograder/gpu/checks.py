"""A lesson's GPU rubric as grader checks: each check instance judged on the simulated device
seeded for the submission, behind the hidden probe (autograder/gpu/probe.py).

A lesson's ``<grader>/checks/gpu_<name>.py`` modules (the engine runs checks from ``gpu_*``
modules on the simulated GPU with the reference beside them: grading/grade.py) call ``register``
with the lesson's verdict table, ``rubric.verdicts(probe.settings, probe.follows)``.
"""
from __future__ import annotations

from typing import Callable

from autograder.core.registry import CheckFailed, check

#: Base profile when the context carries none (course.yml's sim_profile normally).
DEFAULT_PROFILE = "h100-sxm"


class ContextRunner:
    """judging.Runner: student calls through ctx.call_traced, reference calls through ctx.reference.

    ``memo`` lives on the context, so the checks of one submission share their calls.
    """

    def __init__(self, ctx):
        self.ctx = ctx
        self.memo = ctx.__dict__.setdefault("gpu_memo", {})   # GradingContext has one

    def student(self, module, function, *args, sim, **kwargs):
        return self.ctx.call(module, function, *args, sim=sim, **kwargs)

    def student_traced(self, module, function, *args, sim, **kwargs):
        return self.ctx.call_traced(module, function, *args, sim=sim, **kwargs)

    def reference(self, module, function, *args, sim, **kwargs):
        return self.ctx.reference(module, function, *args, sim=sim, **kwargs)


def judge(ctx, verdicts: dict, check_id: str) -> str:
    """Run ``verdicts[check_id]`` on the simulated GPU seeded for the submission; its message, or
    CheckFailed with it."""
    profile = getattr(ctx, "sim_profile", None) or DEFAULT_PROFILE
    seed = getattr(ctx, "sim_seed", None)
    verdict = verdicts[check_id](ContextRunner(ctx), profile, ctx.seed if seed is None else seed)
    if not verdict.passed:
        raise CheckFailed(verdict.message)
    return verdict.message


def register(rubric, verdicts: dict, name: str, module: str, *, task: Callable[[str], str],
             title: str, weight: Callable[[str], float] = lambda function: 1.0) -> None:
    """Register check ``name`` of ``rubric`` once per function it judges, filed under the lesson
    module ``module`` (a ``gpu_*`` module). ``task(student_module)`` gives each instance's task,
    ``title`` its name (``{f}``: the function), ``weight(function)`` its weight in the task."""
    for function in rubric.judges[name]:
        vid = rubric.check_id(name, function)
        student_module = rubric.module[function]

        def run(ctx, vid=vid) -> str:
            return judge(ctx, verdicts, vid)

        run.__module__ = module          # the registry files a check under its module's package
        run.__name__ = run.__qualname__ = vid.replace(".", "_")
        check(vid, task=task(student_module), name=title.format(f=function),
              files=(student_module,), weight=weight(function))(run)
