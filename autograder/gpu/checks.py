"""A lesson's GPU rubric as grader checks: a lesson's check module ``register``s its verdict
table (``rubric.verdicts(probe.settings, probe.follows)``); each instance runs on the simulated
GPU seeded for the submission (autograder/core/registry.py), the reference beside it."""
from __future__ import annotations

from typing import Callable

from autograder.core.errors import StudentCrashed, StudentTimeout
from autograder.core.registry import SIMULATED_GPU, CheckFailed, Context, check
from shared.simgpu.judging import Diagnosis, Session


class ContextRunner:
    """The judging runner on a check's context; its ``memo`` is shared by a submission's checks."""

    def __init__(self, ctx: Context):
        self.ctx = ctx
        self.memo = ctx.gpu_memo

    def student_traced(self, module, function, *args, sim, **kwargs):
        return self.ctx.call_traced(module, function, *args, sim=sim, **kwargs)

    def reference(self, module, function, *args, sim, **kwargs):
        return self.ctx.reference(module, function, *args, sim=sim, **kwargs)

    @staticmethod
    def did_not_return(error: Exception) -> bool:
        """Whether a student call's ``error`` is its time limit or its process's death."""
        return isinstance(error, (StudentTimeout, StudentCrashed))


def register(rubric, verdicts: dict, name: str, module: str, *, task: Callable[[str], str],
             title: str, weight: Callable[[str], float] = lambda function: 1.0) -> None:
    """Register check ``name`` once per function it judges, filed under the lesson's ``module``:
    ``task(student_module)`` its task, ``title`` its name (``{f}``: the function), ``weight``
    its weight. Each returns its verdict's message, or raises CheckFailed with it."""
    for function in rubric.judges[name]:
        vid = rubric.check_id(name, function)
        student_module = rubric.module[function]

        def run(ctx: Context, vid=vid) -> str:
            verdict = verdicts[vid](ContextRunner(ctx), ctx.sim_profile, ctx.sim_seed)
            if not verdict.passed:
                raise CheckFailed(verdict.message)
            return verdict.message

        run.__name__ = run.__qualname__ = vid.replace(".", "_")
        check(vid, task=task(student_module), name=title.format(f=function), files=(student_module,),
              weight=weight(function), device=SIMULATED_GPU, module=module)(run)


def slip(ctx: Context, rubric, verdicts: dict, settings, function: str) -> Diagnosis | None:
    """The rubric's diagnosis of ``function`` from the GPU checks' calls, for a CPU check that owns
    a slip the GPU checks point at (one mistake, one charge)."""
    s = Session(rubric, ContextRunner(ctx), ctx.sim_profile, ctx.sim_seed, settings, verdicts)
    s.prefetch(rubric.module[function])
    return s.diagnosis(function)
