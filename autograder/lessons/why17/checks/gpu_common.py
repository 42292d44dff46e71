"""The grader's side of the GPU sanity checks: the lesson's rubric, behind the hidden probe,
run through the sandboxed Context.

The logic of each check lives in shared/lessons/why17/gpu/ (students run it too, without the
probe); here every verdict first passes the probe's gate on settings drawn from the secret seed
(autograder/gpu/probe.py). Each module gpu_<check>.py calls ``register`` once: one registered
check per timing function the check judges (``RUBRIC.judges``), with id ``<check>`` for the
lesson's own function and ``<check>.<function>`` for the others, so results.json carries one
test per function.
"""
from __future__ import annotations

import sys

from autograder.core.registry import CheckFailed, check
from autograder.gpu import probe
from shared.lessons.why17.gpu import RUBRIC

#: Base profile when the context carries none (course.yml's sim_profile normally).
DEFAULT_PROFILE = "h100-sxm"
#: The task of each student module.
TASKS = {"bw": "task1", "flops": "task2"}
#: Weight of a check on a function that usually calls another timing function (bandwidth_sweep,
#: measured_bandwidth, measured_peak_tflops; points split by weight in a task): the functions
#: that do the timing weigh most.
OTHER_FUNCTION_WEIGHT = 0.5
#: What each check asks of a function, for the test's title.
TITLES = {
    "sync_present": "{f} waits for the device before reading the clock",
    "warmup_present": "{f} warms up before timing",
    "bytes_counted_twice": "{f} counts a copy as read + write",
    "units_gb_per_s": "{f} reports GB/s (1e9 bytes/s)",
    "buffer_exceeds_cache": "{f} measures main memory, not the cache",
    "flops_counted_2n3": "{f} counts 2·n³ FLOPs and reports TFLOP/s",
    "within_peak": "{f} is compute-bound and within the device's peak",
}
#: Every check instance by id, behind the probe: ``VERDICTS[id](runner, profile, seed)``.
VERDICTS = RUBRIC.verdicts(probe.settings, probe.follows)


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

    def expect(self, module, settings):
        expect = getattr(self.ctx, "expect_settings", None)
        if expect is not None:
            expect(module, settings)


def judge(ctx, check_id: str) -> str:
    """Run verdict ``check_id`` on the simulated GPU seeded for the submission; message or CheckFailed."""
    profile = getattr(ctx, "sim_profile", None) or DEFAULT_PROFILE
    seed = getattr(ctx, "sim_seed", None)
    verdict = VERDICTS[check_id](ContextRunner(ctx), profile, ctx.seed if seed is None else seed)
    if not verdict.passed:
        raise CheckFailed(verdict.message)
    return verdict.message


def register(name: str) -> None:
    """Register check ``name`` once per function it judges, in the calling gpu_<name> module."""
    module = sys._getframe(1).f_globals["__name__"]
    for function in RUBRIC.judges[name]:
        vid = RUBRIC.check_id(name, function)
        student_module = RUBRIC.module[function]

        def run(ctx, vid=vid) -> str:
            return judge(ctx, vid)

        run.__module__ = module          # the registry files a check under its module's package
        run.__name__ = run.__qualname__ = vid.replace(".", "_")
        weight = OTHER_FUNCTION_WEIGHT if function in RUBRIC.base else 1.0
        check(vid, task=TASKS[student_module], name=TITLES[name].format(f=function),
              files=(student_module,), weight=weight)(run)
