"""The grader's side of the GPU sanity checks: verdicts.Runner over the sandboxed Context.

The logic of each check lives in shared/simgpu/verdicts.py (the student command uses it too);
the check modules gpu_<id>.py register one check each and call ``judge``.
"""
from __future__ import annotations

from autograder.core.registry import CheckFailed
from shared.simgpu import verdicts

#: Base profile when the context carries none (course.yml's sim_profile normally).
DEFAULT_PROFILE = "h100-sxm"


class ContextRunner:
    """Student calls through ctx.call / ctx.call_traced, reference calls through ctx.reference."""

    def __init__(self, ctx):
        self.ctx = ctx

    def student(self, module, function, *args, sim, **kwargs):
        return self.ctx.call(module, function, *args, sim=sim, **kwargs)

    def student_traced(self, module, function, *args, sim, **kwargs):
        return self.ctx.call_traced(module, function, *args, sim=sim, **kwargs)

    def reference(self, module, function, *args, sim, **kwargs):
        return self.ctx.reference(module, function, *args, sim=sim, **kwargs)


def judge(ctx, check_id: str) -> str:
    """Run verdict ``check_id`` on the simulated GPU seeded from the submission; message or CheckFailed."""
    profile = getattr(ctx, "sim_profile", None) or DEFAULT_PROFILE
    verdict = verdicts.VERDICTS[check_id](ContextRunner(ctx), profile, ctx.seed)
    if not verdict.passed:
        raise CheckFailed(verdict.message)
    return verdict.message
