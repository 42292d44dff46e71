"""A lesson's GPU rubric as grader checks: a lesson's check module calls ``register`` with its
verdict table, ``rubric.verdicts(probe.settings, probe.follows)``; each check instance declares
the simulated GPU as its device (autograder/core/registry.py) and is judged on the device seeded
for the submission, the reference beside it."""
from __future__ import annotations

from typing import Callable

from autograder.core.errors import StudentCrashed, StudentTimeout
from autograder.core.registry import SIMULATED_GPU, CheckFailed, Context, check
from shared.simgpu.judging import Diagnosis, Session


class ContextRunner:
    """The judging runner: student calls through ctx.call_traced, the reference's through
    ctx.reference; ``memo`` lives on the context, so the checks of one submission share their calls."""

    def __init__(self, ctx: Context):
        self.ctx = ctx
        self.memo = ctx.gpu_memo

    def student_traced(self, module, function, *args, sim, **kwargs):
        return self.ctx.call_traced(module, function, *args, sim=sim, **kwargs)

    def reference(self, module, function, *args, sim, **kwargs):
        return self.ctx.reference(module, function, *args, sim=sim, **kwargs)

    @staticmethod
    def did_not_return(error: Exception) -> bool:
        """Whether a student call's ``error`` is one of not returning (its time limit, its
        process's death), not an exception the function raised."""
        return isinstance(error, (StudentTimeout, StudentCrashed))


def register(rubric, verdicts: dict, name: str, module: str, *, task: Callable[[str], str],
             title: str, weight: Callable[[str], float] = lambda function: 1.0) -> None:
    """Register check ``name`` of ``rubric`` once per function it judges, on the simulated GPU,
    filed under the lesson's check module ``module``. ``task(student_module)`` gives each instance's task,
    ``title`` its name (``{f}``: the function), ``weight(function)`` its weight in the task. Each
    runs its verdict on the simulated GPU seeded for the submission: its message, or CheckFailed
    with it."""
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
    """The rubric's diagnosis of ``function`` on the simulated GPU seeded for the submission, from
    the calls its GPU checks make (``ctx.gpu_memo``): for a CPU check that owns a slip the GPU
    checks point at, which must charge it wherever the program shows it (one mistake, one charge)."""
    s = Session(rubric, ContextRunner(ctx), ctx.sim_profile, ctx.sim_seed, settings, verdicts)
    s.prefetch(rubric.module[function])
    return s.diagnosis(function)
