"""The GPU sanity checks on a simulated GPU, for the public tests of tasks 1 and 2.

Your bw.py and flops.py run unchanged on a model of an H100 (shared/simgpu), whatever machine you
have, and each GPU sanity check (synchronize before reading the clock, warm up, count a copy's
bytes twice, report GB/s, use a buffer larger than the cache, count 2·n³ FLOPs, pick a
compute-bound n) judges them as the grader does, with the same message. The grader also runs
your code on simulated devices of its own that these tests do not have, so passing here is
necessary, not sufficient: return what you measured. To see the numbers behind a verdict:
``python -m shared.simgpu --device h100 assignments/why17/bw.py assignments/why17/flops.py``.
"""
from functools import lru_cache
from pathlib import Path

import pytest

from shared import simgpu
from shared.lessons.why17.gpu import RUBRIC, VERDICTS, model_reference
from shared.simgpu import local

HERE = Path(__file__).resolve().parents[1]
#: The simulated device and the seed of its randomized profile, as ``python -m shared.simgpu``.
PROFILE = "h100"
SEED = 17


def checks_of(module: str) -> list[str]:
    """The ids of the checks that judge ``module``'s functions."""
    return [vid for vid, (_check, function) in RUBRIC.ids().items() if RUBRIC.module[function] == module]


@lru_cache(maxsize=None)
def _runner(module: str):
    """Your ``module`` imported on the simulated device under a name of its own, and its runner."""
    loaded = local.load(HERE / f"{module}.py", simgpu.config(PROFILE), name=f"simulated_{module}")
    return local.LocalRunner({module: loaded}, model_reference)


def judge(module: str, check: str) -> None:
    """Fail the calling test with the grader's message when ``check`` fails on your ``module``."""
    verdict = VERDICTS[check](_runner(module), PROFILE, SEED)
    if not verdict.passed:
        pytest.fail(f"{check}: {verdict.message}", pytrace=False)
