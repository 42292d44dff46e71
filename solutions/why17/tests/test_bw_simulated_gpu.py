"""Public tests of task1 (bw.py) on a simulated GPU: the Break It checks, with the grader's messages
(simulated_gpu.py says how). Run only these:
``pytest assignments/why17/tests/test_bw_simulated_gpu.py``.
"""
import bw  # noqa: F401 - a bw.py that does not import stops these tests at collection
import pytest
from simulated_gpu import checks_of, judge

pytestmark = pytest.mark.task1


@pytest.mark.parametrize("check", checks_of("bw"))
def test_simulated_gpu(check):
    judge("bw", check)
