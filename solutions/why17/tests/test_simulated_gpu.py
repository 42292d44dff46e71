"""Public tests of tasks 1 and 2 on a simulated GPU: the Break It checks, with the grader's messages.

Your bw.py and flops.py run unchanged on a model of an H100 (shared/simgpu), whatever machine you
have, and each GPU sanity check (synchronize before reading the clock, warm up, count a copy's
bytes twice, report GB/s, use a buffer larger than the cache, count 2·n³ FLOPs, pick a
compute-bound n) judges them as the grader does, with the same message. The grader also runs
your code on simulated devices of its own that these tests do not have, so passing here is
necessary, not sufficient: return what you measured. To see the numbers behind a verdict:
``python -m shared.simgpu --device h100 assignments/why17/bw.py assignments/why17/flops.py``.
Run only these: ``pytest assignments/why17 -k simulated``.
"""
from pathlib import Path

import pytest

from shared import simgpu
from shared.lessons.why17.gpu import RUBRIC, VERDICTS, model_reference
from shared.simgpu import local

HERE = Path(__file__).resolve().parents[1]
#: The simulated device and the seed of its randomized profile, as ``python -m shared.simgpu``.
PROFILE = "h100"
SEED = 17
#: The task of each timing module (course.yml).
TASKS = {"bw": pytest.mark.task1, "flops": pytest.mark.task2}
IDS = RUBRIC.ids()


@pytest.fixture(scope="module")
def runner():
    """Your modules imported on the simulated device, under names of their own."""
    cfg = simgpu.config(PROFILE)
    modules = {m: local.load(HERE / f"{m}.py", cfg, name=f"simulated_{m}") for m in TASKS}
    return local.LocalRunner(modules, model_reference)


@pytest.mark.parametrize("check", [pytest.param(vid, marks=TASKS[RUBRIC.module[function]], id=vid)
                                   for vid, (_check, function) in IDS.items()])
def test_simulated_gpu(runner, check):
    verdict = VERDICTS[check](runner, PROFILE, SEED)
    if not verdict.passed:
        pytest.fail(f"{check}: {verdict.message}", pytrace=False)
