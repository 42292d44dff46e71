"""The hypothesis laws replay the cases hypothesis draws (autograder/lessons/why17/strategies.run_law).

A law's first run in a process goes through hypothesis and, when it holds, keeps the cases it
drew; later runs (the next submissions of a grade-all worker) replay them without hypothesis. A
replayed law that fails goes back through hypothesis, so its shrunk case and message are
hypothesis's own. Every fixture is graded both ways by bench/replay_verdicts.py; these tests pin
the mechanism.
"""
import importlib
import importlib.util
import os
import subprocess
import sys

import pytest
from hypothesis import strategies as st

from autograder.core.errors import StudentTimeout
from autograder.core.registry import CheckFailed
from autograder.lessons.why17 import strategies as S
from tests.helpers.paths import ROOT


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


class Student:
    """A law's body over a student whose answers can change between runs (one submission, then
    the next), so one law, with one key, can hold and then fail."""

    def __init__(self):
        self.seen, self.wrong_from, self.hang_at = [], None, None

    def body(self, n):
        self.seen.append(n)
        if self.hang_at is not None and len(self.seen) == self.hang_at:
            raise StudentTimeout("predict_decode did not return within 3 s")
        if self.wrong_from is not None and n >= self.wrong_from:
            raise CheckFailed(f"n={n} is too big")


def test_a_replayed_law_sees_the_cases_hypothesis_would_give_it():
    strategy = st.tuples(S.model_shapes(), S.gpu_specs())
    first, again = [], []
    S.run_law(strategy, first.append)          # through hypothesis: the cases are kept
    S.run_law(strategy, again.append)          # replayed
    assert first == again == _law_cases(strategy)
    assert len(again) == S.MAX_EXAMPLES


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


def test_a_law_that_fails_on_replay_reports_hypothesis_s_own_shrunk_case():
    strategy = st.integers(0, 10**9)
    student = Student()
    S.run_law(strategy, student.body)          # the previous submission: the law holds
    student.wrong_from = 1000                  # this one is wrong from 1000 up
    with pytest.raises(CheckFailed) as plain:
        S._hypothesis(strategy, student.body, S.MAX_EXAMPLES)
    with pytest.raises(CheckFailed) as replayed:
        S.run_law(strategy, student.body)
    assert str(replayed.value) == str(plain.value) == "n=1000 is too big"


def test_a_hang_on_replay_stops_the_law_at_once_and_is_raised_as_it_is():
    student = Student()
    S.run_law(st.integers(0, 100), student.body)
    student.seen, student.hang_at = [], 3
    with pytest.raises(StudentTimeout, match="within 3 s"):
        S.run_law(st.integers(0, 100), student.body)
    assert len(student.seen) == 3     # no shrinking through a time limit, no second pass through hypothesis


def test_a_law_that_fails_the_first_time_keeps_no_cases():
    student = Student()
    student.wrong_from = 50
    with pytest.raises(CheckFailed):
        S.run_law(st.integers(0, 100), student.body)
    assert S._DRAWN == {}


def test_a_body_that_changes_its_case_does_not_change_the_next_run():
    strategy = st.lists(st.integers(0, 9), min_size=1, max_size=4)

    def spoil(case):
        case.append(99)
    S.run_law(strategy, spoil)
    S.run_law(strategy, spoil)                 # replayed: each case is a fresh copy
    assert list(S._DRAWN.values())[0] == tuple(_law_cases(strategy))


def test_two_strategies_at_one_place_do_not_share_cases():
    def check(strategy):
        seen = []
        S.run_law(strategy, seen.append)   # one body, one line: the key differs by strategy only
        S.run_law(strategy, seen.append)
        return seen
    small, large = check(st.integers(0, 5)), check(st.integers(10**6, 10**7))
    assert all(0 <= n <= 5 for n in small) and all(n >= 10**6 for n in large)


def _write_module(folder, name, literals):
    """A local module whose source holds ``literals``: hypothesis 6.x takes numbers from such
    source ("local constants") unless strategies.strategy_alone turns that off."""
    (folder / f"{name}.py").write_text("VALUES = [" + ", ".join(repr(x) for x in literals) + "]\n")


def test_a_laws_cases_do_not_depend_on_the_modules_the_process_has_loaded(tmp_path, monkeypatch):
    # Many draws per case, so hypothesis's 5% chance per draw of taking a constant comes up.
    strategy = st.lists(st.floats(0.0, 1.0), min_size=40, max_size=40)
    before = _law_cases(strategy)
    monkeypatch.syspath_prepend(str(tmp_path))
    _write_module(tmp_path, "why17_many_literals", [i / 997 for i in range(1, 400)])
    importlib.import_module("why17_many_literals")
    try:
        assert _law_cases(strategy) == before
    finally:
        sys.modules.pop("why17_many_literals", None)


def test_the_local_constants_of_the_process_stay_as_hypothesis_left_them():
    from hypothesis.internal.conjecture import providers

    ours = providers._get_local_constants
    with S.strategy_alone():
        assert len(providers._get_local_constants()) == 0
    assert providers._get_local_constants is ours


def test_loading_the_checks_runs_no_hypothesis_plugin_and_leaves_the_environment_alone():
    if importlib.util.find_spec("trio") is None:
        pytest.skip("trio is not installed (selenium brings it): there is no plugin to skip")
    code = ("import os, sys\nfrom autograder.grading.grade import load_checks\nload_checks()\n"
            "print('trio' in sys.modules, os.environ.get('HYPOTHESIS_NO_PLUGINS'))")
    env = {k: v for k, v in os.environ.items() if k != "HYPOTHESIS_NO_PLUGINS"}
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=300)
    assert done.stdout.split() == ["False", "None"], done.stderr[-2000:]
