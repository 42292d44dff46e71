"""The reference's sandbox is kept from one grading to the next (autograder/grading/reference.py)."""

import pytest

from autograder.core.errors import StudentTimeout
from autograder.grading import reference
from autograder.sandbox.parent import Limits
from tests.helpers.paths import ROOT

SOLUTIONS = ROOT / "solutions" / "why17"


@pytest.fixture(autouse=True)
def nothing_kept():
    reference.close_all()
    yield
    reference.close_all()


def test_the_next_grading_gets_the_same_sandbox_with_nothing_remembered():
    limits = Limits(time_limit_s=7.0)
    first = reference.sandbox(SOLUTIONS, limits)
    first.poisoned["bw.copy_bandwidth"] = StudentTimeout("copy_bandwidth did not return within 3 s")
    first.output_log.append("printed by the reference")
    reference.release(first)
    again = reference.sandbox(SOLUTIONS, limits)
    assert again is first and again.poisoned == {} and again.output_log == []


def test_other_limits_get_another_sandbox_and_a_second_one_is_not_kept():
    one = reference.sandbox(SOLUTIONS, Limits(time_limit_s=7.0))
    other = reference.sandbox(SOLUTIONS, Limits(time_limit_s=9.0))
    same_limits = reference.sandbox(SOLUTIONS, Limits(time_limit_s=7.0))   # while `one` is out
    assert len({id(one), id(other), id(same_limits)}) == 3
    for box in (one, other, same_limits):
        reference.release(box)
    assert len(reference._kept) == 2


def test_after_its_gradings_a_fresh_sandbox_replaces_it():
    limits = Limits(time_limit_s=7.0)
    first = reference.sandbox(SOLUTIONS, limits)
    reference.release(first)
    for _ in range(reference.REUSES - 1):
        reference.release(reference.sandbox(SOLUTIONS, limits))
    fresh = reference.sandbox(SOLUTIONS, limits)
    assert fresh is not first and fresh.served == 1
