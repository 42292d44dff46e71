"""Public tests of task2 (flops.py) on a simulated GPU: the Break It checks, with the grader's messages
(simulated_gpu.py says how). Run only these:
``pytest assignments/why17/tests/test_flops_simulated_gpu.py``.
"""
import flops  # noqa: F401 - a flops.py that does not import stops these tests at collection
import pytest
from simulated_gpu import checks_of, judge

pytestmark = pytest.mark.task2


@pytest.mark.parametrize("check", checks_of("flops"))
def test_simulated_gpu(check):
    judge("flops", check)
