"""The hypothesis laws replay the cases hypothesis draws (autograder/lessons/why17/strategies.run_law).

A law that holds costs no hypothesis work after its first run in a process; a law that fails is
run through hypothesis, so its shrunk case and message are hypothesis's own. Every fixture is
graded both ways by bench/replay_verdicts.py; these tests pin the mechanism.
"""
import pytest
from hypothesis import strategies as st

from autograder.core.errors import StudentTimeout
from autograder.core.registry import CheckFailed
from autograder.lessons.why17 import strategies as S


@pytest.fixture(autouse=True)
def fresh_cache(monkeypatch):
    monkeypatch.setattr(S, "_DRAWN", {})


def _law_cases(strategy, max_examples=S.MAX_EXAMPLES):
    """The cases plain hypothesis passes to a body that does work and passes."""
    seen = []

    def body(case):
        seen.append(case)
        sum(range(1000))        # work, as a call to the student's code would be
    S._hypothesis(strategy, body, max_examples)
    return seen


def test_a_law_that_holds_sees_the_cases_hypothesis_would_give_it():
    strategy = st.tuples(S.model_shapes(), S.gpu_specs())
    seen = []
    S.run_law(strategy, seen.append)
    assert seen == _law_cases(strategy)
    assert len(seen) == S.MAX_EXAMPLES


def test_a_second_run_of_a_law_that_holds_asks_hypothesis_nothing(monkeypatch):
    strategy = S.decode_configs()
    first = []
    S.run_law(strategy, first.append)

    def no_hypothesis(*args):
        raise AssertionError("hypothesis ran again for a law whose cases are known")
    monkeypatch.setattr(S, "_hypothesis", no_hypothesis)
    again = []
    S.run_law(strategy, again.append)
    assert again == first


def test_a_failing_law_reports_hypothesis_s_own_shrunk_case():
    def body(n):
        if n >= 1000:
            raise CheckFailed(f"n={n} is too big")
    strategy = st.integers(0, 10**9)
    with pytest.raises(CheckFailed) as plain:
        S._hypothesis(strategy, body, S.MAX_EXAMPLES)
    with pytest.raises(CheckFailed) as replayed:
        S.run_law(strategy, body)
    assert str(replayed.value) == str(plain.value) == "n=1000 is too big"


def test_a_hang_stops_the_law_at_once_and_is_raised_as_it_is():
    calls = []

    def body(n):
        calls.append(n)
        if len(calls) == 3:
            raise StudentTimeout("predict_decode did not return within 3 s")
    with pytest.raises(StudentTimeout, match="within 3 s"):
        S.run_law(st.integers(0, 100), body)
    assert len(calls) == 3      # no shrinking through a time limit, no second pass through hypothesis


def test_a_body_that_changes_its_case_does_not_change_the_next_run():
    strategy = st.lists(st.integers(0, 9), min_size=1, max_size=4)
    S.run_law(strategy, lambda case: case.append(99))
    seen = []
    S.run_law(strategy, seen.append)
    assert seen == _law_cases(strategy) and all(99 not in case for case in seen)


def test_two_strategies_at_one_place_do_not_share_cases():
    def check(strategy):
        seen = []
        S.run_law(strategy, seen.append)   # one body, one line: the key differs by strategy only
        return seen
    small, large = check(st.integers(0, 5)), check(st.integers(10**6, 10**7))
    assert all(0 <= n <= 5 for n in small) and all(n >= 10**6 for n in large)
