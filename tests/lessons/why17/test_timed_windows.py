"""The windows of a timed call judged in Python when the call read the clock a few times, with
numpy when many (autograder/lessons/why17/checks/timed.py): the same figures both ways, and a
grading whose calls read the clock a few times never imports numpy in the grader."""
from __future__ import annotations

import math
import subprocess
import sys

from hypothesis import given
from hypothesis import strategies as st

from autograder.lessons.why17.checks import timed
from tests.helpers.paths import ROOT

_times = st.floats(min_value=0.0, max_value=10.0, allow_nan=False)
_work = st.one_of(st.lists(st.integers(0, 2**45), min_size=40, max_size=40),
                  st.lists(st.sampled_from([0.0, 1.0, 3e8, 7.5e11, 2]), min_size=40, max_size=40))


@given(st.lists(st.tuples(_times, _times), min_size=0, max_size=12), _work, st.booleans())
def test_both_ways_give_the_same_figures(runs, work, nan):
    runs = sorted(runs)
    first = [a for a, _b in runs]
    last = [a + b * 1e-6 for a, b in runs]
    if nan and first:
        first[len(first) // 2] = math.nan
    parts = work[:max(len(runs) - 1, 0)]
    python, numpy = timed._windows(first, last, parts), timed._windows_numpy(first, last, parts)
    assert all(x == y or (math.isnan(x) and math.isnan(y)) for x, y in zip(python, numpy)), (python, numpy)


FEW = """
import sys
from autograder.lessons.why17.checks import timed
record = {"trace": {"readings": [[0.0, 0.0, 1], [0.5, 0.5, 1], [1.5, 1.5, 1]],
                    "stretches": [[], [[0, 2]], [[0, 4]]],
                    "written": [[], [[0, 8]], [[0, 8]]], "read": [[], [[0, 8]], [[0, 8]]]}}
call = timed.Timed({**record, "ops": [{"name": "copy"}]})
lo, hi = call.factors(4.0, lambda op: 1)
assert lo <= 1.0 <= hi, (lo, hi)
print("numpy" in sys.modules)
"""


def test_a_call_that_read_the_clock_a_few_times_is_judged_without_numpy():
    done = subprocess.run([sys.executable, "-c", FEW], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "False"
