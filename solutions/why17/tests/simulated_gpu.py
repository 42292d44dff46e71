"""The GPU sanity checks on a simulated GPU, for the public tests of tasks 1 and 2.

Your bw.py and flops.py run unchanged on a model of an H100 (shared/simgpu), whatever machine you
have, and each GPU sanity check (synchronize before reading the clock, warm up, count a copy's
bytes twice, report GB/s, use a buffer larger than the cache, count 2·n³ FLOPs, pick a
compute-bound n) judges them as the grader does, with the same message: each device setting in a
fresh process of its own, as in the grader. The grader also runs
your code on simulated devices of its own that these tests do not have, so passing here is
necessary, not sufficient: return what you measured. To see the numbers behind a verdict:
``python -m shared.simgpu --device h100 assignments/why17/bw.py assignments/why17/flops.py``.
"""
from functools import lru_cache
from pathlib import Path

import pytest

from shared.lessons.why17.gpu import RUBRIC, VERDICTS, model_reference
from shared.simgpu import processes

HERE = Path(__file__).resolve().parents[1]
#: The simulated device and the seed of its randomized profile, as ``python -m shared.simgpu``.
PROFILE = "h100"
SEED = 17


def checks_of(module: str) -> list[str]:
    """The ids of the checks that judge ``module``'s functions."""
    return [vid for vid, (_check, function) in RUBRIC.ids().items() if RUBRIC.module[function] == module]


@lru_cache(maxsize=None)
def _runner(module: str):
    """The runner of your ``module``: each setting in a fresh process that imports it on that
    setting's device."""
    processes.prepare()
    return processes.ProcessRunner({module: HERE / f"{module}.py"}, model_reference)


def judge(module: str, check: str) -> None:
    """Fail the calling test with the grader's message when ``check`` fails on your ``module``."""
    try:
        verdict = VERDICTS[check](_runner(module), PROFILE, SEED)
    except processes.StudentFailed as exc:      # raised, hung or did not import: one line says which
        pytest.fail(f"{check}: {exc}", pytrace=False)
    if not verdict.passed:
        pytest.fail(f"{check}: {verdict.message}", pytrace=False)
